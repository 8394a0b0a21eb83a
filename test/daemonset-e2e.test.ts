// A DaemonSet with real pods on real workers (Docker): one pod per node, a node that joins later gets its own, a cordoned node keeps it, and a new template rolls out node by node.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { type DaemonSet, daemonSetKind } from '../src/core/api/daemonset.js';
import { namespaceKind } from '../src/core/api/namespace.js';
import { type Pod, podKind } from '../src/core/api/pod.js';
import { ApiClient } from '../src/core/client/api-client.js';
import { waitFor } from '../src/core/wait-for.js';
import { BINARY, type MasterProcess, startMaster } from './helpers/master.js';
import { startWorker, type WorkerProcess } from './helpers/worker.js';

const NS = `ds-e2e-${process.pid}`;

describe('a DaemonSet on real workers', () => {
  let master: MasterProcess;
  const workers: WorkerProcess[] = [];
  let client: ApiClient;
  const cli = (...args: string[]) => spawnSync(process.execPath, [BINARY, ...args], { env: master.env, encoding: 'utf8', timeout: 60_000 });

  /** The agent pods running (container started) and Ready, by node. */
  const runningByNode = async () => {
    const list = (await client.list(podKind, { namespace: NS, labelSelector: 'app=agent' })).items as Pod[];
    const live = list.filter((p) => !p.metadata.deletionTimestamp);
    const ready = live.filter((p) => p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'));
    return { live, byNode: new Map(ready.map((p) => [p.spec.nodeName!, p])) };
  };
  const onNodes = (nodes: string[], check: (p: Pod) => boolean = () => true) =>
    waitFor(
      async () => {
        const { live, byNode } = await runningByNode();
        return live.length === nodes.length && nodes.every((n) => byNode.has(n) && check(byNode.get(n)!)) ? byNode : undefined;
      },
      { timeoutMs: 120_000, intervalMs: 500, description: `one Ready agent pod on each of ${nodes.join(', ')}` },
    );

  before(
    async () => {
      master = await startMaster({ seedImages: true });
      workers.push(await startWorker({ server: master.url, joinToken: master.joinToken }));
      client = new ApiClient({ server: master.url, token: master.token, tls: { ca: master.ca } });
      await client.create(namespaceKind, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
    },
    { timeout: 180_000 },
  );

  after(async () => {
    client?.close();
    for (const w of workers) await w.destroy();
    await master?.stop();
  });

  it('runs one pod per node, and one on a node that joins later', async () => {
    await client.create(
      daemonSetKind,
      {
        apiVersion: 'apps/v1',
        kind: 'DaemonSet',
        metadata: { name: 'agent', namespace: NS },
        spec: {
          selector: { matchLabels: { app: 'agent' } },
          updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1 } },
          template: {
            metadata: { labels: { app: 'agent' } },
            spec: {
              terminationGracePeriodSeconds: 0,
              containers: [
                {
                  name: 'agent',
                  image: 'busybox:1.35',
                  command: ['sh', '-c', 'echo "agent v1 on $NODE"; exec sleep 3600'],
                  env: [{ name: 'NODE', valueFrom: { fieldRef: { fieldPath: 'spec.nodeName' } } }],
                },
              ],
            },
          },
        },
      },
      { namespace: NS },
    );
    const first = await onNodes([workers[0]!.nodeName]);
    const name = first.get(workers[0]!.nodeName)!.metadata.name!;
    await waitFor(() => cli('logs', '-n', NS, name).stdout === `agent v1 on ${workers[0]!.nodeName}\n`, {
      timeoutMs: 15_000,
      intervalMs: 300,
      description: 'the first agent to log',
    });

    workers.push(await startWorker({ server: master.url, joinToken: master.joinToken }));
    await onNodes(workers.map((w) => w.nodeName));
    const got = cli('get', 'ds', 'agent', '-n', NS);
    assert.match(got.stdout, /^NAME\s+DESIRED\s+CURRENT\s+READY\s+UP-TO-DATE\s+AVAILABLE\s+NODE SELECTOR\s+AGE\nagent\s+2\s+2\s+2\s+2\s+2\s+<none>\s+/);
  });

  it('keeps the pod of a cordoned node, and rolls a new template out node by node', async () => {
    const cordoned = cli('cordon', workers[1]!.nodeName);
    assert.equal(cordoned.status, 0, cordoned.stderr);
    const before = await onNodes(workers.map((w) => w.nodeName));
    const oldNames = new Set([...before.values()].map((p) => p.metadata.name));

    // The image stays; the command changes, so each pod is replaced (at most one unavailable at a time).
    const ds = (await client.get(daemonSetKind, { namespace: NS, name: 'agent' })) as DaemonSet;
    ds.spec.template.spec.containers[0]!.command = ['sh', '-c', 'echo "agent v2 on $NODE"; exec sleep 3600'];
    await client.replace(daemonSetKind, { namespace: NS, name: 'agent' }, ds);
    let mostUnavailable = 0;
    await waitFor(
      async () => {
        const { live, byNode } = await runningByNode();
        mostUnavailable = Math.max(mostUnavailable, workers.length - byNode.size);
        return live.length === workers.length && [...byNode.values()].length === workers.length && live.every((p) => !oldNames.has(p.metadata.name));
      },
      { timeoutMs: 120_000, intervalMs: 200, description: 'both agents replaced by v2 pods' },
    );
    assert.ok(mostUnavailable <= 1, `at most one node without a Ready agent during the rollout (saw ${mostUnavailable})`);
    const rollout = cli('rollout', 'status', 'ds/agent', '-n', NS, '--timeout=60s');
    assert.equal(rollout.status, 0, rollout.stderr);
    assert.match(rollout.stdout, /daemon set "agent" successfully rolled out/);
  });
});
