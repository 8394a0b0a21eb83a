// The Store contract on the in-memory store.
import { runStoreContract } from './store-contract.js';
import { MemoryStore } from './memory-store.js';

runStoreContract('memory', async () => {
  const store = new MemoryStore();
  return { store, cleanup: () => store.close() };
});
