// Request accounting: the counter, its Prometheus text both ways, deltas, client views of the object service, and /metrics on the API app.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { podKind } from '../../core/api/pod.js';
import { replicaSetKind } from '../../core/api/replicaset.js';
import { ConflictError } from '../../core/errors.js';
import { MemoryStore } from '../../core/store/memory-store.js';
import { ADMIN_USER, TokenAuthenticator } from './auth.js';
import { ObjectService } from './object-service.js';
import { parseRequestMetrics, renderRequestMetrics, RequestCounter, requestDeltas, type RequestCount } from './request-metrics.js';
import { createApiApp, ensureSystemNamespaces } from './server.js';

const count = (verb: string, resource: string, client: string, value: number, group = '', subresource = '', code = '200'): RequestCount => ({
  verb,
  group,
  resource,
  subresource,
  client,
  code,
  value,
});
const created = (resource: string, client: string, value: number, group = '', subresource = '') =>
  count('create', resource, client, value, group, subresource, '201');

describe('RequestCounter', () => {
  const cases: { name: string; adds: [RequestCount, number?][]; maxSeries?: number; want: RequestCount[] }[] = [
    { name: 'nothing counted', adds: [], want: [] },
    {
      name: 'one series per label set, summed',
      adds: [[created('pods', 'rs', 0)], [created('pods', 'rs', 0), 2], [created('pods', 'admin', 0)]],
      want: [created('pods', 'admin', 1), created('pods', 'rs', 3)],
    },
    {
      name: 'subresource, group and code tell series apart',
      adds: [
        [count('patch', 'pods', 'k', 0, '', 'status')],
        [count('patch', 'pods', 'k', 0)],
        [count('patch', 'replicasets', 'k', 0, 'apps', 'status')],
        [count('patch', 'pods', 'k', 0, '', '', '409')],
      ],
      want: [
        count('patch', 'pods', 'k', 1),
        count('patch', 'pods', 'k', 1, '', '', '409'),
        count('patch', 'pods', 'k', 1, '', 'status'),
        count('patch', 'replicasets', 'k', 1, 'apps', 'status'),
      ],
    },
    {
      name: 'beyond maxSeries new label sets fold into one overflow series; known ones still count',
      maxSeries: 2,
      adds: [[count('get', 'a', 'u', 0)], [count('get', 'b', 'u', 0)], [count('get', 'c', 'u', 0)], [count('get', 'd', 'u', 0)], [count('get', 'a', 'u', 0)]],
      want: [
        count('get', 'a', 'u', 2),
        count('get', 'b', 'u', 1),
        { verb: 'overflow', group: 'overflow', resource: 'overflow', subresource: 'overflow', client: 'overflow', code: 'overflow', value: 2 },
      ],
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const counter = new RequestCounter({ maxSeries: c.maxSeries });
      for (const [labels, n] of c.adds) counter.add(labels, n);
      assert.deepEqual(counter.snapshot(), c.want);
    });
  }

  it('hands out copies', () => {
    const counter = new RequestCounter();
    counter.add(count('get', 'pods', 'u', 0));
    counter.snapshot()[0]!.value = 100;
    assert.equal(counter.snapshot()[0]!.value, 1);
  });
});

describe('Prometheus text', () => {
  it('renders HELP, TYPE and one line per series', () => {
    const text = renderRequestMetrics([
      created('pods', 'replicaset-controller', 100),
      count('patch', 'replicasets', 'system:node:n1', 2, 'apps', 'status', '409'),
    ]);
    assert.equal(
      text,
      [
        "# HELP apiserver_request_total API requests by verb, API group, resource, subresource, client (the authenticated user, or the master's in-process component) and HTTP status code.",
        '# TYPE apiserver_request_total counter',
        'apiserver_request_total{verb="create",group="",resource="pods",subresource="",client="replicaset-controller",code="201"} 100',
        'apiserver_request_total{verb="patch",group="apps",resource="replicasets",subresource="status",client="system:node:n1",code="409"} 2',
        '',
      ].join('\n'),
    );
  });

  it('escapes label values and reads them back unchanged', () => {
    const odd = [count('get', 'we"ird\\res', 'a\nb', 3), count('list', 'pods', 'admin', 7)];
    assert.deepEqual(parseRequestMetrics(renderRequestMetrics(odd)), odd);
  });

  it('parsing skips comments and other metrics', () => {
    const text =
      '# TYPE x counter\nother_total{verb="get"} 4\napiserver_request_total{verb="get",group="",resource="pods",subresource="",client="u",code="200"} 5\n';
    assert.deepEqual(parseRequestMetrics(text), [count('get', 'pods', 'u', 5)]);
  });
});

