// HorizontalPodAutoscaler end to end on a real master (etcd, controllers, 1 s HPA sync) and a fake-provider worker whose pods report the usage their annotation sets.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import type { Deployment } from '../src/core/api/deployment.js';
import type { Event } from '../src/core/api/event.js';
import type { HorizontalPodAutoscaler } from '../src/core/api/horizontalpodautoscaler.js';
import type { Pod } from '../src/core/api/pod.js';
import { waitFor } from '../src/core/wait-for.js';
import { FAKE_USAGE_ANNOTATION } from '../src/runtime/fake-provider.js';
import { BINARY, startMaster, type MasterProcess } from './helpers/master.js';
import { startFakeWorker, type FakeWorker } from './helpers/fake-worker.js';
import { PodTracker } from './helpers/pod-tracker.js';

const DEPLOY = '/apis/apps/v1/namespaces/default/deployments';
const HPA = '/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers';
const Mi = 2 ** 20;

/**
 * A load balancer's view of load: a total of cpu (millicores) and memory (bytes) spread evenly over
 * the Running pods of an app, written onto each pod as the fake provider's usage annotation, and
 * spread again whenever the pods change. So more replicas mean less use each, as behind a Service.
 */
class SpreadLoad {
  readonly tracker = new PodTracker();
  #cpuMilli = 0;
  #memoryBytes = 0;
  #busy = false;
  #dirty = false;
  #failed: unknown;

  constructor(
    private readonly call: (method: string, path: string, body?: unknown, type?: string) => Promise<{ status: number; body: unknown }>,
    master: MasterProcess,
    app: string,
  ) {
    this.tracker.onEvent = () => this.#spread();
    this.tracker.start(master.url, master.token, `app=${app}`);
  }

  set(load: { cpuMilli?: number; memoryBytes?: number }): void {
    this.#cpuMilli = load.cpuMilli ?? this.#cpuMilli;
    this.#memoryBytes = load.memoryBytes ?? this.#memoryBytes;
    this.#spread();
  }

  /** Running pods and the usage each was given, once every one carries its share. */
  spreadEvenly(): boolean {
    if (this.#failed) throw this.#failed;
    const running = this.#running();
    return running.length > 0 && running.every((p) => p.metadata.annotations?.[FAKE_USAGE_ANNOTATION] === this.#share(running.length));
  }

  #running(): Pod[] {
    return this.tracker.alive().filter((p) => p.status?.phase === 'Running');
  }

  #share(n: number): string {
    return `cpu=${Math.floor(this.#cpuMilli / n)}m,memory=${Math.floor(this.#memoryBytes / n)}`;
  }

  #spread(): void {
    this.#dirty = true;
    if (this.#busy) return;
    this.#busy = true;
    void (async () => {
      try {
        while (this.#dirty) {
          this.#dirty = false;
          const running = this.#running();
          const share = this.#share(running.length);
          // Lowered pods first: the total the pods report then never exceeds the load while it is spread.
          const amount = (p: Pod) =>
            Number(/cpu=(\d+)m/.exec(p.metadata.annotations?.[FAKE_USAGE_ANNOTATION] ?? '')?.[1] ?? 0) +
            Number(/memory=(\d+)/.exec(p.metadata.annotations?.[FAKE_USAGE_ANNOTATION] ?? '')?.[1] ?? 0);
          for (const pod of [...running].sort((x, y) => amount(y) - amount(x))) {
            if (pod.metadata.annotations?.[FAKE_USAGE_ANNOTATION] === share) continue;
            const res = await this.call(
              'PATCH',
              `/api/v1/namespaces/default/pods/${pod.metadata.name}`,
              { metadata: { annotations: { [FAKE_USAGE_ANNOTATION]: share } } },
              'application/merge-patch+json',
            );
            // A pod deleted meanwhile is no longer load's concern.
            if (res.status !== 200 && res.status !== 404) throw new Error(`annotating ${pod.metadata.name}: ${res.status} ${JSON.stringify(res.body)}`);
          }
        }
      } catch (err) {
        this.#failed = err;
      } finally {
        this.#busy = false;
      }
    })();
  }
}

