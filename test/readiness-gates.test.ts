// Readiness gates on a real worker (joined with --config FILE): a pod whose containers are ready stays out of its Service's endpoints until a controller sets the gate's condition True, and leaves them again when it turns False.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type Endpoints, endpointsKind } from '../src/core/api/endpoints.js';
import { namespaceKind } from '../src/core/api/namespace.js';
import { nodeKind } from '../src/core/api/node.js';
import { type Pod, podKind } from '../src/core/api/pod.js';
import { serviceKind } from '../src/core/api/service.js';
import { ApiClient } from '../src/core/client/api-client.js';
import { ConflictError } from '../src/core/errors.js';
import { waitFor } from '../src/core/wait-for.js';
import { type MasterProcess, startMaster } from './helpers/master.js';
import { startWorker, type WorkerProcess } from './helpers/worker.js';

const NS = `gates-${process.pid}`;
const GATE = 'example.com/load-balancer-ready';

describe('readiness gates decide whether a pod serves', () => {
  let master: MasterProcess;
  let worker: WorkerProcess;
  let client: ApiClient;
  const ref = { namespace: NS, name: 'gated' };

  const pod = async () => (await client.get(podKind, ref)) as Pod;
  const condition = (p: Pod, type: string) => p.status?.conditions?.find((c) => c.type === type);
  const endpoints = async () => (await client.get(endpointsKind, { namespace: NS, name: 'web' }).catch(() => undefined)) as Endpoints | undefined;
  const addresses = (e: Endpoints | undefined, key: 'addresses' | 'notReadyAddresses') => (e?.subsets ?? []).flatMap((s) => s[key] ?? []).map((a) => a.ip);

  /** What a load balancer controller does: its condition on the pod's status, through the status subresource. */
  const setGate = (status: 'True' | 'False') =>
    waitFor(
      async () => {
        const p = await pod();
        const others = (p.status?.conditions ?? []).filter((c) => c.type !== GATE);
        const gate = { type: GATE, status, lastTransitionTime: new Date().toISOString() };
        try {
          await client.replace(podKind, ref, { ...p, status: { ...p.status, conditions: [...others, gate] } }, { subresource: 'status' });
          return true;
        } catch (err) {
          if (err instanceof ConflictError) return false; // the kubelet wrote in between: read again
          throw err;
        }
      },
      { timeoutMs: 15_000, description: `the gate set ${status}` },
    );

  before(
    async () => {
      master = await startMaster({ seedImages: true });
      // Joined as the README shows: every setting in a YAML file given with --config.
      worker = await startWorker({ server: master.url, joinToken: master.joinToken, configFile: true });
      client = new ApiClient({ server: master.url, token: master.token, tls: { ca: master.ca } });
      await client.create(namespaceKind, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
      await client.create(
        serviceKind,
        { apiVersion: 'v1', kind: 'Service', metadata: { name: 'web', namespace: NS }, spec: { selector: { app: 'gated' }, ports: [{ port: 80 }] } },
        { namespace: NS },
      );
      await client.create(
        podKind,
        {
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { name: 'gated', namespace: NS, labels: { app: 'gated' } },
          spec: {
            nodeName: worker.nodeName,
            terminationGracePeriodSeconds: 0,
            readinessGates: [{ conditionType: GATE }],
            containers: [{ name: 'app', image: 'busybox:1.35', command: ['sleep', '3600'] }],
          },
        },
        { namespace: NS },
      );
    },
    { timeout: 180_000 },
  );

  after(async () => {
    client?.close();
    await worker?.destroy();
    await master?.stop();
  });

  it('has a worker joined from a node configuration file (--config)', async () => {
    assert.match(worker.output(), /kubelet: node/);
    const node = await client.get(nodeKind, { name: worker.nodeName });
    assert.equal(node.metadata.name, worker.nodeName);
  });

  it('keeps a pod whose containers are ready NotReady, and out of the endpoints, while its gate has no condition', async () => {
    const p = await waitFor(
      async () => {
        const p = await pod();
        return condition(p, 'ContainersReady')?.status === 'True' && p.status?.podIP ? p : undefined;
      },
      { timeoutMs: 90_000, description: 'the containers to be ready' },
    );
    const ready = condition(p, 'Ready');
    assert.equal(ready?.status, 'False');
    assert.equal(ready?.reason, 'ReadinessGatesNotReady');
    assert.equal(ready?.message, `corresponding condition of pod readiness gate "${GATE}" does not exist.`);
    const e = await waitFor(
      async () => {
        const e = await endpoints();
        return addresses(e, 'notReadyAddresses').includes(p.status!.podIP!) ? e : undefined;
      },
      { timeoutMs: 15_000, description: 'the pod among the not-ready addresses' },
    );
    assert.deepEqual(addresses(e, 'addresses'), []);
  });

  it('makes the pod Ready and an endpoint once the gate is True, and takes it out again when it turns False', async () => {
    const ip = (await pod()).status!.podIP!;
    await setGate('True');
    await waitFor(async () => condition(await pod(), 'Ready')?.status === 'True', { timeoutMs: 15_000, description: 'the pod to be Ready' });
    await waitFor(async () => addresses(await endpoints(), 'addresses').includes(ip), { timeoutMs: 15_000, description: 'the pod among the endpoints' });
    // The kubelet's next status writes keep the condition it does not own.
    assert.equal(condition(await pod(), GATE)?.status, 'True');

    await setGate('False');
    const p = await waitFor(
      async () => {
        const p = await pod();
        return condition(p, 'Ready')?.status === 'False' ? p : undefined;
      },
      { timeoutMs: 15_000, description: 'the pod to be NotReady again' },
    );
    assert.equal(condition(p, 'Ready')?.message, `the status of pod readiness gate "${GATE}" is not "True", but False`);
    await waitFor(async () => addresses(await endpoints(), 'notReadyAddresses').includes(ip) && !addresses(await endpoints(), 'addresses').includes(ip), {
      timeoutMs: 15_000,
      description: 'the pod out of the endpoints',
    });
  });
});