describe('requestDeltas', () => {
  const cases: { name: string; before: RequestCount[]; after: RequestCount[]; want: RequestCount[] }[] = [
    { name: 'unchanged series are left out', before: [count('get', 'pods', 'u', 5)], after: [count('get', 'pods', 'u', 5)], want: [] },
    {
      name: 'grown series give the difference',
      before: [count('get', 'pods', 'u', 5)],
      after: [count('get', 'pods', 'u', 9)],
      want: [count('get', 'pods', 'u', 4)],
    },
    { name: 'new series count from zero', before: [], after: [created('pods', 'rs', 2)], want: [created('pods', 'rs', 2)] },
    {
      name: 'series differing only in client or code are kept apart',
      before: [created('pods', 'a', 1)],
      after: [created('pods', 'a', 1), created('pods', 'b', 1), count('create', 'pods', 'a', 1, '', '', '409')],
      want: [created('pods', 'b', 1), count('create', 'pods', 'a', 1, '', '', '409')],
    },
  ];
  for (const c of cases) it(c.name, () => assert.deepEqual(requestDeltas(c.before, c.after), c.want));
});

const pod = (name: string) => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { containers: [{ name: 'c', image: 'busybox' }] } });

describe('ObjectService client views', () => {
  it("count each call under the view's client, in the counter the service shares; the service itself counts nothing", async () => {
    const service = new ObjectService({ store: new MemoryStore() });
    await ensureSystemNamespaces(service);
    await service.create(podKind, 'default', pod('by-service'));
    const rs = service.forClient('replicaset-controller');
    const gc = service.forClient('garbage-collector');
    await rs.create(podKind, 'default', pod('a'));
    await rs.patch(podKind, 'default', 'a', { metadata: { labels: { x: 'y' } } });
    await rs.patch(podKind, 'default', 'a', { status: { phase: 'Running' } }, { subresource: 'status' });
    await rs.replace(podKind, 'default', 'a', { ...(await rs.get(podKind, 'default', 'a')) } as Record<string, unknown>);
    await rs.listJson(podKind, 'default', { labelSelector: 'x=y' });
    await rs.list(replicaSetKind, 'default');
    await assert.rejects(rs.patch(podKind, 'default', 'a', { metadata: { resourceVersion: '1' } }), { code: 409 });
    await gc.delete(podKind, 'default', 'a');
    await assert.rejects(gc.get(podKind, 'default', 'a'), { code: 404 });
    await rs.counted('create', podKind, 'binding', async () => {}, 201);
    await assert.rejects(
      rs.counted(
        'create',
        podKind,
        'binding',
        async () => {
          throw new ConflictError('lost');
        },
        201,
      ),
    );
    const events = gc.listWatcher(podKind, 'default').watch('0', new AbortController().signal)[Symbol.asyncIterator]();
    await events.next();
    await events.return?.(undefined);
    assert.deepEqual(service.requests.snapshot(), [
      created('pods', 'replicaset-controller', 1),
      created('pods', 'replicaset-controller', 1, '', 'binding'),
      count('create', 'pods', 'replicaset-controller', 1, '', 'binding', '409'),
      count('delete', 'pods', 'garbage-collector', 1),
      count('get', 'pods', 'garbage-collector', 1, '', '', '404'),
      count('get', 'pods', 'replicaset-controller', 1),
      count('list', 'pods', 'replicaset-controller', 1),
      count('list', 'replicasets', 'replicaset-controller', 1, 'apps'),
      count('patch', 'pods', 'replicaset-controller', 1),
      count('patch', 'pods', 'replicaset-controller', 1, '', '', '409'),
      count('patch', 'pods', 'replicaset-controller', 1, '', 'status'),
      count('update', 'pods', 'replicaset-controller', 1),
      count('watch', 'pods', 'garbage-collector', 1),
    ]);
    assert.equal(rs.requests, service.requests);
  });

  it('share the namespace cache set on the service after they were made', async () => {
    const service = new ObjectService({ store: new MemoryStore() });
    const view = service.forClient('c');
    let asked = 0;
    service.useNamespaceCache({
      get: (name) => {
        asked++;
        return { apiVersion: 'v1', kind: 'Namespace', metadata: { name } };
      },
    });
    await view.create(podKind, 'cached-only', pod('p'));
    assert.equal(asked, 1);
  });
});