describe('HorizontalPodAutoscaler (real master, fake-provider worker)', () => {
  let master: MasterProcess;
  let worker: FakeWorker | undefined;
  const loads: SpreadLoad[] = [];

  const call = async <T = unknown>(method: string, path: string, body?: unknown, contentType = 'application/json') => {
    const res = await fetch(`${master.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${master.token}`, 'content-type': contentType },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      /* not JSON */
    }
    return { status: res.status, body: parsed as T };
  };
  // Asynchronous, so the pod watches keep being read while a command runs.
  const cli = (...args: string[]) =>
    new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) => {
      const child = spawn(process.execPath, [BINARY, ...args], { env: master.env, stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d) => {
        stdout += d;
      });
      child.stderr.on('data', (d) => {
        stderr += d;
      });
      const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
      child.once('close', (status) => {
        clearTimeout(timer);
        resolve({ status, stdout, stderr });
      });
    });
  const replicas = async (name: string) => (await call<Deployment>('GET', `${DEPLOY}/${name}`)).body.spec.replicas as number;
  const hpa = async (name: string) => (await call<HorizontalPodAutoscaler>('GET', `${HPA}/${name}`)).body;
  const condition = (h: HorizontalPodAutoscaler, type: string) => h.status?.conditions?.find((c) => c.type === type);
  const deployment = (name: string, requests: Record<string, string>) =>
    call('POST', DEPLOY, {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name },
      spec: {
        replicas: 1,
        selector: { matchLabels: { app: name } },
        template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'app', image: 'nothing/pulls:one', resources: { requests } }] } },
      },
    });
  /** Waits until the Deployment is asked for `n` replicas and the load is spread over `n` Running pods. */
  const settlesAt = async (load: SpreadLoad, name: string, n: number, description: string) => {
    await waitFor(
      async () => (await replicas(name)) === n && load.tracker.alive().filter((p) => p.status?.phase === 'Running').length === n && load.spreadEvenly(),
      { timeoutMs: 60_000, intervalMs: 100, description },
    );
  };

  before(async () => {
    master = await startMaster({ registry: false, extraArgs: ['--hpa-sync-period', '1'] });
    const name = `hpa-${process.pid}`;
    worker = await startFakeWorker({
      master,
      // One fake node through the real kubelet: it serves the stats the autoscaler reads (a --fake-nodes host serves none).
      args: ['--kubelet-address', '127.0.0.1', '--provider=fake', '--name', name, '--fake-node-heartbeat', '2'],
      readyNodes: 1,
      namePrefix: name,
    });
  });

  after(async () => {
    for (const load of loads) await load.tracker.stop();
    await worker?.stop();
    await master?.stop();
  });

  it('cpu Utilization: up to min, up with load, capped at max, down to min after the window; get, describe and autoscale', async () => {
    assert.equal((await deployment('web', { cpu: '500m', memory: '64Mi' })).status, 201);
    const load = new SpreadLoad(call, master, 'web');
    loads.push(load);
    load.set({ cpuMilli: 200, memoryBytes: 32 * Mi });

    const made = await cli('autoscale', 'deployment', 'web', '--min=2', '--max=5', '--cpu-percent=50');
    assert.equal(made.status, 0, made.stderr);
    assert.equal(made.stdout, 'horizontalpodautoscaler.autoscaling/web autoscaled\n');
    const again = await cli('autoscale', 'deploy/web', '--max=5');
    assert.equal(again.status, 1);
    assert.match(again.stderr, /horizontalpodautoscalers\.autoscaling "web" already exists/);
    const missing = await cli('autoscale', 'rs/nothing', '--max=5');
    assert.equal(missing.status, 1);
    assert.match(missing.stderr, /replicasets\.apps "nothing" not found/);
    // A short scale-down window, as the test cannot wait Kubernetes' 5 minutes.
    const patched = await call('PATCH', `${HPA}/web`, { spec: { behavior: { scaleDown: { stabilizationWindowSeconds: 5 } } } }, 'application/merge-patch+json');
    assert.equal(patched.status, 200, JSON.stringify(patched.body));

    // 1 replica is below min: raised at once, then 200m over 2 pods (20%) wants 1, held at min.
    await settlesAt(load, 'web', 2, 'raised to minReplicas 2');
    await waitFor(async () => (await hpa('web')).status?.currentMetrics?.[0]?.resource?.current?.averageUtilization === 20, {
      timeoutMs: 30_000,
      description: '20% measured',
    });
    const low = await waitFor(
      async () => {
        const h = await hpa('web');
        return condition(h, 'ScalingLimited')?.reason === 'TooFewReplicas' ? h : undefined;
      },
      { timeoutMs: 30_000, description: 'TooFewReplicas' },
    );
    assert.equal(condition(low, 'ScalingActive')!.reason, 'ValidMetricFound');
    const table = await cli('get', 'hpa');
    assert.equal(table.status, 0, table.stderr);
    assert.match(table.stdout, /^NAME +REFERENCE +TARGETS +MINPODS +MAXPODS +REPLICAS +AGE\nweb +Deployment\/web +cpu: 20%\/50% +2 +5 +2 +\d+s\n$/);

    // 1000m over 2 pods is 100% of their requests: 4 pods bring it to 50%.
    load.set({ cpuMilli: 1000 });
    await settlesAt(load, 'web', 4, 'scaled up to 4');
    await waitFor(async () => (await hpa('web')).status?.currentMetrics?.[0]?.resource?.current?.averageUtilization === 50, {
      timeoutMs: 30_000,
      description: '50% at 4 pods',
    });
    const events = (await call<{ items: Event[] }>('GET', '/api/v1/namespaces/default/events')).body.items;
    const rescales = events.filter((e) => e.involvedObject.kind === 'HorizontalPodAutoscaler' && e.reason === 'SuccessfulRescale').map((e) => e.message);
    assert.ok(rescales.includes('New size: 2; reason: Current number of replicas below Spec.MinReplicas'), rescales.join('; '));
    assert.ok(rescales.includes('New size: 4; reason: cpu resource utilization (percentage of request) above target'), rescales.join('; '));

    // Far more load than 5 pods can take: 5, and never more.
    load.tracker.resetMax();
    load.set({ cpuMilli: 10_000 });
    await settlesAt(load, 'web', 5, 'capped at maxReplicas 5');
    const capped = await waitFor(
      async () => {
        const h = await hpa('web');
        return condition(h, 'ScalingLimited')?.reason === 'TooManyReplicas' ? h : undefined;
      },
      { timeoutMs: 30_000, description: 'TooManyReplicas' },
    );
    assert.equal(condition(capped, 'ScalingLimited')!.status, 'True');
    assert.ok(load.tracker.max <= 5, `${load.tracker.max} pods at once`);
    // The status catches up with the rescale at the next sync.
    await waitFor(
      async () => {
        const h = await hpa('web');
        return h.status?.currentReplicas === 5 && h.status.currentMetrics?.[0]?.resource?.current?.averageUtilization === 400;
      },
      { timeoutMs: 30_000, description: '400% measured at 5 pods' },
    );

    const described = await cli('describe', 'hpa', 'web');
    assert.equal(described.status, 0, described.stderr);
    assert.match(described.stdout, /Reference: +Deployment\/web\n/);
    assert.match(described.stdout, /resource cpu on pods {2}\(as a percentage of request\): +400% \(2\) \/ 50%\n/);
    assert.match(described.stdout, /Min replicas: +2\nMax replicas: +5\n/);
    assert.match(described.stdout, /Deployment pods: +5 current \/ 5 desired\n/);
    assert.match(described.stdout, /ScalingLimited +True +TooManyReplicas +the desired replica count is more than the maximum replica count\n/);
    assert.match(
      described.stdout,
      /Normal +SuccessfulRescale .* horizontal-pod-autoscaler +New size: 5; reason: cpu resource utilization \(percentage of request\) above target\n/,
    );

    // Load gone: after the 5 s window, down to min and no lower.
    const quiet = Date.now();
    load.set({ cpuMilli: 100 });
    await settlesAt(load, 'web', 2, 'scaled down to minReplicas 2');
    assert.ok(Date.now() - quiet >= 4_000, `scaled down ${Date.now() - quiet} ms after the load dropped, inside the 5 s window`);
    const down = await hpa('web');
    assert.ok(down.status.lastScaleTime, 'lastScaleTime set');
    assert.equal(down.status.observedGeneration, down.metadata.generation);
  });

  it('memory AverageValue: up and down with the memory in use', async () => {
    assert.equal((await deployment('mem', { cpu: '100m', memory: '256Mi' })).status, 201);
    const load = new SpreadLoad(call, master, 'mem');
    loads.push(load);
    load.set({ cpuMilli: 10, memoryBytes: 60 * Mi });
    const created = await call('POST', HPA, {
      apiVersion: 'autoscaling/v2',
      kind: 'HorizontalPodAutoscaler',
      metadata: { name: 'mem' },
      spec: {
        scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'mem' },
        minReplicas: 1,
        maxReplicas: 4,
        metrics: [{ type: 'Resource', resource: { name: 'memory', target: { type: 'AverageValue', averageValue: '100Mi' } } }],
        behavior: { scaleDown: { stabilizationWindowSeconds: 3 } },
      },
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    await waitFor(async () => (await hpa('mem')).status?.currentMetrics?.[0]?.resource?.current?.averageValue === '60Mi', {
      timeoutMs: 30_000,
      description: '60Mi measured',
    });
    assert.equal(await replicas('mem'), 1);

    // 300Mi in all: 3 pods of 100Mi.
    load.set({ memoryBytes: 300 * Mi });
    await settlesAt(load, 'mem', 3, 'scaled up to 3 on memory');
    await waitFor(
      async () => {
        const h = await hpa('mem');
        return h.status?.currentReplicas === 3 && h.status.currentMetrics?.[0]?.resource?.current?.averageValue === '100Mi';
      },
      { timeoutMs: 30_000, description: '100Mi measured at 3 pods' },
    );
    const table = await cli('get', 'hpa', 'mem');
    assert.match(table.stdout, /mem +Deployment\/mem +memory: 100Mi\/100Mi +1 +4 +3 /);

    load.set({ memoryBytes: 50 * Mi });
    await settlesAt(load, 'mem', 1, 'scaled down to 1 on memory');
    const rescales = (await call<{ items: Event[] }>('GET', '/api/v1/namespaces/default/events')).body.items
      .filter((e) => e.involvedObject.name === 'mem' && e.reason === 'SuccessfulRescale')
      .map((e) => e.message);
    assert.deepEqual(rescales, ['New size: 3; reason: memory resource above target', 'New size: 1; reason: All metrics below target']);
  });
});
