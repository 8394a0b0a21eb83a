// End to end on three simulated machines: the scheduler's policy, affinity, selectors and taints with real workers; pod-to-pod and host-to-pod traffic over the overlay; a worker or its engine killed goes NotReady, new pods go elsewhere, and it comes back.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import type { Event } from '../src/core/api/event.js';
import type { Node } from '../src/core/api/node.js';
import type { Pod } from '../src/core/api/pod.js';
import { waitFor } from '../src/core/wait-for.js';
import { BINARY } from './helpers/master.js';
import { createNetnsCluster, findExecutable, netnsSkipReason, type NetnsCluster, type NetnsWorker } from './helpers/netns-node.js';

const NS = `cluster-e2e-${process.pid}`;
const MERGE = 'application/merge-patch+json';
const skip = netnsSkipReason();

/** How soon a dead worker must show as not Ready: the master's 40 s grace period plus its 5 s check, with room to spare. */
const NOT_READY_WITHIN_MS = 50_000;

describe('three machines: scheduling, the overlay, and nodes that die and come back', { skip }, () => {
  let cluster: NetnsCluster;
  let workers: NetnsWorker[];
  const timings: string[] = [];

  const master = () => cluster.master;
  const cli = (...args: string[]) => spawnSync(process.execPath, [BINARY, ...args], { env: master().env, encoding: 'utf8', timeout: 60_000 });
  /** The answer's JSON, as the caller says it is. */
  const api = async <T = unknown>(method: string, path: string, body?: unknown, contentType = 'application/json') => {
    const res = await fetch(`${master().url}${path}`, {
      method,
      headers: { authorization: `Bearer ${master().token}`, 'content-type': contentType },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const json: unknown = await res.json();
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${(json as { message?: string } | null)?.message}`);
    return json as T;
  };
  const getPod = (name: string) => api<Pod>('GET', `/api/v1/namespaces/${NS}/pods/${name}`);
  const getNode = (w: NetnsWorker) => api<Node>('GET', `/api/v1/nodes/${w.nodeName}`);
  const ready = (n: Node) => n.status?.conditions?.find((c) => c.type === 'Ready')?.status;
  const createPod = (name: string, spec: Record<string, unknown>, labels: Record<string, string> = {}) =>
    api('POST', `/api/v1/namespaces/${NS}/pods`, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, namespace: NS, labels },
      spec: { terminationGracePeriodSeconds: 1, containers: [{ name: 'app', image: 'busybox:1.35', command: ['sleep', '3600'] }], ...spec },
    });
  const boundNode = (name: string, timeoutMs = 30_000) =>
    waitFor(async () => (await getPod(name)).spec.nodeName || undefined, { timeoutMs, intervalMs: 100, description: `pod ${name} to be bound` });
  const waitRunning = (name: string) =>
    waitFor(
      async () => {
        const pod = await getPod(name);
        return pod.status?.phase === 'Running' && pod.status.podIP && (pod.status.containerStatuses ?? []).every((c) => c.ready) ? pod : undefined;
      },
      { timeoutMs: 90_000, intervalMs: 200, description: `pod ${name} to be Running and Ready` },
    );
  const failedScheduling = (name: string) =>
    waitFor(
      async () => {
        const events = await api<{ items: Event[] }>('GET', `/api/v1/namespaces/${NS}/events?fieldSelector=involvedObject.name=${name}`);
        return events.items.find((e) => e.reason === 'FailedScheduling')?.message;
      },
      { timeoutMs: 30_000, intervalMs: 200, description: `a FailedScheduling event for ${name}` },
    );
  const nodeOf = (name: string) => workers.findIndex((w) => w.nodeName === name);
  /** Runs a command in a machine's network namespace, as a program on that node's host would. */
  const onHost = (w: NetnsWorker, ...command: string[]) =>
    spawnSync(findExecutable('nsenter')!, [`--net=/var/run/netns/${w.machine.netns}`, '--', ...command], { encoding: 'utf8', timeout: 30_000 });

  before(
    async () => {
      cluster = await createNetnsCluster({ machines: ['n1', 'n2', 'n3'], log: (line) => timings.push(line) });
      workers = cluster.workers;
      await api('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
      await Promise.all(
        workers.map((w) => waitFor(async () => ready(await getNode(w)) === 'True', { timeoutMs: 30_000, description: `node ${w.nodeName} to be Ready` })),
      );
    },
    { timeout: 20 * 60_000 },
  );

  after(
    async () => {
      const started = Date.now();
      try {
        await cluster?.destroy();
      } finally {
        timings.push(`cleanup took ${((Date.now() - started) / 1000).toFixed(1)} s`);
        console.log(`cluster-e2e timings:\n  ${timings.join('\n  ')}`);
      }
    },
    { timeout: 120_000 },
  );

  it('spreads pods with no node over the three nodes (least allocated)', async () => {
    const names = Array.from({ length: 6 }, (_, i) => `spread-${i}`);
    for (const name of names) {
      await createPod(name, {
        containers: [{ name: 'app', image: 'busybox:1.35', command: ['sleep', '3600'], resources: { requests: { cpu: '100m', memory: '64Mi' } } }],
      });
    }
    const placed = await Promise.all(names.map((n) => boundNode(n)));
    const counts = workers.map((w) => placed.filter((n) => n === w.nodeName).length);
    assert.deepEqual([...counts].sort(), [2, 2, 2], `pods per node: ${counts.join(', ')}`);
    // Bound pods run on the node they were bound to.
    const pod = await waitRunning(names[0]!);
    assert.equal(pod.status?.hostIP, workers[nodeOf(pod.spec.nodeName!)]!.machine.ip);
    const scheduled = await api<{ items: Event[] }>('GET', `/api/v1/namespaces/${NS}/events?fieldSelector=involvedObject.name=${names[0]}`);
    assert.ok(scheduled.items.some((e) => e.reason === 'Scheduled' && e.message === `Successfully assigned ${NS}/${names[0]} to ${pod.spec.nodeName}`));
  });

  it('never puts two pods with required anti-affinity on one node; the fourth fits nowhere and says why', async () => {
    const antiAffinity = {
      affinity: {
        podAntiAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: [{ labelSelector: { matchLabels: { pair: 'apart' } }, topologyKey: 'kubernetes.io/hostname' }],
        },
      },
    };
    for (const name of ['apart-a', 'apart-b', 'apart-c']) await createPod(name, antiAffinity, { pair: 'apart' });
    const nodes = await Promise.all(['apart-a', 'apart-b', 'apart-c'].map((n) => boundNode(n)));
    assert.equal(new Set(nodes).size, 3, `on ${nodes.join(', ')}`);
    await createPod('apart-d', antiAffinity, { pair: 'apart' });
    assert.equal(await failedScheduling('apart-d'), "0/3 nodes are available: 3 node(s) didn't match pod anti-affinity rules.");
    const pending = await getPod('apart-d');
    assert.equal(pending.status?.phase, 'Pending');
    assert.equal(pending.spec.nodeName ?? '', '');
    const condition = pending.status?.conditions?.find((c) => c.type === 'PodScheduled');
    assert.equal(condition?.status, 'False');
    assert.equal(condition?.reason, 'Unschedulable');
    // It gets its place once one of the others goes.
    await api('DELETE', `/api/v1/namespaces/${NS}/pods/apart-a`, { apiVersion: 'v1', kind: 'DeleteOptions', gracePeriodSeconds: 0 });
    assert.equal(await boundNode('apart-d', 40_000), nodes[0]);
  });

  it('respects a nodeSelector and a taint with its toleration; a pod that fits nowhere stays Pending with the reason per node', async () => {
    const [n1, n2, n3] = workers as [NetnsWorker, NetnsWorker, NetnsWorker];
    await api('PATCH', `/api/v1/nodes/${n2.nodeName}`, { metadata: { labels: { disk: 'ssd' } } }, MERGE);
    await api('PATCH', `/api/v1/nodes/${n3.nodeName}`, { spec: { taints: [{ key: 'dedicated', value: 'special', effect: 'NoSchedule' }] } }, MERGE);
    try {
      for (let i = 0; i < 3; i++) await createPod(`ssd-${i}`, { nodeSelector: { disk: 'ssd' } });
      assert.deepEqual(await Promise.all([0, 1, 2].map((i) => boundNode(`ssd-${i}`))), [n2.nodeName, n2.nodeName, n2.nodeName]);

      const onN3 = { nodeSelector: { 'kubernetes.io/hostname': n3.nodeName } };
      await createPod('tolerant', { ...onN3, tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'special', effect: 'NoSchedule' }] });
      assert.equal(await boundNode('tolerant'), n3.nodeName);
      await createPod('intolerant', onN3);
      assert.equal(
        await failedScheduling('intolerant'),
        "0/3 nodes are available: 2 node(s) didn't match Pod's node affinity/selector, 1 node(s) had untolerated taint {dedicated: special}.",
      );
      // Untainted pods still never land on n3 while the taint is there.
      for (let i = 0; i < 4; i++) await createPod(`elsewhere-${i}`, {});
      const placed = await Promise.all([0, 1, 2, 3].map((i) => boundNode(`elsewhere-${i}`)));
      assert.ok(
        placed.every((n) => n === n1.nodeName || n === n2.nodeName),
        `placed on ${placed.join(', ')}`,
      );

      await createPod('huge', { containers: [{ name: 'app', image: 'busybox:1.35', resources: { requests: { memory: '100Ti' } } }] });
      assert.match(
        await failedScheduling('huge'),
        /^0\/3 nodes are available: (2 Insufficient memory, 1 node\(s\) had untolerated taint \{dedicated: special\}|3 Insufficient memory)\.$/,
      );
      const described = cli('describe', 'pod', 'huge', '-n', NS);
      assert.equal(described.status, 0, described.stderr);
      assert.match(described.stdout, /FailedScheduling/);
    } finally {
      await api('PATCH', `/api/v1/nodes/${n3.nodeName}`, { spec: { taints: null } }, MERGE);
    }
  });

  it("carries pod traffic between nodes over the overlay, keeping the client pod's address, and every node's host reaches every pod", async () => {
    const server = (i: number) => `web-${i}`;
    for (const [i, w] of workers.entries()) {
      // Answers with its own name, and logs the address each request came from.
      await createPod(server(i), {
        nodeName: w.nodeName,
        containers: [
          {
            name: 'web',
            image: 'python:3.11',
            ports: [{ containerPort: 8080 }],
            command: [
              'python3',
              '-u',
              '-c',
              [
                'import http.server, os',
                'class H(http.server.BaseHTTPRequestHandler):',
                '    def do_GET(self):',
                '        body = os.environ["POD"].encode()',
                '        print("from", self.client_address[0], flush=True)',
                '        self.send_response(200); self.send_header("Content-Length", str(len(body))); self.end_headers(); self.wfile.write(body)',
                'http.server.ThreadingHTTPServer(("", 8080), H).serve_forever()',
              ].join('\n'),
            ],
            env: [{ name: 'POD', value: server(i) }],
            readinessProbe: { tcpSocket: { port: 8080 }, periodSeconds: 1 },
          },
        ],
      });
    }
    const pods = await Promise.all(workers.map((_, i) => waitRunning(server(i))));
    const ips = pods.map((p) => p.status!.podIP!);

    // A pod on node 1 fetches from the pod on node 3, by pod IP.
    const fetched = cli(
      'exec',
      server(0),
      '-n',
      NS,
      '--',
      'python3',
      '-c',
      `import urllib.request; print(urllib.request.urlopen("http://${ips[2]}:8080/", timeout=10).read().decode())`,
    );
    assert.equal(fetched.status, 0, fetched.stderr);
    assert.equal(fetched.stdout.trim(), server(2));
    const logs = await waitFor(
      () => {
        const r = cli('logs', server(2), '-n', NS);
        return r.stdout.includes(`from ${ips[0]}`) ? r.stdout : undefined;
      },
      { timeoutMs: 10_000, description: "the server on node 3 to log the client pod's address" },
    );
    assert.match(logs, new RegExp(`from ${ips[0]!.replace(/\./g, '\\.')}`));

    // Every node's host reaches every pod (its own through the bridge, the others' through the overlay).
    for (const w of workers) {
      for (const [i, ip] of ips.entries()) {
        const r = onHost(w, findExecutable('curl')!, '-sS', '-m', '10', `http://${ip}:8080/`);
        assert.equal(r.status, 0, `${w.machine.name} -> ${ip}: ${r.stderr}`);
        assert.equal(r.stdout, server(i));
      }
    }
  });

  it('marks a worker whose process died NotReady within 50 s, schedules new pods elsewhere, and has it Ready again when it restarts', async () => {
    const victim = workers[2]!;
    process.kill(victim.pid, 'SIGKILL');
    const killed = Date.now();
    const node = await waitFor(
      async () => {
        const n = await getNode(victim);
        return ready(n) === 'Unknown' ? n : undefined;
      },
      { timeoutMs: NOT_READY_WITHIN_MS, intervalMs: 500, description: `node ${victim.nodeName} to be NotReady after its worker died` },
    );
    timings.push(`worker killed: NotReady after ${((Date.now() - killed) / 1000).toFixed(1)} s`);
    assert.ok(node.spec?.taints?.some((t) => t.key === 'node.kubernetes.io/unreachable' && t.effect === 'NoExecute'));
    assert.match(cli('get', 'nodes').stdout, new RegExp(`${victim.nodeName}\\s+NotReady`));

    for (let i = 0; i < 3; i++) await createPod(`after-death-${i}`, {});
    const placed = await Promise.all([0, 1, 2].map((i) => boundNode(`after-death-${i}`)));
    assert.ok(!placed.includes(victim.nodeName), `placed on ${placed.join(', ')}`);

    await cluster.restartWorker(2);
    await waitFor(
      async () => {
        const n = await getNode(victim);
        return ready(n) === 'True' && !n.spec?.taints?.some((t) => t.key.startsWith('node.kubernetes.io/')) ? n : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 500, description: `node ${victim.nodeName} to be Ready and untainted again` },
    );
  });

  it('marks a node whose container engine died NotReady, schedules elsewhere, and Ready again once the engine is back', async () => {
    const victim = workers[1]!;
    process.kill(victim.machine.dockerdPid, 'SIGKILL');
    const killed = Date.now();
    const node = await waitFor(
      async () => {
        const n = await getNode(victim);
        return ready(n) === 'False' || ready(n) === 'Unknown' ? n : undefined;
      },
      { timeoutMs: NOT_READY_WITHIN_MS, intervalMs: 500, description: `node ${victim.nodeName} to be NotReady after its dockerd died` },
    );
    timings.push(`dockerd killed: NotReady after ${((Date.now() - killed) / 1000).toFixed(1)} s`);
    assert.match(node.status?.conditions?.find((c) => c.type === 'Ready')?.message ?? '', /container runtime is down|Kubelet stopped posting/);
    await waitFor(async () => (await getNode(victim)).spec?.taints?.some((t) => t.key.startsWith('node.kubernetes.io/')), {
      timeoutMs: 15_000,
      description: `node ${victim.nodeName} to be tainted`,
    });

    for (let i = 0; i < 3; i++) await createPod(`no-engine-${i}`, {});
    const placed = await Promise.all([0, 1, 2].map((i) => boundNode(`no-engine-${i}`)));
    assert.ok(!placed.includes(victim.nodeName), `placed on ${placed.join(', ')}`);

    await cluster.restartDockerd(1);
    await waitFor(
      async () => {
        const n = await getNode(victim);
        return ready(n) === 'True' && !n.spec?.taints?.some((t) => t.key.startsWith('node.kubernetes.io/')) ? n : undefined;
      },
      { timeoutMs: 40_000, intervalMs: 500, description: `node ${victim.nodeName} to be Ready again` },
    );
  });

  it('keeps pods running untouched while the master is killed, and carries on when it restarts', async () => {
    const running = async () =>
      (await Promise.all(workers.map((w) => w.machine.docker.listContainers({ filters: { label: [`minik8s.io/node=${w.nodeName}`] } })))).flat();
    const containerIDs = async () => (await running()).map((c) => c.Id).sort();
    // Earlier tests restarted a worker and an engine: their pods' containers may still be being replaced or removed.
    // The snapshot is taken once what runs is exactly what the pods report.
    await waitFor(
      async () => {
        const pods = (await api<{ items: Pod[] }>('GET', `/api/v1/namespaces/${NS}/pods`)).items.filter((p) => p.spec.nodeName);
        if (pods.some((p) => p.metadata.deletionTimestamp)) return false;
        const live = pods.filter((p) => p.status?.phase === 'Running');
        if (pods.some((p) => !['Running', 'Succeeded', 'Failed'].includes(p.status?.phase ?? ''))) return false;
        const reported = new Set(
          live.flatMap((p) => (p.status?.containerStatuses ?? []).map((c) => (c.state?.running ? c.containerID?.replace(/^docker:\/\//, '') : 'not running'))),
        );
        const uids = new Set(live.map((p) => p.metadata.uid));
        const now = await running();
        const apps = now.filter((c) => c.Labels['minik8s.io/role'] === 'app').map((c) => c.Id);
        return now.every((c) => uids.has(c.Labels['minik8s.io/pod-uid'])) && apps.length === reported.size && apps.every((id) => reported.has(id));
      },
      { timeoutMs: 60_000, intervalMs: 500, description: 'the containers on the nodes to be exactly those of the running pods' },
    );
    const before = await containerIDs();
    assert.ok(before.length > 0);
    process.kill(master().pid, 'SIGKILL');
    // Workers keep their pods while they cannot reach the master.
    await waitFor(
      async () => {
        try {
          await fetch(`${master().url}/readyz`);
          return false;
        } catch {
          return true;
        }
      },
      { timeoutMs: 10_000, description: 'the master to be gone' },
    );
    assert.deepEqual(await containerIDs(), before);

    await cluster.restartMaster();
    await Promise.all(
      workers.map((w) =>
        waitFor(async () => ready(await getNode(w)) === 'True', { timeoutMs: 30_000, description: `node ${w.nodeName} Ready after the master restarted` }),
      ),
    );
    const pod = await getPod('spread-0');
    assert.equal(pod.status?.phase, 'Running');
    assert.deepEqual(await containerIDs(), before, 'no container was restarted or replaced');
    await createPod('after-restart', {});
    assert.ok(workers.some((w) => w.nodeName === pod.spec.nodeName));
    await waitRunning('after-restart');
  });
});
