// The Store contract on the etcd store and on the watch cache over it, against a real etcd.
import { runStoreContract } from '../src/core/store/store-contract.js';
import { CachedStore } from '../src/core/store/cached-store.js';
import { EtcdStore } from '../src/core/store/etcd-store.js';
import { startEtcd } from './helpers/etcd.js';

runStoreContract('etcd', async () => {
  const etcd = await startEtcd();
  const store = new EtcdStore({ endpoints: [etcd.endpoint] });
  return {
    store,
    async cleanup() {
      await store.close();
      await etcd.stop();
    },
  };
});

runStoreContract('cached(etcd)', async () => {
  const etcd = await startEtcd();
  // The contract's keys live under /contract/: cache the whole key space.
  const store = await CachedStore.open(new EtcdStore({ endpoints: [etcd.endpoint] }), { prefix: '/' });
  return {
    store,
    async cleanup() {
      await store.close();
      await etcd.stop();
    },
  };
});
