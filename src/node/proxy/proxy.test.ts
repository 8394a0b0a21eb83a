// Unit tests for the proxy's shell: it waits for both caches, turns a burst of changes into few restores, and touches nothing while the master cannot be reached.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Endpoints } from '../../core/api/endpoints.js';
import type { KubeObject } from '../../core/api/meta.js';
import type { Service } from '../../core/api/service.js';
import { ApiClient } from '../../core/client/api-client.js';
import type { InformerEventType, ListWatcher } from '../../core/controller/informer.js';
import { waitFor } from '../../core/wait-for.js';
import type { NetCommand } from '../../net/net-command.js';
import { nodeLocalDnsEndpoints, ServiceProxy } from './proxy.js';

/** Objects listed once, then watch events pushed by the test; `failList` makes the list fail (the master is unreachable). */
function source<T extends KubeObject>(initial: T[], failList = false) {
  const pending: { type: InformerEventType; object: T }[] = [];
  let wake: () => void = () => {};
  let lists = 0;
  const lw: ListWatcher<T> = {
    list: async () => {
      lists++;
      if (failList) throw new Error('connect ECONNREFUSED');
      return { items: initial, resourceVersion: '1' };
    },
    async *watch(_rv, signal) {
      while (!signal.aborted) {
        while (pending.length) yield pending.shift()!;
        await new Promise<void>((resolve) => {
          wake = resolve;
          signal.addEventListener('abort', () => resolve(), { once: true });
        });
      }
    },
  };
  return { lw, lists: () => lists, push: (type: InformerEventType, object: T) => { pending.push({ type, object }); wake(); } };
}

function fakeRun() {
  const commands: NetCommand[] = [];
  const run = async (c: NetCommand) => {
    commands.push(c);
    return '';
  };
  return { run, commands, restores: () => commands.filter((c) => c.tool === 'iptables-restore') };
}

const svc = { apiVersion: 'v1', kind: 'Service', metadata: { namespace: 'default', name: 'web', resourceVersion: '1' }, spec: { type: 'ClusterIP', clusterIP: '10.96.0.20', sessionAffinity: 'None', ports: [{ port: 80, targetPort: 8080, protocol: 'TCP' }] }, status: {} } as Service;
const ep = (n: number): Endpoints => ({
  apiVersion: 'v1', kind: 'Endpoints', metadata: { namespace: 'default', name: 'web', resourceVersion: String(n + 1) },
  subsets: [{ addresses: Array.from({ length: n }, (_, i) => ({ ip: `10.244.1.${i + 2}` })), ports: [{ port: 8080, protocol: 'TCP' }] }],
});
const client = new ApiClient({ server: 'http://127.0.0.1:1', token: 'unused' });

describe('ServiceProxy', () => {
  it('applies once synced, and a burst of 30 endpoint changes becomes a few restores with the last state', async () => {
    const services = source([svc]);
    const endpoints = source([ep(1)]);
    const fake = fakeRun();
    const proxy = new ServiceProxy({ client, nodeName: 'n1', clusterCIDR: '10.244.0.0/16', services: services.lw, endpoints: endpoints.lw, run: fake.run, minSyncMs: 300 });
    const controller = new AbortController();
    const running = proxy.start(controller.signal);
    try {
      await waitFor(() => fake.restores().length === 2, { description: 'the first restore of nat and filter' });
      assert.match(fake.restores()[0]!.input!, /--to-destination 10\.244\.1\.2:8080/);
      for (let n = 2; n <= 31; n++) endpoints.push('MODIFIED', ep(n));
      await waitFor(() => fake.restores().at(-2)?.input?.includes('10.244.1.31:8080'), { description: 'the last endpoints applied' });
      const natRestores = fake.restores().filter((c) => c.input!.startsWith('*nat')).length;
      assert.ok(natRestores <= 3, `${natRestores} nat restores for one burst`);
    } finally {
      controller.abort();
      await running;
    }
  });

  it('writes nothing while the master cannot be reached: rules from before stay as they are', async () => {
    const services = source<Service>([], true);
    const endpoints = source<Endpoints>([], true);
    const fake = fakeRun();
    const proxy = new ServiceProxy({ client, nodeName: 'n1', clusterCIDR: '10.244.0.0/16', services: services.lw, endpoints: endpoints.lw, run: fake.run });
    const controller = new AbortController();
    const running = proxy.start(controller.signal);
    try {
      await waitFor(() => services.lists() >= 2 && endpoints.lists() >= 2, { timeoutMs: 5000, description: 'the informers to retry' });
      assert.deepEqual(fake.commands, []);
    } finally {
      controller.abort();
      await running;
    }
  });

  it('sends kube-dns to the node\'s own DNS server on the pod bridge gateway', () => {
    assert.deepEqual(nodeLocalDnsEndpoints('10.244.3.0/24'), { 'kube-system/kube-dns': [{ ip: '10.244.3.1', port: 53 }] });
  });
});
