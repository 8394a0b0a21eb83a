// API server behaviour through Hono's app.request(): every verb, selectors, watch, and error codes.
import { describe, it, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import type { ObjectMeta } from '../../core/api/meta.js';
import type { WatchEvent } from '../../core/client/client.js';
import type { Status, StatusCause } from '../../core/errors.js';
import { MemoryStore } from '../../core/store/memory-store.js';
import { TokenAuthenticator, ADMIN_USER } from './auth.js';
import { createApiApp, ensureSystemNamespaces, type ApiApp } from './server.js';

const TOKEN = 'test-token';
const PODS = '/api/v1/namespaces/default/pods';

function pod(name: string, labels: Record<string, string> = {}, extra: Record<string, unknown> = {}) {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, labels },
    spec: { containers: [{ name: 'main', image: 'busybox:1.36' }], ...extra },
  };
}

/** The parts of the API's answers these tests read: an object (its server-set metadata filled in), a list, a Status or a discovery document. */
interface Answer {
  kind: string;
  metadata: ObjectMeta & { name: string; uid: string; creationTimestamp: string; resourceVersion: string };
  spec: Record<string, unknown>;
  status: { phase?: string };
  items: Answer[];
  reason: string;
  message: string;
  details: { causes: StatusCause[] };
  resources: { name: string; kind: string; group?: string; version?: string; verbs: string[]; shortNames?: string[] }[];
  groups: { name: string }[];
}

