// The kubelet API through app.request() and a real listener, over a small in-test provider: auth, logs, exec, stats.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { PassThrough, Readable } from 'node:stream';
import type { Pod } from '../../core/api/pod.js';
import type { Status } from '../../core/errors.js';
import { waitFor } from '../../core/wait-for.js';
import type { ContainerStats, LogOptions, PodProvider, PodRef, RuntimePod } from '../../runtime/provider.js';
import {
  buildSummary,
  createKubeletApp,
  parseExecBody,
  parseTailLines,
  startKubeletServer,
  type KubeletAppOptions,
  type StatsSummary,
} from './kubelet-server.js';
import type { KubeletUser } from './token-review.js';

const ADMIN = 'admin-token';
const VIEWER = 'viewer-token';
const USERS: Record<string, KubeletUser> = {
  [ADMIN]: { name: 'apiserver', groups: ['system:masters'] },
  [VIEWER]: { name: 'jane', groups: ['developers'] },
};

function pod(name: string, containers: string[], uid = `uid-${name}`): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default', uid },
    spec: { containers: containers.map((c) => ({ name: c, image: 'busybox' })) },
  } as unknown as Pod;
}

function runtimePod(p: Pod, containers: { name: string; state?: 'running' | 'exited'; previous?: boolean }[]): RuntimePod {
  return {
    uid: p.metadata.uid!,
    namespace: p.metadata.namespace!,
    name: p.metadata.name!,
    sandbox: { id: 'sb', state: 'ready', createdAt: '2026-01-01T00:00:00Z' },
    containers: containers.map((c) => ({
      name: c.name,
      id: `id-${c.name}`,
      image: 'busybox',
      state: c.state ?? 'running',
      attempt: 0,
      createdAt: '2026-01-01T00:00:00Z',
      ...(c.previous
        ? { previous: { name: c.name, id: 'old', image: 'busybox', state: 'exited' as const, attempt: 0, createdAt: '2026-01-01T00:00:00Z' } }
        : {}),
    })),
  };
}

/** Just what the kubelet API uses; records log calls and keeps followed streams open until aborted. */
class StubProvider implements Pick<PodProvider, 'getPod' | 'listPods' | 'logs' | 'exec' | 'stats'> {
  pods: RuntimePod[] = [];
  logText = new Map<string, string>();
  usage = new Map<string, ContainerStats[]>();
  logCalls: { container: string; options: LogOptions }[] = [];
  execCalls: { container: string; command: string[]; stdin?: string }[] = [];
  async getPod(uid: string) {
    return this.pods.find((p) => p.uid === uid);
  }
  async listPods() {
    return this.pods;
  }
  async logs(ref: PodRef, container: string, options: LogOptions): Promise<Readable> {
    this.logCalls.push({ container, options });
    const text = this.logText.get(`${ref.name}/${container}`) ?? '';
    if (!options.follow) return Readable.from([Buffer.from(text)]);
    const out = new PassThrough();
    out.write(text);
    options.signal?.addEventListener('abort', () => out.end(), { once: true });
    return out;
  }
  async exec(_ref: PodRef, container: string, command: string[], options?: { stdin?: Buffer }) {
    this.execCalls.push({ container, command, stdin: options?.stdin?.toString() });
    return { exitCode: command[0] === 'false' ? 1 : 0, stdout: `ran ${command.join(' ')}\n`, stderr: '' };
  }
  async stats(ref: PodRef) {
    const s = this.usage.get(ref.name);
    if (!s) throw new Error('gone');
    return s;
  }
}

function setup(extra: Partial<KubeletAppOptions> = {}) {
  const provider = new StubProvider();
  const web = pod('web', ['main']);
  const duo = pod('duo', ['a', 'b']);
  const pending = pod('pending', ['main']);
  const known = [web, duo, pending];
  provider.pods = [runtimePod(web, [{ name: 'main', previous: true }]), runtimePod(duo, [{ name: 'a' }, { name: 'b', state: 'exited' }])];
  provider.logText.set('web/main', 'hello\nworld\n');
  const options: KubeletAppOptions = {
    provider: provider as unknown as PodProvider,
    findPod: (ns, name) => known.find((p) => p.metadata.namespace === ns && p.metadata.name === name),
    authenticate: async (token) => USERS[token],
    nodeName: 'node-1',
    now: () => new Date('2026-01-02T03:04:05Z'),
    ...extra,
  };
  const app = createKubeletApp(options);
  const call = async (path: string, init: RequestInit & { token?: string | null } = {}) => {
    const token = init.token === undefined ? ADMIN : init.token;
    const res = await app.request(path, { ...init, headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), 'content-type': 'application/json' } });
    const text = await res.text();
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      /* plain text */
    }
    // The parts of the answers these tests read: a Status, an exec result, the stats Summary (a log is plain text).
    return { status: res.status, body: body as Status & StatsSummary & { exitCode: number }, type: res.headers.get('content-type') ?? '' };
  };
  return { provider, app, call, options };
}

