// End to end on several machines simulated on one: the master on the host, two workers each in a network namespace with its own dockerd, joined by a bridge; pods on each node, their images pulled from the master's registry, logs, exec and top through the master.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import Docker from 'dockerode';
import type { Node } from '../src/core/api/node.js';
import type { Pod } from '../src/core/api/pod.js';
import type { Status } from '../src/core/errors.js';
import { waitFor } from '../src/core/wait-for.js';
import { cidrContains } from '../src/core/api/ipv4.js';
import { BINARY } from './helpers/master.js';
import { createNetnsCluster, netnsSkipReason, type NetnsCluster, type NetnsWorker } from './helpers/netns-node.js';

const NS = `multi-node-${process.pid}`;
const MERGE = 'application/merge-patch+json';
const skip = netnsSkipReason();

describe('several machines on one: a master on the host, workers in network namespaces with their own dockerd', { skip }, () => {
  let cluster: NetnsCluster | undefined;
  let w1: NetnsWorker;
  let w2: NetnsWorker;
  const timings: string[] = [];
  let podsCreated = 0;

  const master = () => cluster!.master;
  const registry = () => `${cluster!.hostIP}:${master().registryPort}`;
  const cli = (...args: string[]) => spawnSync(process.execPath, [BINARY, ...args], { env: master().env, encoding: 'utf8', timeout: 60_000 });
  const ok = (...args: string[]) => {
    const r = cli(...args);
    assert.equal(r.status, 0, `minik8s ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
    return r.stdout;
  };
  /** The answer, its JSON as the caller says it is. */
  const call = async <T = unknown>(method: string, path: string, token: string, body?: unknown, contentType = 'application/json') => {
    const res = await fetch(`${master().url}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': contentType },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as T };
  };
  const api = async <T = unknown>(method: string, path: string, body?: unknown) => {
    const res = await call(method, path, master().token, body);
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${(res.body as { message?: string } | null)?.message}`);
    return res.body as T;
  };
  const node = (w: NetnsWorker) => api<Node>('GET', `/api/v1/nodes/${w.nodeName}`);
  const podName = (w: NetnsWorker) => `hello-${w.machine.name}`;
  const running = (pod: Pod) => pod.status?.phase === 'Running' && (pod.status.containerStatuses ?? []).every((c) => c.state?.running);
  const waitRunning = (w: NetnsWorker) =>
    waitFor(
      async () => {
        const pod = await api<Pod>('GET', `/api/v1/namespaces/${NS}/pods/${podName(w)}`);
        return running(pod) ? pod : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 200, description: `pod ${podName(w)} to run on ${w.nodeName}` },
    );

  // The timeout is a backstop: every wait inside has its own deadline; only a first build of the base images (minutes) takes long.
  before(
    async () => {
      const started = Date.now();
      cluster = await createNetnsCluster({ machines: ['w1', 'w2'], log: (line) => timings.push(line) });
      [w1, w2] = cluster.workers as [NetnsWorker, NetnsWorker];
      await api('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
      // One pod bound to each node (spec.nodeName): both pull and start side by side.
      await Promise.all(
        [w1, w2].map((w) =>
          api('POST', `/api/v1/namespaces/${NS}/pods`, {
            apiVersion: 'v1',
            kind: 'Pod',
            metadata: { name: podName(w), namespace: NS },
            spec: {
              nodeName: w.nodeName,
              containers: [{ name: 'app', image: 'busybox:1.35', command: ['sh', '-c', `echo hello from ${w.machine.name}; exec sleep 3600`] }],
            },
          }),
        ),
      );
      podsCreated = Date.now();
      timings.push(`cluster and pods created in ${((podsCreated - started) / 1000).toFixed(1)} s`);
    },
    { timeout: 20 * 60_000 },
  );

  after(
    async () => {
      for (const w of cluster?.workers ?? []) {
        for (const m of w.output().matchAll(/docker: (pulled \S+ in \d+ ms)/g)) timings.push(`${w.machine.name} ${m[1]}`);
      }
      const started = Date.now();
      try {
        await cluster?.destroy();
      } finally {
        timings.push(`cleanup took ${((Date.now() - started) / 1000).toFixed(1)} s`);
        console.log(`multi-node timings:\n  ${timings.join('\n  ')}`);
      }
    },
    { timeout: 120_000 },
  );

  it('joins both nodes: Ready, each with its own InternalIP on the bridge and its own pod /24', async () => {
    const nodes = await Promise.all(
      [w1, w2].map((w) =>
        waitFor(
          async () => {
            const n = await node(w);
            return n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ? n : undefined;
          },
          { timeoutMs: 30_000, description: `node ${w.nodeName} to be Ready` },
        ),
      ),
    );
    for (const [w, n] of [
      [w1, nodes[0]],
      [w2, nodes[1]],
    ] as const) {
      assert.deepEqual(
        n.status.addresses!.find((a) => a.type === 'InternalIP'),
        { type: 'InternalIP', address: w.machine.ip },
      );
      assert.equal(n.status.daemonEndpoints!.kubeletEndpoint!.Port, w.kubeletPort);
      assert.match(n.spec.podCIDR!, /\/24$/);
      assert.ok(cidrContains(master().clusterCIDR, n.spec.podCIDR!), `${n.spec.podCIDR} in ${master().clusterCIDR}`);
    }
    const bridgePrefix = cluster!.hostIP.replace(/\.1$/, '');
    assert.deepEqual([w1.machine.ip, w2.machine.ip], [`${bridgePrefix}.11`, `${bridgePrefix}.12`]);
    assert.notEqual(nodes[0].spec.podCIDR, nodes[1].spec.podCIDR);
    const listed = ok('get', 'nodes');
    for (const w of [w1, w2]) assert.match(listed, new RegExp(`${w.nodeName}\\s+Ready`));
  });

  it("runs a pod on each node, with images pulled by that node's own engine from the master's registry over the bridge", async () => {
    await Promise.all([w1, w2].map(waitRunning));
    timings.push(`both pods running ${((Date.now() - podsCreated) / 1000).toFixed(1)} s after their creation`);
    for (const w of [w1, w2]) {
      const pod = await waitRunning(w);
      const n = await node(w);
      assert.equal(pod.status?.hostIP, w.machine.ip);
      const prefix = n.spec.podCIDR!.split('.').slice(0, 3).join('.');
      assert.ok(pod.status?.podIP?.startsWith(`${prefix}.`), `${pod.status?.podIP} not in ${n.spec.podCIDR}`);
      const tags = (await w.machine.docker.listImages()).flatMap((i) => i.RepoTags ?? []);
      assert.ok(tags.includes(`${registry()}/busybox:1.35`), `${w.machine.name}'s engine has ${tags.join(', ')}`);
      assert.ok(tags.includes(`${registry()}/minik8s/pause:1.0`), `${w.machine.name}'s engine has ${tags.join(', ')}`);
      assert.match(w.output(), new RegExp(`pulled ${registry().replace(/\./g, '\\.')}/busybox:1\\.35`));
      // The pod's containers live in the machine's own engine, and only there.
      const containers = await w.machine.docker.listContainers({ filters: { label: [`minik8s.io/node=${w.nodeName}`] } });
      assert.ok(containers.length >= 2, 'a sandbox and the app container');
      const other = w === w1 ? w2 : w1;
      assert.deepEqual(await w.machine.docker.listContainers({ all: true, filters: { label: [`minik8s.io/node=${other.nodeName}`] } }), []);
    }
    const host = new Docker();
    const hostTags = (await host.listImages()).flatMap((i) => i.RepoTags ?? []);
    assert.deepEqual(
      hostTags.filter((t) => t.startsWith(`${cluster!.hostIP}:`)),
      [],
      'the host engine pulled nothing from the bridge registry',
    );
    for (const w of [w1, w2]) {
      assert.deepEqual(await host.listContainers({ all: true, filters: { label: [`minik8s.io/node=${w.nodeName}`] } }), []);
    }
  });

  it("serves logs and exec through the master from each node's kubelet at the node's address", async () => {
    for (const w of [w1, w2]) {
      const pod = await waitRunning(w);
      await waitFor(() => cli('logs', '-n', NS, podName(w)).stdout.includes(`hello from ${w.machine.name}`), {
        timeoutMs: 15_000,
        intervalMs: 200,
        description: `the log of ${podName(w)}`,
      });
      assert.equal(ok('logs', '-n', NS, podName(w)), `hello from ${w.machine.name}\n`);
      // Exec runs in that very pod: it sees the pod's own address.
      assert.match(
        ok('exec', '-n', NS, podName(w), '--', 'ip', '-4', '-o', 'addr', 'show', 'eth0'),
        new RegExp(`inet ${pod.status!.podIP!.replace(/\./g, '\\.')}/24`),
      );
      const r = cli('exec', '-n', NS, podName(w), '--', 'sh', '-c', `echo out on ${w.machine.name}; exit 7`);
      assert.equal(r.status, 7, r.stderr);
      assert.equal(r.stdout, `out on ${w.machine.name}\n`);
    }
  });

  it('shows both nodes in top nodes', async () => {
    const row = (w: NetnsWorker) => new RegExp(`${w.nodeName}\\s+\\d+m\\s+\\d+%\\s+\\d+Mi\\s+\\d+%`);
    await waitFor(
      () => {
        const t = cli('top', 'nodes');
        return t.status === 0 && row(w1).test(t.stdout) && row(w2).test(t.stdout);
      },
      { timeoutMs: 30_000, intervalMs: 500, description: 'top nodes to show both nodes with metrics' },
    );
  });

  it("keeps each node to itself: worker 1's credential may patch its own Node, not worker 2's (403)", async () => {
    const credential = w1.credential();
    assert.equal(credential.nodeName, w1.nodeName);
    const own = await call('PATCH', `/api/v1/nodes/${w1.nodeName}`, credential.token, { metadata: { labels: { 'e2e.minik8s.io/machine': 'w1' } } }, MERGE);
    assert.equal(own.status, 200, JSON.stringify(own.body));
    for (const path of [`/api/v1/nodes/${w2.nodeName}`, `/api/v1/nodes/${w2.nodeName}/status`]) {
      const other = await call<Status>('PATCH', path, credential.token, { metadata: { labels: { 'e2e.minik8s.io/machine': 'w1' } } }, MERGE);
      assert.equal(other.status, 403, `${path}: ${JSON.stringify(other.body)}`);
      assert.equal(other.body.kind, 'Status');
      assert.match(other.body.message, new RegExp(`^nodes "${w2.nodeName}" is forbidden: User "system:node:${w1.nodeName}"`));
    }
    assert.equal((await node(w2)).metadata.labels?.['e2e.minik8s.io/machine'], undefined);
  });
});