interface Harness {
  api: ApiApp;
  store: MemoryStore;
  call(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<{ status: number; body: Answer }>;
}

async function harness(options: { bookmarkIntervalMs?: number } = {}): Promise<Harness> {
  const store = new MemoryStore();
  const authenticator = new TokenAuthenticator();
  authenticator.add(TOKEN, ADMIN_USER);
  const api = createApiApp({ store, authenticator, bookmarkIntervalMs: options.bookmarkIntervalMs });
  await ensureSystemNamespaces(api.service);
  return {
    api,
    store,
    async call(method, path, body, headers = {}) {
      const res = await api.app.request(path, {
        method,
        headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json', ...headers },
        body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
      });
      const text = await res.text();
      return { status: res.status, body: text ? JSON.parse(text) : undefined };
    },
  };
}

/** Reads a watch response line by line; `take(n)` resolves with the next n events. */
function watchReader(res: Response) {
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  const queued: WatchEvent[] = [];
  return {
    async take(n: number): Promise<WatchEvent[]> {
      while (queued.length < n) {
        const { done, value } = await reader.read();
        if (done) break;
        buffer += decoder.decode(value, { stream: true });
        for (let i = buffer.indexOf('\n'); i >= 0; i = buffer.indexOf('\n')) {
          queued.push(JSON.parse(buffer.slice(0, i)));
          buffer = buffer.slice(i + 1);
        }
      }
      return queued.splice(0, n);
    },
    async close() {
      await reader.cancel();
    },
  };
}

async function openWatch(h: Harness, path: string): Promise<Response> {
  return h.api.app.request(path, { headers: { authorization: `Bearer ${TOKEN}` } });
}

describe('API server', () => {
  let h: Harness;
  beforeEach(async () => {
    h = await harness();
  });

  it('answers 401 without a valid token, and health endpoints without one', async () => {
    for (const headers of [{}, { authorization: 'Bearer wrong' }, { authorization: 'Basic abc' }] as Record<string, string>[]) {
      const res = await h.api.app.request(PODS, { headers });
      assert.equal(res.status, 401);
      const body = (await res.json()) as Status;
      assert.equal(body.kind, 'Status');
      assert.equal(body.reason, 'Unauthorized');
    }
    for (const path of ['/healthz', '/readyz', '/livez', '/version']) {
      assert.equal((await h.api.app.request(path)).status, 200, path);
    }
  });

  it('creates with server-set fields and reads back the same object', async () => {
    const created = await h.call('POST', PODS, pod('web'));
    assert.equal(created.status, 201);
    const meta = created.body.metadata;
    assert.match(meta.uid, /^[0-9a-f-]{36}$/);
    assert.match(meta.creationTimestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    assert.equal(meta.generation, 1);
    assert.equal(meta.namespace, 'default');
    assert.ok(Number(meta.resourceVersion) > 0);
    const got = await h.call('GET', `${PODS}/web`);
    assert.equal(got.status, 200);
    assert.deepEqual(got.body, created.body);
    const list = await h.call('GET', PODS);
    assert.equal(list.body.kind, 'PodList');
    assert.equal(list.body.items.length, 1);
    assert.ok(Number(list.body.metadata.resourceVersion) >= Number(meta.resourceVersion));
  });

  it('ignores client-supplied uid and status on create, and supports generateName', async () => {
    const body = { ...pod('x'), metadata: { generateName: 'web-' }, status: { phase: 'Running' } };
    const created = await h.call('POST', PODS, body);
    assert.equal(created.status, 201);
    assert.match(created.body.metadata.name, /^web-[a-z0-9]{5}$/);
    assert.notEqual(created.body.status?.phase, 'Running');
  });

  it('answers 409 AlreadyExists for a duplicate name', async () => {
    await h.call('POST', PODS, pod('web'));
    const dup = await h.call('POST', PODS, pod('web'));
    assert.equal(dup.status, 409);
    assert.equal(dup.body.reason, 'AlreadyExists');
    assert.equal(dup.body.message, 'pods "web" already exists');
  });

  it('answers 404 for missing objects, namespaces and resources', async () => {
    const missing = await h.call('GET', `${PODS}/nope`);
    assert.equal(missing.status, 404);
    assert.equal(missing.body.message, 'pods "nope" not found');
    const noNs = await h.call('POST', '/api/v1/namespaces/ghost/pods', pod('a'));
    assert.equal(noNs.status, 404);
    assert.equal(noNs.body.message, 'namespaces "ghost" not found');
    assert.equal((await h.call('GET', '/api/v1/widgets')).status, 404);
    assert.equal((await h.call('DELETE', `${PODS}/nope`)).status, 404);
    assert.equal((await h.call('GET', '/nothing/here')).status, 404);
  });

  it('answers 422 with field causes for invalid objects and writes nothing', async () => {
    const before = await h.store.currentRevision();
    const bad = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'Bad_Name' }, spec: { containers: [{ name: 'c' }] } };
    const res = await h.call('POST', PODS, bad);
    assert.equal(res.status, 422);
    assert.equal(res.body.reason, 'Invalid');
    const fields = res.body.details.causes.map((c) => c.field);
    assert.ok(fields.includes('metadata.name'), JSON.stringify(fields));
    assert.ok(fields.includes('spec.containers[0].image'), JSON.stringify(fields));
    assert.equal(await h.store.currentRevision(), before);
  });

  it('replaces with optimistic concurrency: 409 on a stale resourceVersion', async () => {
    const created = (await h.call('POST', PODS, pod('web'))).body;
    const changed = { ...created, spec: { ...created.spec, containers: [{ name: 'main', image: 'busybox:1.37' }] } };
    const ok = await h.call('PUT', `${PODS}/web`, changed);
    assert.equal(ok.status, 200);
    assert.equal(ok.body.metadata.generation, 2);
    assert.notEqual(ok.body.metadata.resourceVersion, created.metadata.resourceVersion);
    const stale = await h.call('PUT', `${PODS}/web`, changed);
    assert.equal(stale.status, 409);
    assert.equal(stale.body.reason, 'Conflict');
    assert.match(stale.body.message, /^Operation cannot be fulfilled on pods "web": the object has been modified/);
  });

  it('keeps status on spec writes and changes only status through /status', async () => {
    const created = (await h.call('POST', PODS, pod('web'))).body;
    const st = await h.call('PUT', `${PODS}/web/status`, {
      ...created,
      metadata: { ...created.metadata, labels: { sneaky: 'yes' } },
      status: { phase: 'Running', podIP: '10.244.1.5' },
    });
    assert.equal(st.status, 200);
    assert.equal(st.body.status.phase, 'Running');
    assert.deepEqual(st.body.metadata.labels, {}, 'status writes must not change metadata');
    assert.equal(st.body.metadata.generation, 1);
    const spec = await h.call('PUT', `${PODS}/web`, { ...st.body, status: { phase: 'Failed' } });
    assert.equal(spec.status, 200);
    assert.equal(spec.body.status.phase, 'Running', 'spec writes ignore status');
  });

  it('merge-patches labels without bumping generation, and skips no-op writes', async () => {
    const created = (await h.call('POST', PODS, pod('web', { app: 'web' }))).body;
    const patched = await h.call(
      'PATCH',
      `${PODS}/web`,
      { metadata: { labels: { tier: 'front', app: null } } },
      { 'content-type': 'application/merge-patch+json' },
    );
    assert.equal(patched.status, 200);
    assert.deepEqual(patched.body.metadata.labels, { tier: 'front' });
    assert.equal(patched.body.metadata.generation, 1);
    const again = await h.call('PATCH', `${PODS}/web`, { metadata: { labels: { tier: 'front' } } }, { 'content-type': 'application/merge-patch+json' });
    assert.equal(again.body.metadata.resourceVersion, patched.body.metadata.resourceVersion);
    assert.notEqual(patched.body.metadata.resourceVersion, created.metadata.resourceVersion);
  });

  it('deletes, honouring finalizers and preconditions', async () => {
    await h.call('POST', PODS, { ...pod('keep'), metadata: { name: 'keep', finalizers: ['example.com/hold'] } });
    const del = await h.call('DELETE', `${PODS}/keep`);
    assert.equal(del.status, 200);
    assert.ok(del.body.metadata.deletionTimestamp);
    assert.equal((await h.call('GET', `${PODS}/keep`)).status, 200, 'still there while a finalizer is pending');
    const rel = await h.call('PATCH', `${PODS}/keep`, { metadata: { finalizers: null } }, { 'content-type': 'application/merge-patch+json' });
    assert.equal(rel.status, 200);
    assert.equal((await h.call('GET', `${PODS}/keep`)).status, 404, 'gone once the last finalizer is removed');

    const created = (await h.call('POST', PODS, pod('web'))).body;
    const wrong = await h.call('DELETE', `${PODS}/web`, { preconditions: { uid: 'not-it' } });
    assert.equal(wrong.status, 409);
    const right = await h.call('DELETE', `${PODS}/web`, { preconditions: { uid: created.metadata.uid } });
    assert.equal(right.status, 200);
    assert.equal((await h.call('GET', `${PODS}/web`)).status, 404);
  });

  it("puts the garbage collector's finalizer on an owner for Foreground and Orphan (query, body or orphanDependents)", async () => {
    const RS = '/apis/apps/v1/namespaces/default/replicasets';
    const rs = (name: string) => ({
      apiVersion: 'apps/v1',
      kind: 'ReplicaSet',
      metadata: { name },
      spec: {
        selector: { matchLabels: { app: name } },
        template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'busybox' }] } },
      },
    });
    for (const name of ['fg', 'or', 'od', 'bg']) assert.equal((await h.call('POST', RS, rs(name))).status, 201);
    const fg = await h.call('DELETE', `${RS}/fg?propagationPolicy=Foreground`);
    assert.deepEqual([fg.status, fg.body.metadata.finalizers, Boolean(fg.body.metadata.deletionTimestamp)], [200, ['foregroundDeletion'], true]);
    assert.deepEqual((await h.call('DELETE', `${RS}/or`, { propagationPolicy: 'Orphan' })).body.metadata.finalizers, ['orphan']);
    assert.deepEqual((await h.call('DELETE', `${RS}/od?orphanDependents=true`)).body.metadata.finalizers, ['orphan']);
    // A later Background delete drops the collector's finalizer, and with none left the object goes.
    assert.equal((await h.call('DELETE', `${RS}/od`, { propagationPolicy: 'Background' })).status, 200);
    assert.equal((await h.call('GET', `${RS}/od`)).status, 404);
    assert.equal((await h.call('DELETE', `${RS}/bg`)).status, 200);
    assert.equal((await h.call('GET', `${RS}/bg`)).status, 404);
    assert.equal((await h.call('DELETE', `${RS}/fg?orphanDependents=maybe`)).status, 400);
    assert.equal((await h.call('DELETE', `${RS}/fg?orphanDependents=true&propagationPolicy=Orphan`)).status, 400);
    // Kinds that own nothing ignore the policy: an unbound pod goes at once.
    await h.call('POST', PODS, pod('lone'));
    assert.equal((await h.call('DELETE', `${PODS}/lone?propagationPolicy=Foreground`)).status, 200);
    assert.equal((await h.call('GET', `${PODS}/lone`)).status, 404);
  });

  it('filters lists by label and field selectors', async () => {
    await h.call('POST', PODS, pod('a', { app: 'web', tier: 'front' }));
    await h.call('POST', PODS, pod('b', { app: 'web', tier: 'back' }));
    await h.call('POST', PODS, pod('c', { app: 'db' }, { nodeName: 'n1' }));
    const names = async (q: string) => (await h.call('GET', `${PODS}?${q}`)).body.items.map((p) => p.metadata.name);
    assert.deepEqual(await names('labelSelector=app%3Dweb'), ['a', 'b']);
    assert.deepEqual(await names('labelSelector=app%3Dweb,tier!%3Dfront'), ['b']);
    assert.deepEqual(await names(`labelSelector=${encodeURIComponent('tier in (front,back)')}`), ['a', 'b']);
    assert.deepEqual(await names(`labelSelector=${encodeURIComponent('!tier')}`), ['c']);
    assert.deepEqual(await names('fieldSelector=spec.nodeName%3Dn1'), ['c']);
    assert.deepEqual(await names('fieldSelector=metadata.name%3Da'), ['a']);
    assert.deepEqual(await names('fieldSelector=metadata.name!%3Da'), ['b', 'c']);
    const all = await h.call('GET', '/api/v1/pods?fieldSelector=metadata.namespace%3Ddefault');
    assert.equal(all.body.items.length, 3);
    assert.equal((await h.call('GET', `${PODS}?fieldSelector=spec.image%3Dx`)).status, 400);
    assert.equal((await h.call('GET', `${PODS}?labelSelector=${encodeURIComponent('a in (')}`)).status, 400);
  });

  it('watches from a revision: later events, in order, with no gaps', async () => {
    const a = (await h.call('POST', PODS, pod('a'))).body;
    await h.call('PATCH', `${PODS}/a`, { metadata: { labels: { v: '2' } } }, { 'content-type': 'application/merge-patch+json' });
    await h.call('POST', PODS, pod('b'));
    await h.call('DELETE', `${PODS}/a`);
    // Resume from just after the create of a: the patch, the create of b and the delete follow.
    const w = watchReader(await openWatch(h, `${PODS}?watch=1&resourceVersion=${a.metadata.resourceVersion}`));
    const events = await w.take(3);
    assert.deepEqual(
      events.map((e) => `${e.type} ${e.object.metadata.name}`),
      ['MODIFIED a', 'ADDED b', 'DELETED a'],
    );
    const rvs = events.map((e) => Number(e.object.metadata.resourceVersion));
    assert.deepEqual(
      [...rvs].sort((x, y) => x - y),
      rvs,
      'revisions must increase',
    );
    await h.call('POST', PODS, pod('c'));
    const [live] = await w.take(1);
    assert.equal(live.type, 'ADDED');
    assert.equal(live.object.metadata.name, 'c');
    await w.close();
  });

  it('watch without a revision starts with the current objects', async () => {
    await h.call('POST', PODS, pod('a', { app: 'web' }));
    await h.call('POST', PODS, pod('b', { app: 'db' }));
    const w = watchReader(await openWatch(h, `${PODS}?watch=true&labelSelector=app%3Dweb`));
    const [first] = await w.take(1);
    assert.equal(first.type, 'ADDED');
    assert.equal(first.object.metadata.name, 'a');
    // b moves into the selection, a moves out.
    await h.call('PATCH', `${PODS}/b`, { metadata: { labels: { app: 'web' } } }, { 'content-type': 'application/merge-patch+json' });
    await h.call('PATCH', `${PODS}/a`, { metadata: { labels: { app: 'db' } } }, { 'content-type': 'application/merge-patch+json' });
    const next = await w.take(2);
    assert.deepEqual(
      next.map((e) => `${e.type} ${e.object.metadata.name}`),
      ['ADDED b', 'DELETED a'],
    );
    await w.close();
  });

  it('answers 410 Gone for a watch from a compacted revision', async () => {
    const a = (await h.call('POST', PODS, pod('a'))).body;
    await h.call('POST', PODS, pod('b'));
    await h.call('POST', PODS, pod('c'));
    await h.store.compact(await h.store.currentRevision());
    const res = await openWatch(h, `${PODS}?watch=1&resourceVersion=${a.metadata.resourceVersion}`);
    assert.equal(res.status, 410);
    const body = (await res.json()) as Status;
    assert.equal(body.kind, 'Status');
    assert.equal(body.code, 410);
  });

  it('sends BOOKMARK events on idle watches', async () => {
    const fast = await harness({ bookmarkIntervalMs: 20 });
    const created = (await fast.call('POST', PODS, pod('a'))).body;
    const w = watchReader(await openWatch(fast, `${PODS}?watch=1&resourceVersion=${created.metadata.resourceVersion}`));
    const [bm] = await w.take(1);
    assert.equal(bm.type, 'BOOKMARK');
    assert.equal(bm.object.metadata.resourceVersion, created.metadata.resourceVersion);
    await w.close();
  });

  it('answers 413 for bodies over 3 MiB, and 400/415 for malformed ones', async () => {
    const huge = JSON.stringify({ ...pod('big'), metadata: { name: 'big', annotations: { a: 'x'.repeat(3 * 1024 * 1024 + 10) } } });
    const res = await h.call('POST', PODS, huge);
    assert.equal(res.status, 413);
    assert.equal(res.body.reason, 'RequestEntityTooLarge');
    assert.equal((await h.call('POST', PODS, '{"apiVersion": ')).status, 400);
    assert.equal((await h.call('POST', PODS, '[1,2]')).status, 400);
    assert.equal((await h.call('POST', PODS, JSON.stringify(pod('x')), { 'content-type': 'text/plain' })).status, 415);
    assert.equal((await h.call('GET', `${PODS}`)).status, 200, 'still serving');
  });

  it('serves discovery documents', async () => {
    const core = await h.call('GET', '/api/v1');
    assert.equal(core.body.kind, 'APIResourceList');
    const pods = core.body.resources.find((r) => r.name === 'pods');
    assert.deepEqual(pods?.shortNames, ['po']);
    assert.ok(core.body.resources.some((r) => r.name === 'pods/status'));
    assert.ok(core.body.resources.some((r) => r.name === 'pods/binding' && r.kind === 'Binding' && r.verbs.includes('create')));
    assert.ok(core.body.resources.some((r) => r.name === 'pods/eviction' && r.group === 'policy' && r.version === 'v1' && r.kind === 'Eviction'));
    const groups = await h.call('GET', '/apis');
    assert.ok(groups.body.groups.some((g) => g.name === 'apps'));
    const apps = await h.call('GET', '/apis/apps/v1');
    assert.ok(apps.body.resources.some((r) => r.name === 'deployments'));
    // Reviews are questions, not stored kinds, and are listed as kube-apiserver lists them (kubectl api-versions shows their groups).
    assert.ok(groups.body.groups.some((g) => g.name === 'authorization.k8s.io'));
    const authz = await h.call('GET', '/apis/authorization.k8s.io/v1');
    assert.deepEqual(
      authz.body.resources.map((r) => `${r.name} ${r.verbs.join(',')}`),
      ['selfsubjectaccessreviews create', 'selfsubjectrulesreviews create', 'subjectaccessreviews create', 'localsubjectaccessreviews create'],
    );
  });

  it('refuses to delete system namespaces and creating in a terminating namespace', async () => {
    assert.equal((await h.call('DELETE', '/api/v1/namespaces/default')).status, 403);
    await h.call('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'doomed' } });
    const del = await h.call('DELETE', '/api/v1/namespaces/doomed');
    assert.equal(del.status, 200);
    assert.equal(del.body.status.phase, 'Terminating');
    const refused = await h.call('POST', '/api/v1/namespaces/doomed/pods', pod('late'));
    assert.equal(refused.status, 403);
    assert.match(refused.body.message, /being terminated/);
  });
});
