// Table-driven tests of the lifecycle hook runner (exec, httpGet against a loopback server, sleep on a manual clock) and of the grace period left after preStop.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { Container, Pod } from '../../core/api/pod.js';
import { waitFor } from '../../core/wait-for.js';
import { FakeProvider } from '../../runtime/fake-provider.js';
import type { ExecResult, RuntimePod } from '../../runtime/provider.js';
import { ManualClock } from './clock.js';
import {
  graceAfterPreStop,
  LifecycleHooks,
  KubeletStoppingError,
  podDescription,
  runLifecycleHook,
  type HookTarget,
  type LifecycleHandler,
} from './lifecycle-hooks.js';

const POD = {
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'web', namespace: 'shop', uid: 'u-1' },
  spec: { containers: [{ name: 'app', image: 'busybox:1.35', ports: [{ name: 'http', containerPort: 8080, protocol: 'TCP' }] }] },
} as unknown as Pod;
const WHO = 'for Container "app" in Pod "web_shop(u-1)"';

function target(over: Partial<HookTarget> = {}): HookTarget {
  return { pod: POD, container: POD.spec.containers[0]!, podIP: '127.0.0.1', exec: async () => ({ exitCode: 0, stdout: '', stderr: '' }), ...over };
}

const run = (handler: LifecycleHandler, t: HookTarget, signal = new AbortController().signal, clock = new ManualClock()) =>
  runLifecycleHook(handler, t, { clock, signal, timeoutMs: 5000 });

describe('graceAfterPreStop', () => {
  const cases: [grace: number, elapsedMs: number, left: number][] = [
    [30, 0, 30],
    [30, 999, 30], // whole seconds only, as the kubelet counts them
    [30, 5000, 25],
    [30, 5999, 25],
    [10, 9000, 2], // never less than 2 s for SIGTERM
    [10, 12_000, 2],
    [3, 1000, 2],
    [1, 0, 2],
  ];
  for (const [grace, elapsedMs, left] of cases) {
    it(`${grace} s grace, hooks took ${elapsedMs} ms: ${left} s left`, () => assert.equal(graceAfterPreStop(grace, elapsedMs), left));
  }
});

