// Unit tests for the proxy's shell: it waits for both caches, turns a burst of changes into few restores, and touches nothing while the master cannot be reached.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Endpoints } from '../../core/api/endpoints.js';
import type { KubeObject } from '../../core/api/meta.js';
import type { Service } from '../../core/api/service.js';
import type { InformerEventType, ListWatcher } from '../../core/controller/informer.js';
import { InformerFactory } from '../../core/controller/informer-factory.js';
import { waitFor } from '../../core/wait-for.js';
import { scriptedClient } from '../../../test/helpers/scripted-client.js';
import type { NetCommand } from '../../net/net-command.js';
import { NodeDns } from '../dns/node-dns.js';
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
  return {
    lw,
    lists: () => lists,
    push: (type: InformerEventType, object: T) => {
      pending.push({ type, object });
      wake();
    },
  };
}

function fakeRun() {
  const commands: NetCommand[] = [];
  const run = async (c: NetCommand) => {
    commands.push(c);
    return '';
  };
  return { run, commands, restores: () => commands.filter((c) => c.tool === 'iptables-restore') };
}

const svc = {
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { namespace: 'default', name: 'web', resourceVersion: '1' },
  spec: { type: 'ClusterIP', clusterIP: '10.96.0.20', sessionAffinity: 'None', ports: [{ port: 80, targetPort: 8080, protocol: 'TCP' }] },
  status: {},
} as Service;
const ep = (n: number): Endpoints => ({
  apiVersion: 'v1',
  kind: 'Endpoints',
  metadata: { namespace: 'default', name: 'web', resourceVersion: String(n + 1) },
  subsets: [{ addresses: Array.from({ length: n }, (_, i) => ({ ip: `10.244.1.${i + 2}` })), ports: [{ port: 8080, protocol: 'TCP' }] }],
});

/** The proxy with its informers started, as the worker runs them; `stop` ends both. */
function startProxy(options: {
  services: ListWatcher<Service>;
  endpoints: ListWatcher<Endpoints>;
  run: (c: NetCommand) => Promise<string>;
  minSyncMs?: number;
}) {
  const informers = new InformerFactory({ client: scriptedClient({ services: options.services, endpoints: options.endpoints }) });
  const proxy = new ServiceProxy({ informers, nodeName: 'n1', clusterCIDR: '10.244.0.0/16', run: options.run, minSyncMs: options.minSyncMs });
  const controller = new AbortController();
  const running = Promise.all([informers.start(controller.signal), proxy.start(controller.signal)]);
  return {
    async stop() {
      controller.abort();
      await running;
    },
  };
}

describe('ServiceProxy', () => {
  it('applies once synced, and a burst of 30 endpoint changes becomes a few restores with the last state', async () => {
    const services = source([svc]);
    const endpoints = source([ep(1)]);
    const fake = fakeRun();
    const proxy = startProxy({ services: services.lw, endpoints: endpoints.lw, run: fake.run, minSyncMs: 300 });
    try {
      await waitFor(() => fake.restores().length === 2, { description: 'the first restore of nat and filter' });
      assert.match(fake.restores()[0]!.input!, /--to-destination 10\.244\.1\.2:8080/);
      for (let n = 2; n <= 31; n++) endpoints.push('MODIFIED', ep(n));
      await waitFor(() => fake.restores().at(-2)?.input?.includes('10.244.1.31:8080'), { description: 'the last endpoints applied' });
      const natRestores = fake.restores().filter((c) => c.input!.startsWith('*nat')).length;
      assert.ok(natRestores <= 3, `${natRestores} nat restores for one burst`);
    } finally {
      await proxy.stop();
    }
  });

  it('writes nothing while the master cannot be reached: rules from before stay as they are', async () => {
    const services = source<Service>([], true);
    const endpoints = source<Endpoints>([], true);
    const fake = fakeRun();
    const proxy = startProxy({ services: services.lw, endpoints: endpoints.lw, run: fake.run });
    try {
      await waitFor(() => services.lists() >= 2 && endpoints.lists() >= 2, { timeoutMs: 5000, description: 'the informers to retry' });
      assert.deepEqual(fake.commands, []);
    } finally {
      await proxy.stop();
    }
  });

  it('shares one Services and one Endpoints informer with the node DNS', () => {
    const informers = new InformerFactory({ client: scriptedClient({}) });
    const proxy = new ServiceProxy({ informers, nodeName: 'n1', clusterCIDR: '10.244.0.0/16', run: fakeRun().run });
    const dns = new NodeDns({ informers, address: '127.0.0.1', port: 0, upstreams: [] });
    assert.equal(dns.services, proxy.services);
    assert.equal(dns.endpoints, proxy.endpoints);
    assert.equal(informers.size, 3, 'Services, Endpoints and DNS objects: one watch each');
  });

  it("sends kube-dns to the node's own DNS server on the pod bridge gateway", () => {
    assert.deepEqual(nodeLocalDnsEndpoints('10.244.3.0/24'), { 'kube-system/kube-dns': [{ ip: '10.244.3.1', port: 53 }] });
  });
});
