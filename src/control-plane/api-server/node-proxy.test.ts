// pods/log, pods/exec and metrics.k8s.io through app.request(), proxied to a real kubelet API on a loopback port.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { PassThrough, Readable } from 'node:stream';
import { Hono } from 'hono';
import { namespaceKind } from '../../core/api/namespace.js';
import { nodeKind, type Node, type NodeStatus } from '../../core/api/node.js';
import { podKind, type Pod } from '../../core/api/pod.js';
import { UnauthorizedError, type Status } from '../../core/errors.js';
import { MemoryStore } from '../../core/store/memory-store.js';
import { waitFor } from '../../core/wait-for.js';
import type { ContainerStats, LogOptions, PodProvider, PodRef, RuntimePod } from '../../runtime/provider.js';
import { startKubeletServer } from '../../node/kubelet/kubelet-server.js';
import { ADMIN_USER, TokenAuthenticator, type UserInfo } from './auth.js';
import { chooseContainer, dialErrorMessage, execBody, kubeletLogQuery, kubeletTarget, registerNodeProxyRoutes } from './node-proxy.js';
import { cpuQuantity, memoryQuantity, podMetrics, type PodMetrics, type Usage } from '../../core/api/metrics.js';
import type { ObjectService } from './object-service.js';
import { statusResponse } from './resource-routes.js';
import { createApiApp, ensureSystemNamespaces } from './server.js';

const ADMIN = 'admin-token';
const VIEWER = 'viewer-token';
const KUBELET_TOKEN = 'kubelet-client-token';

/** The parts of the answers these tests read: a Status, an exec result, metrics and their lists, discovery documents (a log is plain text). */
interface Answer {
  kind: string;
  apiVersion: string;
  message: string;
  exitCode: number;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  window: string;
  usage: Usage;
  containers: PodMetrics['containers'];
  items: Answer[];
  groups: { name: string; preferredVersion: { groupVersion: string } }[];
  resources: { name: string; kind: string; namespaced: boolean }[];
}

/** Just what the kubelet API uses: logs (followed ones stay open until aborted), exec and stats. */
class StubProvider implements Pick<PodProvider, 'getPod' | 'listPods' | 'logs' | 'exec' | 'stats'> {
  pods: RuntimePod[] = [];
  logSignals: AbortSignal[] = [];
  logOptions: LogOptions[] = [];
  usage = new Map<string, ContainerStats[]>();
  async getPod(uid: string) {
    return this.pods.find((p) => p.uid === uid);
  }
  async listPods() {
    return this.pods;
  }
  async logs(ref: PodRef, container: string, options: LogOptions): Promise<Readable> {
    this.logOptions.push(options);
    if (options.signal) this.logSignals.push(options.signal);
    const text = `log of ${ref.name}/${container}\n`;
    if (!options.follow) return Readable.from([Buffer.from(text)]);
    const out = new PassThrough();
    out.write(text);
    options.signal?.addEventListener('abort', () => out.end(), { once: true });
    return out;
  }
  async exec(_ref: PodRef, _container: string, command: string[]) {
    return { exitCode: command[0] === 'false' ? 1 : 0, stdout: `ran ${command.join(' ')}\n`, stderr: 'warn\n' };
  }
  async stats(ref: PodRef) {
    return this.usage.get(ref.name) ?? [];
  }
}

function runtimePod(pod: Pod): RuntimePod {
  return {
    uid: pod.metadata.uid!,
    namespace: pod.metadata.namespace!,
    name: pod.metadata.name!,
    sandbox: { id: 'sb', state: 'ready', createdAt: '2026-01-01T00:00:00Z' },
    containers: pod.spec.containers.map((c) => ({
      name: c.name,
      id: `id-${c.name}`,
      image: c.image ?? '',
      state: 'running',
      attempt: 0,
      createdAt: '2026-01-01T00:00:00Z',
    })),
  };
}

/** A loopback port nothing listens on (bound, then closed). */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

async function addNode(service: ObjectService, name: string, port: number, ready = true): Promise<void> {
  await service.create(nodeKind, undefined, { metadata: { name, labels: { zone: 'a' } } });
  await service.patch(
    nodeKind,
    undefined,
    name,
    {
      status: {
        addresses: [{ type: 'InternalIP', address: '127.0.0.1' }],
        daemonEndpoints: { kubeletEndpoint: { Port: port } },
        conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }],
        allocatable: { cpu: '2', memory: '4Gi' },
      },
    },
    { subresource: 'status' },
  );
}