describe('GET /metrics on the API app', () => {
  const ADMIN = 'admin-token';
  const NODE = 'node-token';
  const setup = async () => {
    const authenticator = new TokenAuthenticator();
    authenticator.add(ADMIN, ADMIN_USER);
    authenticator.add(NODE, { name: 'system:node:n1', groups: ['system:nodes', 'system:authenticated'] });
    const api = createApiApp({ store: new MemoryStore(), authenticator });
    await ensureSystemNamespaces(api.service);
    const call = (token: string | undefined, method: string, path: string, body?: unknown) =>
      api.app.request(path, {
        method,
        headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    return { api, call };
  };

  it("counts HTTP requests by user (refused ones too) beside the in-process clients' calls, and serves them to admins", async () => {
    const { api, call } = await setup();
    assert.equal((await call(ADMIN, 'POST', '/api/v1/namespaces/default/pods', pod('web'))).status, 201);
    assert.equal((await call(ADMIN, 'GET', '/api/v1/namespaces/default/pods')).status, 200);
    assert.equal((await call(NODE, 'PATCH', '/api/v1/namespaces/default/pods/web', { metadata: { labels: { a: 'b' } } })).status, 403);
    assert.equal((await call(undefined, 'GET', '/api/v1/pods')).status, 401);
    assert.equal((await call(ADMIN, 'GET', '/api')).status, 200);
    await api.service.forClient('replicaset-controller').create(podKind, 'default', pod('rs-pod'));

    const res = await call(ADMIN, 'GET', '/metrics');
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
    const text = await res.text();
    assert.match(text, /^apiserver_request_total\{verb="create",group="",resource="pods",subresource="",client="admin",code="201"\} 1$/m);
    assert.match(text, /^apiserver_request_total\{verb="create",group="",resource="pods",subresource="",client="replicaset-controller",code="201"\} 1$/m);
    assert.deepEqual(parseRequestMetrics(text), [
      created('pods', 'admin', 1),
      created('pods', 'replicaset-controller', 1),
      count('list', 'pods', 'admin', 1),
      count('patch', 'pods', 'system:node:n1', 1, '', '', '403'),
    ]);
  });

  it('refuses nodes with a 403 Status', async () => {
    const { call } = await setup();
    const res = await call(NODE, 'GET', '/metrics');
    assert.equal(res.status, 403);
    const status = (await res.json()) as { kind: string; reason: string; message: string };
    assert.equal(status.kind, 'Status');
    assert.equal(status.reason, 'Forbidden');
    assert.match(status.message, /User "system:node:n1" cannot get path "\/metrics"/);
  });

  it('counts a watch once, when it opens', async () => {
    const { api, call } = await setup();
    const res = await call(ADMIN, 'GET', '/api/v1/namespaces/default/pods?watch=1&timeoutSeconds=1');
    assert.equal(res.status, 200);
    await res.body?.cancel();
    assert.deepEqual(api.service.requests.snapshot(), [count('watch', 'pods', 'admin', 1)]);
  });
});
