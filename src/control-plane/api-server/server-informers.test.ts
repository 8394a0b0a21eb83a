// startApiServer with the process's shared informers: creates check namespaces in the factory's Namespace informer, and serve before it has listed.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { namespaceKind } from '../../core/api/namespace.js';
import { InformerFactory } from '../../core/controller/informer-factory.js';
import type { Status } from '../../core/errors.js';
import { MemoryStore } from '../../core/store/memory-store.js';
import { waitFor } from '../../core/wait-for.js';
import { ADMIN_USER, TokenAuthenticator } from './auth.js';
import { LocalClient } from './local-client.js';
import { ObjectService } from './object-service.js';
import { startApiServer } from './server.js';

const TOKEN = 'informers-token';

function pod(name: string) {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { containers: [{ name: 'main', image: 'busybox:1.36' }] } };
}

describe('API server on shared informers', () => {
  it("uses the factory's Namespace informer, and admits creates before the factory starts", async () => {
    const store = new MemoryStore();
    const service = new ObjectService({ store });
    const informers = new InformerFactory({ client: new LocalClient(service.forClient('shared-informers')) });
    const authenticator = new TokenAuthenticator();
    authenticator.add(TOKEN, ADMIN_USER);
    const stop = new AbortController();
    const api = await startApiServer({ store, service, authenticator, address: '127.0.0.1', port: 0, signal: stop.signal, informers });
    let informing: Promise<void> | undefined;
    try {
      assert.equal(informers.size, 1, 'the server asked the factory for its Namespace informer');
      const call = async (method: string, path: string, body?: unknown) => {
        const res = await fetch(`${api.url}${path}`, {
          method,
          headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
        return { status: res.status, body: (await res.json()) as Status };
      };

      // Not started yet (the master starts it with its controllers): namespaces are read from the store.
      assert.equal((await call('POST', '/api/v1/namespaces/default/pods', pod('early'))).status, 201);
      assert.equal((await call('POST', '/api/v1/namespaces/ghost/pods', pod('nowhere'))).status, 404);

      informing = informers.start(stop.signal);
      await informers.whenSynced();
      await call('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'doomed' } });
      assert.equal((await call('DELETE', '/api/v1/namespaces/doomed')).status, 200);
      const namespaces = informers.informer(namespaceKind);
      await waitFor(() => namespaces.get('doomed')?.metadata.deletionTimestamp, {
        timeoutMs: 5_000,
        description: 'the shared informer sees the namespace terminating',
      });
      const refused = await call('POST', '/api/v1/namespaces/doomed/pods', pod('late'));
      assert.equal(refused.status, 403);
      assert.match(refused.body.message, /being terminated/);
    } finally {
      stop.abort();
      await Promise.all([api.closed, informing]);
    }
  });
});