async function addPod(service: ObjectService, name: string, containers: string[], nodeName?: string, namespace = 'default'): Promise<Pod> {
  return (await service.create(podKind, namespace, {
    metadata: { name },
    spec: { ...(nodeName ? { nodeName } : {}), containers: containers.map((c) => ({ name: c, image: 'busybox:1.36' })) },
  })) as Pod;
}

describe('node proxy', () => {
  const stop = new AbortController();
  const provider = new StubProvider();
  const wrongTokenProvider = new StubProvider();
  const closers: Promise<void>[] = [];
  let app: Hono<{ Variables: { user: UserInfo } }>;

  before(async () => {
    const store = new MemoryStore();
    const authenticator = new TokenAuthenticator();
    authenticator.add(ADMIN, ADMIN_USER);
    authenticator.add(VIEWER, { name: 'jane', groups: ['developers'] });
    const { service } = createApiApp({ store, authenticator });
    await ensureSystemNamespaces(service);
    await service.create(namespaceKind, undefined, { metadata: { name: 'other' } });

    // The API server's layout in small: authentication, then these routes, then everything else.
    app = new Hono<{ Variables: { user: UserInfo } }>();
    app.onError((err, c) => statusResponse(c, err));
    app.use('*', async (c, next) => {
      const token = /^Bearer (\S+)$/.exec(c.req.header('authorization') ?? '')?.[1];
      const user = token ? await authenticator.authenticate(token) : undefined;
      if (!user) throw new UnauthorizedError();
      c.set('user', user);
      return next();
    });
    registerNodeProxyRoutes(app, { service, kubeletToken: KUBELET_TOKEN, timeoutMs: 2000 });

    const pods: Pod[] = [];
    const kubelet = async (nodeName: string, p: StubProvider, acceptedToken: string) => {
      const server = await startKubeletServer({
        provider: p as unknown as PodProvider,
        nodeName,
        findPod: (ns, name) => pods.find((x) => x.metadata.namespace === ns && x.metadata.name === name && x.spec.nodeName === nodeName),
        authenticate: async (token) => (token === acceptedToken ? { name: 'apiserver', groups: ['system:masters'] } : undefined),
        address: '127.0.0.1',
        port: 0,
        signal: stop.signal,
      });
      closers.push(server.closed);
      return server.port;
    };
    await addNode(service, 'node-1', await kubelet('node-1', provider, KUBELET_TOKEN));
    await addNode(service, 'node-dead', await closedPort());
    await addNode(service, 'node-down', await closedPort(), false);
    await addNode(service, 'node-wrong', await kubelet('node-wrong', wrongTokenProvider, 'something-else'));
    pods.push(await addPod(service, 'web', ['main'], 'node-1'));
    pods.push(await addPod(service, 'duo', ['a', 'b'], 'node-1'));
    pods.push(await addPod(service, 'api', ['main'], 'node-1', 'other'));
    pods.push(await addPod(service, 'lost', ['main'], 'node-dead'));
    pods.push(await addPod(service, 'guarded', ['main'], 'node-wrong'));
    await addPod(service, 'pending', ['main']);
    provider.pods = pods.filter((p) => p.spec.nodeName === 'node-1').map(runtimePod);
    wrongTokenProvider.pods = pods.filter((p) => p.spec.nodeName === 'node-wrong').map(runtimePod);
    provider.usage.set('web', [{ name: 'main', cpuCores: 0.012, memoryBytes: 3456 * 1024 }]);
    provider.usage.set('api', [{ name: 'main', cpuCores: 0.5, memoryBytes: 1024 * 1024 }]);
  });

  after(async () => {
    stop.abort();
    await Promise.all(closers);
  });

  const call = async (method: string, path: string, options: { token?: string; body?: unknown } = {}) => {
    const res = await app.request(path, {
      method,
      headers: { authorization: `Bearer ${options.token ?? ADMIN}`, 'content-type': 'application/json' },
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
    });
    const text = await res.text();
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      /* plain text */
    }
    return { status: res.status, body: body as Answer };
  };

  it("streams a container log from the pod's kubelet, passing the options on", async () => {
    const res = await call('GET', '/api/v1/namespaces/default/pods/web/log?tailLines=3&timestamps=true');
    assert.equal(res.status, 200);
    assert.equal(res.body, 'log of web/main\n');
    const options = provider.logOptions.at(-1)!;
    assert.equal(options.tailLines, 3);
    assert.equal(options.timestamps, true);
    assert.equal(options.follow, false);
    assert.equal((await call('GET', '/api/v1/namespaces/default/pods/duo/log?container=b')).body, 'log of duo/b\n');
  });

  it('answers Status errors as Kubernetes does', async () => {
    const cases: [string, number, RegExp][] = [
      ['/api/v1/namespaces/default/pods/nope/log', 404, /pods "nope" not found/],
      ['/api/v1/namespaces/default/pods/duo/log', 400, /^a container name must be specified for pod duo, choose one of: \[a b\]$/],
      ['/api/v1/namespaces/default/pods/web/log?container=x', 400, /^container x is not valid for pod web$/],
      ['/api/v1/namespaces/default/pods/pending/log', 400, /pod "pending" does not have a host assigned/],
      ['/api/v1/namespaces/default/pods/web/log?tailLines=x', 400, /tailLines must be a non-negative integer/],
    ];
    for (const [path, code, message] of cases) {
      const res = await call('GET', path);
      assert.equal(res.status, code, path);
      assert.equal(res.body.kind, 'Status', path);
      assert.match(res.body.message, message, path);
    }
  });

  it('answers 503 at once when the kubelet cannot be reached or refuses our credentials', async () => {
    const started = Date.now();
    const res = await call('GET', '/api/v1/namespaces/default/pods/lost/log');
    assert.equal(res.status, 503);
    assert.match(res.body.message, /^error dialing backend: dial tcp 127\.0\.0\.1:\d+: connect: connection refused$/);
    assert.ok(Date.now() - started < 2000);
    const exec = await call('POST', '/api/v1/namespaces/default/pods/lost/exec', { body: { command: ['ls'] } });
    assert.equal(exec.status, 503);
    const guarded = await call('GET', '/api/v1/namespaces/default/pods/guarded/log');
    assert.equal(guarded.status, 503);
    assert.match(guarded.body.message, /kubelet on node "node-wrong" refused the API server's credentials/);
  });

  it('lets only system:masters read logs and exec', async () => {
    const logs = await call('GET', '/api/v1/namespaces/default/pods/web/log', { token: VIEWER });
    assert.equal(logs.status, 403);
    assert.match(logs.body.message, /User "jane" cannot get resource "pods\/log"/);
    const exec = await call('POST', '/api/v1/namespaces/default/pods/web/exec', { token: VIEWER, body: { command: ['ls'] } });
    assert.equal(exec.status, 403);
  });

  it('runs exec on the kubelet, from a JSON body or command parameters', async () => {
    const res = await call('POST', '/api/v1/namespaces/default/pods/web/exec', { body: { command: ['echo', 'hi'] } });
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { exitCode: 0, stdout: 'ran echo hi\n', stderr: 'warn\n' });
    const q = await call('POST', '/api/v1/namespaces/default/pods/duo/exec?container=a&command=false');
    assert.equal(q.body.exitCode, 1);
    const none = await call('POST', '/api/v1/namespaces/default/pods/web/exec', { body: {} });
    assert.equal(none.status, 400);
    assert.match(none.body.message, /at least one command/);
  });

  it("stops the kubelet's log stream when the client leaves a follow", async () => {
    const before = provider.logSignals.length;
    const res = await app.request('/api/v1/namespaces/default/pods/web/log?follow=true', { headers: { authorization: `Bearer ${ADMIN}` } });
    assert.equal(res.status, 200);
    const reader = res.body!.getReader();
    const first = await reader.read();
    assert.equal(Buffer.from(first.value!).toString(), 'log of web/main\n');
    await waitFor(() => provider.logSignals.length > before, { timeoutMs: 5000, description: 'the kubelet to open the log' });
    const signal = provider.logSignals.at(-1)!;
    assert.equal(signal.aborted, false);
    await reader.cancel();
    await waitFor(() => signal.aborted, { timeoutMs: 5000, description: 'the kubelet to stop following' });
  });

  it('serves node metrics from Ready nodes that answer', async () => {
    const list = await call('GET', '/apis/metrics.k8s.io/v1beta1/nodes');
    assert.equal(list.status, 200);
    assert.equal(list.body.kind, 'NodeMetricsList');
    assert.deepEqual(
      list.body.items.map((i) => i.metadata.name),
      ['node-1'],
    );
    const node = list.body.items[0];
    assert.equal(node.kind, 'NodeMetrics');
    assert.equal(node.apiVersion, 'metrics.k8s.io/v1beta1');
    assert.equal(node.window, '10s');
    assert.deepEqual(node.usage, { cpu: '512m', memory: '4480Ki' });
    assert.deepEqual(node.metadata.labels, { zone: 'a' });
    assert.equal((await call('GET', '/apis/metrics.k8s.io/v1beta1/nodes/node-1')).body.metadata.name, 'node-1');
    for (const name of ['node-dead', 'node-down', 'nope']) {
      const res = await call('GET', `/apis/metrics.k8s.io/v1beta1/nodes/${name}`);
      assert.equal(res.status, 404, name);
      assert.equal(res.body.message, `nodemetrics.metrics.k8s.io "${name}" not found`);
    }
  });

  it('serves pod metrics across namespaces, in one, and for one pod', async () => {
    const all = await call('GET', '/apis/metrics.k8s.io/v1beta1/pods');
    assert.equal(all.body.kind, 'PodMetricsList');
    assert.deepEqual(
      all.body.items.map((i) => `${i.metadata.namespace}/${i.metadata.name}`),
      ['default/duo', 'default/web', 'other/api'],
    );
    const ns = await call('GET', '/apis/metrics.k8s.io/v1beta1/namespaces/default/pods');
    assert.deepEqual(
      ns.body.items.map((i) => i.metadata.name),
      ['duo', 'web'],
    );
    const one = await call('GET', '/apis/metrics.k8s.io/v1beta1/namespaces/default/pods/web');
    assert.equal(one.body.kind, 'PodMetrics');
    assert.deepEqual(one.body.containers, [{ name: 'main', usage: { cpu: '12m', memory: '3456Ki' } }]);
    const missing = await call('GET', '/apis/metrics.k8s.io/v1beta1/namespaces/default/pods/lost');
    assert.equal(missing.status, 404);
    assert.equal(missing.body.message, 'podmetrics.metrics.k8s.io "default/lost" not found');
  });

  it('adds metrics.k8s.io and the pod subresources to discovery', async () => {
    const groups = await call('GET', '/apis');
    assert.ok(groups.body.groups.some((g) => g.name === 'metrics.k8s.io' && g.preferredVersion.groupVersion === 'metrics.k8s.io/v1beta1'));
    const resources = await call('GET', '/apis/metrics.k8s.io/v1beta1');
    assert.deepEqual(
      resources.body.resources.map((r) => [r.name, r.kind, r.namespaced]),
      [
        ['nodes', 'NodeMetrics', false],
        ['pods', 'PodMetrics', true],
      ],
    );
    const core = await call('GET', '/api/v1');
    const names = core.body.resources.map((r) => r.name);
    assert.ok(names.includes('pods') && names.includes('pods/log') && names.includes('pods/exec'));
  });
});

