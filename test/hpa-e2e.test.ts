// End to end on simulated machines: an HPA scales a cpu-burning Deployment up under load through its Service and down once it stops, and a memory-filling one likewise, while a client finds both Services answering throughout.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Deployment } from '../src/core/api/deployment.js';
import type { Event } from '../src/core/api/event.js';
import type { HorizontalPodAutoscaler } from '../src/core/api/horizontalpodautoscaler.js';
import type { Pod } from '../src/core/api/pod.js';
import type { Service } from '../src/core/api/service.js';
import { waitFor } from '../src/core/wait-for.js';
import { BINARY } from './helpers/master.js';
import { createNetnsCluster, findExecutable, netnsSkipReason, type NetnsCluster } from './helpers/netns-node.js';

const NS = `hpa-e2e-${process.pid}`;
const skip = netnsSkipReason();

/**
 * The workload: /work?ms=N burns N ms of cpu, /alloc?mb=N holds N MiB (written, so resident),
 * /free lets it go. On SIGTERM it keeps serving 2 s before it exits, so requests the proxies still
 * send it while its endpoint is being removed are answered (what a preStop sleep does elsewhere).
 */
const SERVER = [
  'import http.server, os, signal, threading, time, urllib.parse',
  'held = []',
  'class H(http.server.BaseHTTPRequestHandler):',
  '    def do_GET(self):',
  '        u = urllib.parse.urlparse(self.path); q = urllib.parse.parse_qs(u.query)',
  '        if u.path == "/work":',
  '            end = time.process_time() + int(q.get("ms", ["20"])[0]) / 1000',
  '            while time.process_time() < end: pass',
  '        elif u.path == "/alloc":',
  '            held.append(b"\\x01" * (int(q["mb"][0]) << 20))',
  '        elif u.path == "/free":',
  '            held.clear()',
  '        body = b"ok"',
  '        self.send_response(200); self.send_header("Content-Length", str(len(body))); self.end_headers(); self.wfile.write(body)',
  '    def log_message(self, *a): pass',
  'signal.signal(signal.SIGTERM, lambda *a: threading.Timer(2, lambda: os._exit(0)).start())',
  'http.server.ThreadingHTTPServer(("", 8080), H).serve_forever()',
].join('\n');

/**
 * Runs on a node's host: probes each service every 200 ms and, while load is on (`load-on` /
 * `load-off` on stdin), asks the first for /work?ms=20 every 100 ms: about 200m of cpu spread by
 * the proxy over the pods (a new connection each time, so each request is balanced anew).
 * Bounded: it ends on `end` or after 5 minutes, printing what it saw as JSON.
 */
const DRIVER = `
import http from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
const [loadUrl, ...probeUrls] = process.argv.slice(2);
let loading = false;
let stop = false;
const deadline = Date.now() + 300_000;
const stats = { load: { ok: 0, failed: 0 }, probes: Object.fromEntries(probeUrls.map((u) => [u, { ok: 0, failed: 0, errors: [] }])) };
const get = (url) => new Promise((resolve) => {
  const req = http.get(url, { agent: false, timeout: 5000 }, (res) => {
    res.resume();
    res.on('end', () => resolve(res.statusCode === 200 ? undefined : 'HTTP ' + res.statusCode));
  });
  req.on('error', (err) => resolve(err.message));
  req.on('timeout', () => req.destroy(new Error('timed out')));
});
process.stdin.on('data', (d) => {
  const text = String(d);
  if (text.includes('load-on')) loading = true;
  if (text.includes('load-off')) loading = false;
  if (text.includes('end')) stop = true;
});
const running = () => !stop && Date.now() < deadline;
const load = async () => {
  while (running()) {
    const started = Date.now();
    if (loading) (await get(loadUrl + '/work?ms=20')) ? stats.load.failed++ : stats.load.ok++;
    await sleep(Math.max(0, 100 - (Date.now() - started)));
  }
};
const probe = async (url) => {
  while (running()) {
    const err = await get(url + '/');
    const s = stats.probes[url];
    if (err) { s.failed++; if (s.errors.length < 20) s.errors.push(new Date().toISOString() + ' ' + err); } else s.ok++;
    await sleep(200);
  }
};
console.log('driver ready');
await Promise.all([load(), ...probeUrls.map(probe)]);
console.log(JSON.stringify(stats));
process.exit(0);
`;