describe('kubelet API', () => {
  it('answers /healthz without a token and refuses everything else without an admin', async () => {
    const { call } = setup();
    assert.equal((await call('/healthz', { token: null })).status, 200);
    for (const [token, code, reason] of [
      [null, 401, 'Unauthorized'],
      ['nope', 401, 'Unauthorized'],
      [VIEWER, 403, 'Forbidden'],
    ] as const) {
      const res = await call('/stats/summary', { token });
      assert.equal(res.status, code, String(token));
      assert.equal(res.body.kind, 'Status');
      assert.equal(res.body.reason, reason);
    }
    assert.match((await call('/stats/summary', { token: VIEWER })).body.message, /jane/);
  });

  it('answers 503 when the token cannot be checked', async () => {
    const { call } = setup({
      authenticate: async () => {
        throw new Error('connect ECONNREFUSED');
      },
    });
    const res = await call('/stats/summary');
    assert.equal(res.status, 503);
    assert.match(res.body.message, /unable to authenticate the request: connect ECONNREFUSED/);
  });

  it('serves container logs with the options passed through', async () => {
    const { call, provider } = setup();
    const res = await call('/containerLogs/default/web/main?tailLines=5&timestamps=true&previous=true');
    assert.equal(res.status, 200);
    assert.equal(res.body, 'hello\nworld\n');
    assert.match(res.type, /^text\/plain/);
    assert.deepEqual(
      { ...provider.logCalls[0]!.options, signal: undefined },
      { follow: false, tailLines: 5, previous: true, timestamps: true, signal: undefined },
    );
  });

  it('answers Status errors for unknown pods and containers and unusable log requests', async () => {
    const { call } = setup();
    const cases: [string, number, RegExp][] = [
      ['/containerLogs/default/nope/main', 404, /pods "nope" not found/],
      ['/containerLogs/other/web/main', 404, /pods "web" not found/],
      ['/containerLogs/default/web/sidecar', 404, /container "sidecar" not found in pod "web"/],
      ['/containerLogs/default/pending/main', 400, /is waiting to start: ContainerCreating/],
      ['/containerLogs/default/duo/a?previous=true', 400, /previous terminated container "a" in pod "duo" not found/],
      ['/containerLogs/default/web/main?tailLines=-1', 400, /tailLines must be a non-negative integer/],
      ['/nothing/here', 404, /could not find the requested resource/],
    ];
    for (const [path, code, message] of cases) {
      const res = await call(path);
      assert.equal(res.status, code, path);
      assert.equal(res.body.kind, 'Status', path);
      assert.match(res.body.message, message, path);
    }
  });

  it('runs exec and reports the exit code and output', async () => {
    const { call, provider } = setup();
    const ok = await call('/exec/default/web/main', { method: 'POST', body: JSON.stringify({ command: ['echo', 'hi'], stdin: 'in' }) });
    assert.equal(ok.status, 200);
    assert.deepEqual(ok.body, { exitCode: 0, stdout: 'ran echo hi\n', stderr: '' });
    assert.deepEqual(provider.execCalls[0], { container: 'main', command: ['echo', 'hi'], stdin: 'in' });
    const failed = await call('/exec/default/web/main', { method: 'POST', body: JSON.stringify({ command: ['false'] }) });
    assert.equal(failed.body.exitCode, 1);
    const stopped = await call('/exec/default/duo/b', { method: 'POST', body: JSON.stringify({ command: ['ls'] }) });
    assert.equal(stopped.status, 400);
    assert.match(stopped.body.message, /container "b" in pod "duo" is not running/);
    const bad = await call('/exec/default/web/main', { method: 'POST', body: JSON.stringify({ command: [] }) });
    assert.equal(bad.status, 400);
  });

  it('serves the stats summary, leaving out pods whose stats fail, summing pods for the node', async () => {
    const { call, provider } = setup();
    provider.usage.set('web', [{ name: 'main', cpuCores: 0.25, memoryBytes: 1000 }]);
    const res = await call('/stats/summary');
    assert.equal(res.status, 200);
    const time = '2026-01-02T03:04:05.000Z';
    assert.deepEqual(res.body, {
      node: { nodeName: 'node-1', cpu: { time, usageNanoCores: 250_000_000 }, memory: { time, workingSetBytes: 1000 } },
      pods: [
        {
          podRef: { name: 'web', namespace: 'default', uid: 'uid-web' },
          cpu: { time, usageNanoCores: 250_000_000 },
          memory: { time, workingSetBytes: 1000 },
          containers: [{ name: 'main', cpu: { time, usageNanoCores: 250_000_000 }, memory: { time, workingSetBytes: 1000 } }],
        },
      ],
    });
  });

  it('uses the node figures when given', async () => {
    const { call } = setup({ nodeStats: async () => ({ cpuCores: 1.5, memoryBytes: 2048 }) });
    const res = await call('/stats/summary');
    assert.equal(res.body.node.cpu.usageNanoCores, 1_500_000_000);
    assert.equal(res.body.node.memory.workingSetBytes, 2048);
  });

  it('streams followed logs over a real listener and stops reading when the client leaves', async () => {
    const { provider, options } = setup();
    const controller = new AbortController();
    const server = await startKubeletServer({ ...options, address: '127.0.0.1', port: 0, signal: controller.signal });
    try {
      const client = new AbortController();
      const res = await fetch(`http://127.0.0.1:${server.port}/containerLogs/default/web/main?follow=true`, {
        headers: { authorization: `Bearer ${ADMIN}` },
        signal: client.signal,
      });
      assert.equal(res.status, 200);
      const reader = res.body!.getReader();
      const first = await reader.read();
      assert.equal(Buffer.from(first.value!).toString(), 'hello\nworld\n');
      const signal = provider.logCalls[0]!.options.signal!;
      assert.equal(signal.aborted, false);
      client.abort();
      await waitFor(() => signal.aborted, { timeoutMs: 5000, description: 'the provider log stream to be stopped' });
    } finally {
      controller.abort();
      await server.closed;
    }
  });
});