describe('node proxy with a kubelet that accepts but never answers', () => {
  it('gives up after the timeout: 503 for logs, the node left out of metrics', async () => {
    const held = new Set<net.Socket>();
    const silent = net.createServer((socket) => {
      held.add(socket);
      // Read (and ignore) the request, so that the client's close is seen.
      socket.resume();
      socket.on('close', () => held.delete(socket));
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const store = new MemoryStore();
      const authenticator = new TokenAuthenticator();
      const { service } = createApiApp({ store, authenticator });
      await ensureSystemNamespaces(service);
      await addNode(service, 'node-silent', (silent.address() as net.AddressInfo).port);
      await addPod(service, 'web', ['main'], 'node-silent');
      const app = new Hono<{ Variables: { user: UserInfo } }>();
      app.onError((err, c) => statusResponse(c, err));
      app.use('*', async (c, next) => {
        c.set('user', ADMIN_USER);
        return next();
      });
      registerNodeProxyRoutes(app, { service, kubeletToken: KUBELET_TOKEN, timeoutMs: 200 });
      const logs = await app.request('/api/v1/namespaces/default/pods/web/log');
      assert.equal(logs.status, 503);
      assert.match(((await logs.json()) as Status).message, /^the kubelet on node "node-silent" \(127\.0\.0\.1:\d+\) did not answer within 200 ms$/);
      const metrics = await app.request('/apis/metrics.k8s.io/v1beta1/nodes');
      assert.deepEqual(((await metrics.json()) as { items: unknown[] }).items, []);
      await waitFor(() => held.size === 0, { timeoutMs: 5000, description: 'the proxy to drop its connections' });
    } finally {
      for (const socket of held) socket.destroy();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    }
  });
});

describe('node proxy pure parts', () => {
  const pod = (containers: string[], init: string[] = []) =>
    ({
      metadata: { name: 'p' },
      spec: { containers: containers.map((name) => ({ name })), initContainers: init.map((name) => ({ name })) },
    }) as unknown as Pod;

  it('chooses the container', () => {
    assert.equal(chooseContainer(pod(['a']), undefined), 'a');
    assert.equal(chooseContainer(pod(['a', 'b']), 'b'), 'b');
    assert.equal(chooseContainer(pod(['a'], ['setup']), 'setup'), 'setup');
    assert.throws(() => chooseContainer(pod(['a', 'b']), undefined), /^BadRequestError: a container name must be specified for pod p, choose one of: \[a b\]$/);
    assert.throws(() => chooseContainer(pod(['a', 'b'], ['i']), undefined), /choose one of: \[a b\] or one of the init containers: \[i\]$/);
    assert.throws(() => chooseContainer(pod(['a']), 'z'), /container z is not valid for pod p/);
  });

  it('builds kubelet log queries', () => {
    const q = (params: Record<string, string>) => kubeletLogQuery((k) => params[k]);
    assert.equal(q({}), '');
    assert.equal(q({ follow: 'true', previous: '1', timestamps: 'false', tailLines: '10' }), '?follow=true&previous=true&tailLines=10');
    assert.throws(() => q({ tailLines: '-2' }), /non-negative integer/);
  });

  it('finds the kubelet of a node', () => {
    const node = (status: NodeStatus) => ({ metadata: { name: 'n' }, spec: {}, status }) as Node;
    assert.deepEqual(
      kubeletTarget(
        node({
          addresses: [
            { type: 'Hostname', address: 'h' },
            { type: 'InternalIP', address: '10.0.0.2' },
          ],
          daemonEndpoints: { kubeletEndpoint: { Port: 1234 } },
        }),
      ),
      { nodeName: 'n', host: '10.0.0.2', port: 1234 },
    );
    assert.deepEqual(kubeletTarget(node({ addresses: [{ type: 'Hostname', address: 'h' }] })), { nodeName: 'n', host: 'h', port: 10250 });
    assert.equal(kubeletTarget(node({})), undefined);
  });

  it('words dial errors', () => {
    const t = { nodeName: 'n', host: '10.0.0.2', port: 10250 };
    const err = (code: string) => Object.assign(new Error(code), { code });
    assert.equal(dialErrorMessage(t, err('ECONNREFUSED')), 'error dialing backend: dial tcp 10.0.0.2:10250: connect: connection refused');
    assert.equal(dialErrorMessage(t, err('ETIMEDOUT')), 'error dialing backend: dial tcp 10.0.0.2:10250: i/o timeout');
    assert.equal(dialErrorMessage(t, new Error('socket hang up')), 'error dialing backend: dial tcp 10.0.0.2:10250: socket hang up');
  });

  it('checks exec bodies', () => {
    assert.deepEqual(execBody('{"command":["ls"],"stdin":"x"}', []), { command: ['ls'], stdin: 'x' });
    assert.deepEqual(execBody('', ['echo', 'hi']), { command: ['echo', 'hi'] });
    assert.throws(() => execBody('[1]', []), /must be a JSON object/);
    assert.throws(() => execBody('{"command":[1]}', []), /at least one command/);
    assert.throws(() => execBody('', []), /at least one command/);
  });

  it('formats metrics quantities', () => {
    assert.deepEqual([0, 1, 1e6, 12_300_000, 2e9].map(cpuQuantity), ['0m', '1m', '1m', '13m', '2000m']);
    assert.deepEqual([0, 1, 1024, 3456 * 1024].map(memoryQuantity), ['0Ki', '1Ki', '1Ki', '3456Ki']);
    const summary = {
      pods: [
        { podRef: { name: 'a', namespace: 'x' }, containers: [{ name: 'c', cpu: { usageNanoCores: 5e6 }, memory: { workingSetBytes: 2048 } }] },
        { podRef: { name: 'b', namespace: 'y' } },
        {},
      ],
    };
    assert.deepEqual(
      podMetrics(summary, 'now', 'x').map((p) => [p.metadata.name, p.timestamp, p.containers]),
      [['a', 'now', [{ name: 'c', usage: { cpu: '5m', memory: '2Ki' } }]]],
    );
    assert.equal(podMetrics(summary, 'now').length, 2);
    assert.equal(
      podMetrics({ pods: [{ podRef: { name: 'a', namespace: 'x' }, cpu: { time: '2026-01-02T03:04:05.678Z' } }] }, '2026-01-02T03:04:09.001Z')[0]!.timestamp,
      '2026-01-02T03:04:05Z',
    );
  });
});
