// The Client contract against both clients of one API: in-process over the object service, and over HTTP through the API server.
import { ApiClient } from '../../core/client/api-client.js';
import { runClientContract } from '../../core/client/client-contract.js';
import { MemoryStore } from '../../core/store/memory-store.js';
import { anyOf, TokenAuthenticator, ADMIN_USER } from './auth.js';
import { LocalClient } from './local-client.js';
import { ObjectService } from './object-service.js';
import { ensureSystemNamespaces, startApiServer } from './server.js';

runClientContract('LocalClient over the object service', async () => {
  const service = new ObjectService({ store: new MemoryStore() });
  await ensureSystemNamespaces(service);
  return { client: new LocalClient(service.forClient('contract')), cleanup: async () => {} };
});

runClientContract('ApiClient over HTTP', async () => {
  const admins = new TokenAuthenticator();
  admins.add('contract-token', ADMIN_USER);
  const stop = new AbortController();
  const api = await startApiServer({ store: new MemoryStore(), authenticator: anyOf(admins), address: '127.0.0.1', port: 0, signal: stop.signal });
  const client = new ApiClient({ server: api.url, token: 'contract-token' });
  return {
    client,
    async cleanup() {
      client.close();
      stop.abort();
      await api.closed;
    },
  };
});