describe('kubelet API pure parts', () => {
  it('parses exec bodies', () => {
    assert.deepEqual(parseExecBody('{"command":["ls","-l"],"stdin":"x","timeoutSeconds":3}'), { command: ['ls', '-l'], stdin: 'x', timeoutSeconds: 3 });
    for (const [text, message] of [
      ['nope', /must be JSON/],
      ['{}', /at least one command/],
      ['{"command":"ls"}', /at least one command/],
      ['{"command":["ls",1]}', /at least one command/],
      ['{"command":["ls"],"stdin":5}', /stdin must be a string/],
      ['{"command":["ls"],"timeoutSeconds":0}', /timeoutSeconds must be a positive number/],
    ] as const) {
      assert.throws(() => parseExecBody(text), message, text);
    }
  });

  it('parses tailLines', () => {
    assert.equal(parseTailLines(undefined), undefined);
    assert.equal(parseTailLines(''), undefined);
    assert.equal(parseTailLines('0'), 0);
    assert.equal(parseTailLines('20'), 20);
    for (const bad of ['-1', '1.5', 'x']) assert.throws(() => parseTailLines(bad), /non-negative integer/);
  });

  it('builds summaries with rounded, non-negative figures', () => {
    const s = buildSummary({
      nodeName: 'n',
      time: 't',
      pods: [
        {
          ref: { uid: 'u', namespace: 'ns', name: 'p' },
          containers: [
            { name: 'a', cpuCores: 0.0000000014, memoryBytes: 10.6 },
            { name: 'b', cpuCores: -1, memoryBytes: 5 },
          ],
        },
      ],
    });
    assert.deepEqual(
      s.pods[0]!.containers.map((c) => [c.cpu.usageNanoCores, c.memory.workingSetBytes]),
      [
        [1, 11],
        [0, 5],
      ],
    );
    assert.equal(s.pods[0]!.memory.workingSetBytes, 16);
    assert.deepEqual(buildSummary({ nodeName: 'n', time: 't', pods: [] }).node, {
      nodeName: 'n',
      cpu: { time: 't', usageNanoCores: 0 },
      memory: { time: 't', workingSetBytes: 0 },
    });
  });
});
