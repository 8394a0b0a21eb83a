// The Store contract on the etcd store, against a real etcd.
import { runStoreContract } from '../src/core/store/store-contract.js';
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