describe('HorizontalPodAutoscaler on two machines (real containers, cpu and memory)', { skip }, () => {
  let cluster: NetnsCluster;
  let scratch: string;
  let driver: ChildProcess | undefined;
  let driverOutput = '';
  const timings: string[] = [];

  const cli = (...args: string[]) => spawnSync(process.execPath, [BINARY, ...args], { env: cluster.master.env, encoding: 'utf8', timeout: 60_000 });
  const call = async (method: string, path: string, body?: unknown, contentType = 'application/json'): Promise<{ status: number; body: unknown }> => {
    const send = () =>
      fetch(`${cluster.master.url}${path}`, {
        method,
        headers: { authorization: `Bearer ${cluster.master.token}`, 'content-type': contentType },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    // After a spawnSync the server may have closed an idle kept-alive connection unnoticed: such a request was never sent.
    const res = await send().catch((err: Error & { cause?: { code?: string } }) => {
      if (err.cause?.code !== 'UND_ERR_SOCKET' && err.cause?.code !== 'ECONNRESET') throw err;
      return send();
    });
    return { status: res.status, body: await res.json() };
  };
  /** The answer's JSON, as the caller says it is. */
  const api = async <T = unknown>(method: string, path: string, body?: unknown) => {
    const res = await call(method, path, body);
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${(res.body as { message?: string } | null)?.message}`);
    return res.body as T;
  };
  const replicas = async (name: string) => (await api<Deployment>('GET', `/apis/apps/v1/namespaces/${NS}/deployments/${name}`)).spec.replicas as number;
  const readyPods = async (app: string) =>
    (await api<{ items: Pod[] }>('GET', `/api/v1/namespaces/${NS}/pods?labelSelector=app%3D${app}`)).items.filter(
      (p) => !p.metadata.deletionTimestamp && p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'),
    );
  /** A Deployment of the workload with its Service and HPA. */
  const workload = async (name: string, metric: unknown, maxReplicas: number) => {
    await api('POST', `/apis/apps/v1/namespaces/${NS}/deployments`, {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name },
      spec: {
        replicas: 1,
        selector: { matchLabels: { app: name } },
        template: {
          metadata: { labels: { app: name } },
          spec: {
            terminationGracePeriodSeconds: 5,
            containers: [
              {
                name: 'app',
                image: 'python:3.11',
                command: ['python3', '-u', '-c', SERVER],
                ports: [{ name: 'http', containerPort: 8080 }],
                resources: { requests: { cpu: '100m', memory: '64Mi' } },
                readinessProbe: { httpGet: { path: '/', port: 8080 }, periodSeconds: 1 },
              },
            ],
          },
        },
      },
    });
    await api('POST', `/api/v1/namespaces/${NS}/services`, {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name },
      spec: { selector: { app: name }, ports: [{ port: 80, targetPort: 'http' }] },
    });
    await api('POST', `/apis/autoscaling/v2/namespaces/${NS}/horizontalpodautoscalers`, {
      apiVersion: 'autoscaling/v2',
      kind: 'HorizontalPodAutoscaler',
      metadata: { name },
      spec: {
        scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name },
        minReplicas: 1,
        maxReplicas,
        metrics: [metric],
        // Kubernetes waits 5 minutes before scaling down; the test cannot.
        behavior: { scaleDown: { stabilizationWindowSeconds: 10 } },
      },
    });
  };
  /** Follows the Deployment's size until `done` holds, recording the largest seen. */
  const follow = async (name: string, done: (n: number) => boolean, description: string, seen: { max: number }) =>
    waitFor(
      async () => {
        const n = await replicas(name);
        seen.max = Math.max(seen.max, n);
        return done(n) ? n : undefined;
      },
      { timeoutMs: 90_000, intervalMs: 500, description },
    );
  const send = (line: string) => driver!.stdin!.write(`${line}\n`);

  before(
    async () => {
      scratch = mkdtempSync(join(tmpdir(), 'minik8s-hpa-e2e-'));
      writeFileSync(join(scratch, 'driver.mjs'), DRIVER);
      cluster = await createNetnsCluster({ machines: ['h1', 'h2'], masterArgs: ['--hpa-sync-period', '3'], log: (line) => timings.push(line) });
      await api('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
      await workload('burn', { type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 50 } } }, 4);
      await workload('hog', { type: 'Resource', resource: { name: 'memory', target: { type: 'AverageValue', averageValue: '60Mi' } } }, 3);
      const started = Date.now();
      await waitFor(async () => (await readyPods('burn')).length === 1 && (await readyPods('hog')).length === 1, {
        timeoutMs: 150_000,
        intervalMs: 500,
        description: 'the first pods Ready',
      });
      timings.push(`first pods Ready in ${((Date.now() - started) / 1000).toFixed(1)} s`);
      // The driver runs on h1's host, behind that node's service proxy.
      const ips = await Promise.all(
        ['burn', 'hog'].map(async (s) => `http://${(await api<Service>('GET', `/api/v1/namespaces/${NS}/services/${s}`)).spec.clusterIP}`),
      );
      driver = spawn(
        findExecutable('nsenter')!,
        [`--net=/var/run/netns/${cluster.workers[0]!.machine.netns}`, '--', process.execPath, join(scratch, 'driver.mjs'), ips[0]!, ...ips],
        { stdio: ['pipe', 'pipe', 'pipe'] },
      );
      driver.stdout!.on('data', (d) => {
        driverOutput += d;
      });
      driver.stderr!.on('data', (d) => {
        driverOutput += d;
      });
      await waitFor(() => driverOutput.includes('driver ready'), { timeoutMs: 20_000, description: 'the driver to start' });
    },
    { timeout: 300_000 },
  );

  after(
    async () => {
      if (driver && driver.exitCode === null) {
        driver.kill('SIGKILL');
        await new Promise((resolve) => driver!.once('exit', resolve));
      }
      if (scratch) rmSync(scratch, { recursive: true, force: true });
      const started = Date.now();
      try {
        await cluster?.destroy();
      } finally {
        timings.push(`cleanup took ${((Date.now() - started) / 1000).toFixed(1)} s`);
        console.log(`hpa-e2e timings:\n  ${timings.join('\n  ')}`);
      }
    },
    { timeout: 120_000 },
  );

  it('cpu: scales up within a minute of load through the Service, back to 1 after it stops, never above max', async () => {
    const seen = { max: 1 };
    const loadOn = Date.now();
    send('load-on');
    await follow('burn', (n) => n >= 2, 'a scale-up under load', seen);
    const upAfter = (Date.now() - loadOn) / 1000;
    timings.push(`cpu: scaled up ${upAfter.toFixed(1)} s after the load started`);
    assert.ok(upAfter <= 60, `scaled up only after ${upAfter.toFixed(1)} s`);
    // Under load until the new pods are Ready and the HPA has measured them, then stop.
    await waitFor(async () => (await readyPods('burn')).length === (await replicas('burn')), {
      timeoutMs: 90_000,
      intervalMs: 500,
      description: 'the new pods Ready',
    });
    const h = await waitFor(
      async () => {
        const got = await api<HorizontalPodAutoscaler>('GET', `/apis/autoscaling/v2/namespaces/${NS}/horizontalpodautoscalers/burn`);
        return (got.status?.currentReplicas ?? 0) >= 2 &&
          got.status.currentReplicas === (await replicas('burn')) &&
          got.status.currentMetrics?.[0]?.resource?.current?.averageUtilization !== undefined
          ? got
          : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 500, description: 'the HPA to measure the pods it added' },
    );
    timings.push(`cpu: under load ${JSON.stringify(h.status.currentMetrics![0].resource!.current)} at ${h.status.currentReplicas} replicas`);
    const loadOff = Date.now();
    send('load-off');
    await follow('burn', (n) => n === 1, 'back to 1 after the load stopped', seen);
    timings.push(`cpu: back to 1 ${((Date.now() - loadOff) / 1000).toFixed(1)} s after the load stopped (window 10 s); most replicas ${seen.max}`);
    assert.ok(seen.max <= 4, `${seen.max} replicas, above maxReplicas 4`);
    const events = (await api<{ items: Event[] }>('GET', `/api/v1/namespaces/${NS}/events`)).items;
    const rescales = events.filter((e) => e.involvedObject.name === 'burn' && e.reason === 'SuccessfulRescale').map((e) => e.message as string);
    assert.ok(
      rescales.some((m) => /^New size: [234]; reason: cpu resource utilization \(percentage of request\) above target$/.test(m)),
      rescales.join('; '),
    );
    assert.ok(
      rescales.some((m) => m === 'New size: 1; reason: All metrics below target'),
      rescales.join('; '),
    );
  });

  it('memory: 150 MiB held in one pod scales up to max, freeing it scales back to 1', async () => {
    const [pod] = await readyPods('hog');
    const seen = { max: 1 };
    const inPod = (path: string) => {
      const r = cli(
        'exec',
        pod.metadata.name!,
        '-n',
        NS,
        '--',
        'python3',
        '-c',
        `import urllib.request; urllib.request.urlopen("http://127.0.0.1:8080${path}").read()`,
      );
      assert.equal(r.status, 0, r.stderr);
    };
    const filled = Date.now();
    inPod('/alloc?mb=150');
    // About 165Mi against 60Mi per pod: 3, the most allowed.
    await follow('hog', (n) => n === 3, 'a scale-up to 3 on memory', seen);
    timings.push(`memory: at 3 replicas ${((Date.now() - filled) / 1000).toFixed(1)} s after filling`);
    const table = cli('get', 'hpa', 'hog', '-n', NS);
    assert.match(table.stdout, /hog +Deployment\/hog +memory: \d+(Ki|Mi)\/60Mi +1 +3 +\d/);
    await waitFor(async () => (await readyPods('hog')).length === 3, { timeoutMs: 90_000, intervalMs: 500, description: 'three hog pods Ready' });
    const freed = Date.now();
    inPod('/free');
    await follow('hog', (n) => n === 1, 'back to 1 after freeing', seen);
    timings.push(`memory: back to 1 ${((Date.now() - freed) / 1000).toFixed(1)} s after freeing`);
    assert.ok(seen.max <= 3, `${seen.max} replicas, above maxReplicas 3`);
    const described = cli('describe', 'hpa', 'hog', '-n', NS);
    assert.equal(described.status, 0, described.stderr);
    assert.match(described.stdout, /resource memory on pods: +\d+(Ki|Mi) \/ 60Mi\n/);
    assert.match(described.stdout, /New size: 3; reason: memory resource above target/);
  });

  it('both Services answered every probe throughout', async () => {
    send('end');
    await waitFor(() => driver!.exitCode !== null, { timeoutMs: 20_000, description: 'the driver to finish' });
    const stats = JSON.parse(driverOutput.trim().split('\n').at(-1)!) as {
      load: { ok: number; failed: number };
      probes: Record<string, { ok: number; failed: number; errors: string[] }>;
    };
    timings.push(`driver: ${JSON.stringify(stats)}`);
    assert.ok(stats.load.ok > 100, `only ${stats.load.ok} load requests answered`);
    for (const [url, s] of Object.entries(stats.probes)) {
      assert.ok(s.ok > 100, `${url}: only ${s.ok} probes`);
      assert.equal(s.failed, 0, `${url}: ${s.errors.join('; ')}`);
    }
  });
});
