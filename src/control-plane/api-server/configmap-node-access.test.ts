// The node rule for ConfigMaps through the API app on a memory store: a node reads one ConfigMap at a time, and only those its own pods use.
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { MemoryStore } from '../../core/store/memory-store.js';
import { ADMIN_USER, TokenAuthenticator } from './auth.js';
import { createApiApp, ensureSystemNamespaces, type ApiApp } from './server.js';

const ADMIN = 'admin-token';
const NODE = 'node-token';
const NS = '/api/v1/namespaces/default';

describe('node access to ConfigMaps', () => {
  let api: ApiApp;
  const call = async (method: string, path: string, body?: unknown, token = ADMIN) => {
    const res = await api.app.request(path, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as { message?: string } };
  };
  const pod = (name: string, nodeName: string, spec: object) => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name },
    spec: { nodeName, containers: [{ name: 'c', image: 'busybox' }], ...spec },
  });

  before(async () => {
    const auth = new TokenAuthenticator();
    auth.add(ADMIN, ADMIN_USER);
    auth.add(NODE, { name: 'system:node:n1', groups: ['system:nodes'] });
    api = createApiApp({ store: new MemoryStore(), authenticator: auth });
    await ensureSystemNamespaces(api.service);
    for (const name of ['by-env', 'by-volume', 'by-projection', 'elsewhere', 'unused']) {
      const res = await call('POST', `${NS}/configmaps`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { k: 'v' } });
      assert.equal(res.status, 201, JSON.stringify(res.body));
    }
    for (const p of [
      pod('env', 'n1', { containers: [{ name: 'c', image: 'busybox', envFrom: [{ configMapRef: { name: 'by-env' } }] }] }),
      pod('vol', 'n1', { volumes: [{ name: 'v', configMap: { name: 'by-volume' } }] }),
      pod('proj', 'n1', { volumes: [{ name: 'v', projected: { sources: [{ configMap: { name: 'by-projection' } }] } }] }),
      pod('other', 'n2', { volumes: [{ name: 'v', configMap: { name: 'elsewhere' } }] }),
    ]) {
      const res = await call('POST', `${NS}/pods`, p);
      assert.equal(res.status, 201, JSON.stringify(res.body));
    }
  });

  it('lets a node get the ConfigMaps its pods use, by env, volume or projection', async () => {
    for (const name of ['by-env', 'by-volume', 'by-projection'])
      assert.equal((await call('GET', `${NS}/configmaps/${name}`, undefined, NODE)).status, 200, name);
  });

  it("refuses those of another node's pods, unused ones, and lists", async () => {
    for (const path of [`${NS}/configmaps/elsewhere`, `${NS}/configmaps/unused`, `${NS}/configmaps`]) {
      const res = await call('GET', path, undefined, NODE);
      assert.equal(res.status, 403, path);
      assert.match(res.body.message ?? '', /a node may only read ConfigMaps that pods bound to it use/);
    }
  });
});