describe('runLifecycleHook', () => {
  let server: http.Server;
  let port: number;
  const paths: string[] = [];

  before(async () => {
    server = http.createServer((req, res) => {
      paths.push(`${req.url} ${req.headers['user-agent']}`);
      // Kubernetes does not look at the status of a hook's answer: a 500 is still a hook that ran.
      res.statusCode = req.url === '/fails' ? 500 : 200;
      res.end('ok');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it("exec: exit code 0 succeeds; anything else fails with the command and its output in Kubernetes' words", async () => {
    const seen: string[][] = [];
    const exec = async (command: string[]): Promise<ExecResult> => {
      seen.push(command);
      return command[0] === 'true' ? { exitCode: 0, stdout: 'fine', stderr: '' } : { exitCode: 3, stdout: 'half ', stderr: 'broken' };
    };
    assert.deepEqual(await run({ exec: { command: ['true'] } }, target({ exec })), { ok: true, message: '' });
    assert.deepEqual(await run({ exec: { command: ['sh', '-c', 'exit 3'] } }, target({ exec })), {
      ok: false,
      message: `Exec lifecycle hook ([sh -c exit 3]) ${WHO} failed - error: command 'sh -c exit 3' exited with 3: half broken, message: "half broken"`,
    });
    assert.deepEqual(seen, [['true'], ['sh', '-c', 'exit 3']]);
    const gone = await run(
      { exec: { command: ['x'] } },
      target({
        exec: async () => {
          throw new Error('container "app" in pod shop/web is not running');
        },
      }),
    );
    assert.deepEqual(gone, {
      ok: false,
      message: `Exec lifecycle hook ([x]) ${WHO} failed - error: container "app" in pod shop/web is not running, message: ""`,
    });
  });

  it('exec: an abort (grace period over) ends the wait for a command that hangs', async () => {
    const cut = new AbortController();
    const pending = run({ exec: { command: ['sleep', '1000'] } }, target({ exec: () => new Promise<ExecResult>(() => {}) }), cut.signal);
    cut.abort(new Error('the grace period of 5 s ran out'));
    assert.deepEqual(await pending, {
      ok: false,
      message: `Exec lifecycle hook ([sleep 1000]) ${WHO} failed - error: the grace period of 5 s ran out, message: ""`,
    });
  });

  it('httpGet: any answer succeeds, to the pod IP by default, named ports through the container; a refused connection fails', async () => {
    assert.deepEqual(await run({ httpGet: { path: '/stop', port, scheme: 'HTTP' } }, target()), { ok: true, message: '' });
    assert.deepEqual(await run({ httpGet: { path: 'fails', port, scheme: 'HTTP' } }, target()), { ok: true, message: '' });
    assert.deepEqual(paths, ['/stop kube-lifecycle/minik8s', '/fails kube-lifecycle/minik8s']);

    const named = target({ container: { ...POD.spec.containers[0]!, ports: [{ name: 'http', containerPort: port, protocol: 'TCP' }] } as Container });
    assert.deepEqual(await run({ httpGet: { path: '/named', port: 'http', scheme: 'HTTP' } }, named), { ok: true, message: '' });

    const closed = await new Promise<number>((resolve) => {
      const s = http.createServer().listen(0, '127.0.0.1', () => {
        const p = (s.address() as AddressInfo).port;
        s.close(() => resolve(p));
      });
    });
    const refused = await run({ httpGet: { path: '/x', port: closed, scheme: 'HTTP' } }, target());
    assert.equal(refused.ok, false);
    assert.match(
      refused.message,
      new RegExp(
        `^HTTP lifecycle hook \\(/x\\) ${WHO.replace(/[()]/g, '\\$&')} failed - error: Get "http://127\\.0\\.0\\.1:${closed}/x": connect ECONNREFUSED`,
      ),
    );
    assert.deepEqual(await run({ httpGet: { path: '/', port: 'grpc', scheme: 'HTTP' } }, target()), {
      ok: false,
      message: `HTTP lifecycle hook (/) ${WHO} failed - error: couldn't find port: grpc in container app`,
    });
    assert.deepEqual(await run({ httpGet: { path: '/', port, scheme: 'HTTP' } }, target({ podIP: undefined })), {
      ok: false,
      message: `HTTP lifecycle hook (/) ${WHO} failed - error: failed to find networking container: the pod has no IP`,
    });
  });

  it("sleep: waits on the kubelet's clock; cut short, it fails", async () => {
    const clock = new ManualClock();
    let done = false;
    const sleeping = run({ sleep: { seconds: 5 } }, target(), new AbortController().signal, clock).then((o) => {
      done = true;
      return o;
    });
    await clock.advance(4999);
    assert.equal(done, false);
    await clock.advance(1);
    assert.deepEqual(await sleeping, { ok: true, message: '' });

    const cut = new AbortController();
    const cutShort = run({ sleep: { seconds: 5 } }, target(), cut.signal, clock);
    cut.abort(new Error('the kubelet is stopping'));
    assert.deepEqual(await cutShort, {
      ok: false,
      message: `Sleep lifecycle hook (5) ${WHO} failed - error: container terminated before sleep hook finished (the kubelet is stopping)`,
    });
  });

  it('tcpSocket passes validation but, as in Kubernetes, is not run', async () => {
    assert.deepEqual(await run({ tcpSocket: { port: 80 } }, target()), {
      ok: false,
      message: 'Cannot run handler: invalid handler: tcpSocket is not supported as a lifecycle handler',
    });
  });

  it('names pods as Kubernetes does', () => assert.equal(podDescription(POD), 'web_shop(u-1)'));
});

describe('LifecycleHooks.preStop', () => {
  const spec = (containers: Partial<Container>[]): Pod =>
    ({ ...POD, spec: { ...POD.spec, containers: containers.map((c) => ({ image: 'busybox:1.35', ...c })) } }) as Pod;
  const runtime = (running: string[], exited: string[] = []): RuntimePod => ({
    uid: 'u-1',
    namespace: 'shop',
    name: 'web',
    sandbox: { id: 's', state: 'ready', ip: '10.244.1.2', createdAt: '2030-01-01T00:00:00Z' },
    containers: [...running.map((name) => ({ name, state: 'running' as const })), ...exited.map((name) => ({ name, state: 'exited' as const }))].map(
      (c, i) => ({ ...c, id: `c${i}`, image: 'busybox:1.35', attempt: 0, createdAt: '2030-01-01T00:00:00Z' }),
    ),
  });

  it('runs the hooks of running containers side by side and takes the time they took off the grace period', async () => {
    const clock = new ManualClock();
    const provider = new FakeProvider();
    const hooks = new LifecycleHooks({ provider, clock });
    const pod = spec([
      { name: 'a', lifecycle: { preStop: { sleep: { seconds: 4 } } } },
      { name: 'b', lifecycle: { preStop: { sleep: { seconds: 6 } } } },
      { name: 'c' },
      { name: 'd', lifecycle: { preStop: { sleep: { seconds: 100 } } } },
    ]);
    let result: Awaited<ReturnType<LifecycleHooks['preStop']>> | undefined;
    // d has exited: its hook is not run (a preStop hook is for a container that runs).
    const pending = hooks.preStop(pod, runtime(['a', 'b', 'c'], ['d']), ['a', 'b', 'c', 'd'], 30).then((r) => {
      result = r;
    });
    await clock.advance(5999);
    assert.equal(result, undefined, 'both hooks are waited for');
    await clock.advance(1);
    await pending;
    assert.deepEqual(result, { graceSeconds: 24, failures: [] });
    assert.equal(clock.pendingTimers, 0, 'no timer is left behind');
  });

  it('runs nothing for a grace period of 0, for containers without a hook, or for containers not named', async () => {
    const provider = new FakeProvider();
    const hooks = new LifecycleHooks({ provider, clock: new ManualClock() });
    const pod = spec([{ name: 'a', lifecycle: { preStop: { exec: { command: ['x'] } } } }, { name: 'b' }]);
    assert.deepEqual(await hooks.preStop(pod, runtime(['a', 'b']), ['a'], 0), { graceSeconds: 0, failures: [] });
    assert.deepEqual(await hooks.preStop(pod, runtime(['a', 'b']), ['b'], 1), { graceSeconds: 1, failures: [] });
    assert.deepEqual(provider.calls, []);
  });

  it('reports a failed hook; one cut short by the grace period is not a failure, and leaves the 2 s minimum', async () => {
    const clock = new ManualClock();
    const provider = new FakeProvider();
    const logs: string[] = [];
    const hooks = new LifecycleHooks({ provider, clock, log: (m) => logs.push(m) });
    // A fake exec needs a running container in the fake runtime: the hooks reach the container through the provider.
    await provider.createPod(spec([{ name: 'a' }]), {});
    await provider.updatePod(spec([{ name: 'a' }]), { type: 'start', container: 'a', attempt: 0 });
    provider.setExecResult({ container: 'a', result: { exitCode: 1, stdout: 'no', stderr: '' } });
    const failing = spec([{ name: 'a', lifecycle: { preStop: { exec: { command: ['drain'] } } } }]);
    assert.deepEqual(await hooks.preStop(failing, runtime(['a']), ['a'], 30), {
      graceSeconds: 30,
      failures: [
        {
          container: 'a',
          message: 'Exec lifecycle hook ([drain]) for Container "a" in Pod "web_shop(u-1)" failed - error: command \'drain\' exited with 1: no, message: "no"',
        },
      ],
    });

    const slow = spec([{ name: 'a', lifecycle: { preStop: { sleep: { seconds: 60 } } } }]);
    const pending = hooks.preStop(slow, runtime(['a']), ['a'], 10);
    await clock.advance(10_000);
    assert.deepEqual(await pending, { graceSeconds: 2, failures: [] });
    assert.deepEqual(logs, ['kubelet: preStop hook of container a in pod shop/web did not complete in 10 s']);
  });

  it('throws rather than answer when the kubelet stops meanwhile, so the stop is left to the next kubelet', async () => {
    const clock = new ManualClock();
    const stop = new AbortController();
    const hooks = new LifecycleHooks({ provider: new FakeProvider(), clock, signal: stop.signal });
    const pod = spec([{ name: 'a', lifecycle: { preStop: { sleep: { seconds: 20 } } } }]);
    const pending = hooks.preStop(pod, runtime(['a']), ['a'], 30);
    await waitFor(() => clock.pendingTimers === 2, { timeoutMs: 5000, intervalMs: 2, description: 'the hook to start' });
    stop.abort();
    await assert.rejects(pending, KubeletStoppingError);
    await assert.rejects(
      hooks.postStart(pod, { name: 'a', image: 'x', lifecycle: { postStart: { exec: { command: ['x'] } } } } as Container, undefined),
      KubeletStoppingError,
    );
  });
});

describe('LifecycleHooks.postStart', () => {
  it('resolves undefined without a hook, the outcome with one, and fails a hook that outlasts its limit', async () => {
    const clock = new ManualClock();
    const hooks = new LifecycleHooks({ provider: new FakeProvider(), clock, postStartLimitMs: 30_000 });
    const container = POD.spec.containers[0]!;
    assert.equal(await hooks.postStart(POD, container, '10.244.1.2'), undefined);
    const pending = hooks.postStart(POD, { ...container, lifecycle: { postStart: { sleep: { seconds: 3600 } } } } as Container, '10.244.1.2');
    await clock.advance(30_000);
    assert.deepEqual(await pending, {
      ok: false,
      message: `Sleep lifecycle hook (3600) ${WHO} failed - error: container terminated before sleep hook finished (the hook did not complete within 30 s)`,
    });
  });
});
