// Unit tests for the overlay's shell against a fake kernel (ip, bridge, iptables as state in memory) and Nodes fed by hand: setup, reconcile, idempotence, a deleted Node.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Node } from '../../core/api/node.js';
import type { InformerEventType, ListWatcher } from '../../core/controller/informer.js';
import { InformerFactory } from '../../core/controller/informer-factory.js';
import { waitFor } from '../../core/wait-for.js';
import { scriptedClient } from '../../../test/helpers/scripted-client.js';
import { NetCommandError, type NetCommand } from '../net-command.js';
import { PUBLIC_IP_ANNOTATION, VTEP_MAC_ANNOTATION } from './overlay-plan.js';
import { VxlanOverlay } from './vxlan-overlay.js';

/** The part of a machine's network stack the overlay touches, with `ip -j` style answers. */
class FakeKernel {
  device: { mac: string; up: boolean; addrs: string[]; info: Record<string, unknown> } | undefined;
  routes = new Map<string, string>();
  neighbours = new Map<string, string>();
  fdb = new Map<string, string>();
  chains = new Map<string, string[]>();
  jumps = new Set<string>();
  changes: string[] = [];

  run = async (c: NetCommand): Promise<string> => {
    const line = `${c.tool} ${c.args.join(' ')}`;
    const a = c.args;
    const missing = () => new NetCommandError(c, 'Cannot find device "minik8s.vx"');
    if (line === 'ip -4 -j addr show') return JSON.stringify([{ ifname: 'eth0', addr_info: [{ family: 'inet', local: '192.168.0.11', prefixlen: 24 }] }]);
    if (line === 'ip -d -j link show dev minik8s.vx') {
      if (!this.device) throw missing();
      return JSON.stringify([
        { ifname: 'minik8s.vx', address: this.device.mac, flags: this.device.up ? ['UP'] : [], linkinfo: { info_kind: 'vxlan', info_data: this.device.info } },
      ]);
    }
    if (line === 'ip -4 -j addr show dev minik8s.vx') {
      if (!this.device) throw missing();
      return JSON.stringify([
        { ifname: 'minik8s.vx', addr_info: this.device.addrs.map((x) => ({ family: 'inet', local: x.split('/')[0], prefixlen: Number(x.split('/')[1]) })) },
      ]);
    }
    if (line === 'ip -4 -j route show dev minik8s.vx') return JSON.stringify([...this.routes].map(([dst, via]) => ({ dst, gateway: via, flags: ['onlink'] })));
    if (line === 'ip -4 -j neigh show dev minik8s.vx')
      return JSON.stringify([...this.neighbours].map(([dst, mac]) => ({ dst, lladdr: mac, state: ['PERMANENT'] })));
    if (line === 'bridge -j fdb show dev minik8s.vx')
      return JSON.stringify([...this.fdb].map(([mac, dst]) => ({ mac, dst, flags: ['self'], state: 'permanent' })));
    if (c.tool === 'iptables' && a.includes('-S')) {
      const rules = this.chains.get(a.at(-1)!);
      if (!rules) throw new NetCommandError(c, 'No chain/target/match by that name.');
      return [`-N ${a.at(-1)}`, ...rules, ''].join('\n');
    }
    if (c.tool === 'iptables' && a.includes('-C')) {
      if (!this.jumps.has(`${a[a.indexOf('-C') + 1]}->${a.at(-1)}`)) throw new NetCommandError(c, 'Bad rule');
      return '';
    }
    this.changes.push(line);
    if (c.tool === 'iptables-restore') {
      let chain = '';
      for (const l of c.input!.split('\n')) {
        if (l.startsWith(':')) {
          chain = l.slice(1).split(' ')[0]!;
          this.chains.set(chain, []);
        } else if (l.startsWith('-A')) this.chains.get(chain)!.push(l);
      }
    } else if (c.tool === 'iptables' && a.includes('-I')) this.jumps.add(`${a[a.indexOf('-I') + 1]}->${a.at(-1)}`);
    else if (line.startsWith('ip link add minik8s.vx type vxlan')) {
      this.device = {
        mac: 'aa:aa:aa:aa:aa:01',
        up: false,
        addrs: [],
        info: { id: Number(a[6]), port: Number(a[8]), local: a[10], link: a[12], learning: false },
      };
    } else if (line.startsWith('ip addr add')) this.device!.addrs.push(a[2]!);
    else if (line === 'ip link set minik8s.vx up') this.device!.up = true;
    else if (a[0] === 'route' && a[1] === 'replace') this.routes.set(a[2]!, a[4]!);
    else if (a[0] === 'route' && a[1] === 'del') this.routes.delete(a[2]!);
    else if (a[0] === 'neigh' && a[1] === 'replace') this.neighbours.set(a[2]!, a[4]!);
    else if (a[0] === 'neigh' && a[1] === 'del') this.neighbours.delete(a[2]!);
    else if (a[0] === 'fdb' && a[1] === 'append') this.fdb.set(a[2]!, a[6]!);
    else if (a[0] === 'fdb' && a[1] === 'del') this.fdb.delete(a[2]!);
    else throw new Error(`the fake kernel does not know ${line}`);
    return '';
  };
}

/** Nodes listed once, then watch events pushed by the test. */
function nodeSource(initial: Node[]) {
  const pending: { type: InformerEventType; object: Node }[] = [];
  let wake: () => void = () => {};
  const source: ListWatcher<Node> = {
    list: async () => ({ items: initial, resourceVersion: '1' }),
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
    source,
    push: (type: InformerEventType, object: Node) => {
      pending.push({ type, object });
      wake();
    },
  };
}

function node(name: string, podCIDR: string, vtep?: { mac: string; ip: string }, rv = '1'): Node {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name, resourceVersion: rv, ...(vtep ? { annotations: { [VTEP_MAC_ANNOTATION]: vtep.mac, [PUBLIC_IP_ANNOTATION]: vtep.ip } } : {}) },
    spec: { podCIDR },
    status: {},
  } as Node;
}

describe('VxlanOverlay against a fake kernel', () => {
  it('sets up the device and rules, publishes its VTEP, follows peers as they come and go, and changes nothing when all is in place', async () => {
    const kernel = new FakeKernel();
    const patches: unknown[] = [];
    const n2 = node('n2', '10.244.2.0/24', { mac: 'aa:00:00:00:00:02', ip: '192.168.0.12' });
    const nodes = nodeSource([node('n1', '10.244.1.0/24'), n2, node('plain', '10.244.5.0/24')]);
    const client = scriptedClient(
      { nodes: nodes.source },
      {
        patch: async (_kind, ref, patch) => {
          patches.push({ name: ref.name, patch });
          return {} as Node;
        },
      },
    );
    const informers = new InformerFactory({ client });
    const logs: string[] = [];
    const overlay = new VxlanOverlay({
      client,
      informers,
      nodeName: 'n1',
      nodeIP: '192.168.0.11',
      podCIDR: '10.244.1.0/24',
      clusterCIDR: '10.244.0.0/16',
      run: kernel.run,
      log: (m) => logs.push(m),
    });

    await overlay.setup();
    assert.deepEqual(kernel.changes.slice(0, 3), [
      'ip link add minik8s.vx type vxlan id 1 dstport 8472 local 192.168.0.11 dev eth0 nolearning',
      'ip addr add 10.244.1.0/32 dev minik8s.vx',
      'ip link set minik8s.vx up',
    ]);
    assert.deepEqual([...kernel.jumps].sort(), ['FORWARD->MINIK8S-OVERLAY-FWD', 'POSTROUTING->MINIK8S-OVERLAY-NAT']);
    assert.deepEqual(patches, [
      { name: 'n1', patch: { metadata: { annotations: { [VTEP_MAC_ANNOTATION]: 'aa:aa:aa:aa:aa:01', [PUBLIC_IP_ANNOTATION]: '192.168.0.11' } } } },
    ]);
    assert.match(logs[0]!, /overlay: vxlan minik8s\.vx \(VNI 1, UDP 8472\) on eth0 192\.168\.0\.11, VTEP 10\.244\.1\.0 aa:aa:aa:aa:aa:01: created device/);

    const stop = new AbortController();
    const running = informers.start(stop.signal);
    try {
      await overlay.informer.whenSynced();
      kernel.changes = [];
      await overlay.reconcile();
      assert.deepEqual(kernel.changes, [
        'bridge fdb append aa:00:00:00:00:02 dev minik8s.vx dst 192.168.0.12',
        'ip neigh replace 10.244.2.0 lladdr aa:00:00:00:00:02 dev minik8s.vx nud permanent',
        'ip route replace 10.244.2.0/24 via 10.244.2.0 dev minik8s.vx onlink',
      ]);
      assert.ok(
        logs.some((l) => /not reaching plain: it has published no VTEP/.test(l)),
        logs.join('\n'),
      );
      // Our own Node, as the informer sees it, lacks the annotations: they are written again.
      assert.equal(patches.length, 2);

      kernel.changes = [];
      nodes.push('MODIFIED', {
        ...node('n1', '10.244.1.0/24', { mac: 'aa:aa:aa:aa:aa:01', ip: '192.168.0.11' }),
        metadata: { name: 'n1', resourceVersion: '2', annotations: { [VTEP_MAC_ANNOTATION]: 'aa:aa:aa:aa:aa:01', [PUBLIC_IP_ANNOTATION]: '192.168.0.11' } },
      } as Node);
      await waitFor(() => overlay.informer.get('n1')?.metadata.resourceVersion === '2');
      await overlay.reconcile();
      assert.deepEqual(kernel.changes, [], 'all in place: nothing run');
      assert.equal(patches.length, 2, 'annotations in place: nothing written');

      const n3 = node('n3', '10.244.3.0/24', { mac: 'aa:00:00:00:00:03', ip: '192.168.0.13' });
      nodes.push('ADDED', n3);
      nodes.push('DELETED', n2);
      await waitFor(() => overlay.informer.get('n3') && !overlay.informer.get('n2'));
      await overlay.reconcile();
      assert.deepEqual(kernel.changes, [
        'ip route del 10.244.2.0/24 dev minik8s.vx',
        'ip neigh del 10.244.2.0 dev minik8s.vx',
        'bridge fdb del aa:00:00:00:00:02 dev minik8s.vx dst 192.168.0.12',
        'bridge fdb append aa:00:00:00:00:03 dev minik8s.vx dst 192.168.0.13',
        'ip neigh replace 10.244.3.0 lladdr aa:00:00:00:00:03 dev minik8s.vx nud permanent',
        'ip route replace 10.244.3.0/24 via 10.244.3.0 dev minik8s.vx onlink',
      ]);

      // Someone deleted the device: the next reconcile makes it again, publishes the new MAC, and puts the peers back.
      kernel.device = undefined;
      kernel.routes.clear();
      kernel.neighbours.clear();
      kernel.fdb.clear();
      kernel.changes = [];
      await overlay.reconcile();
      assert.equal(kernel.changes[0], 'ip link add minik8s.vx type vxlan id 1 dstport 8472 local 192.168.0.11 dev eth0 nolearning');
      assert.deepEqual([...kernel.routes], [['10.244.3.0/24', '10.244.3.0']]);
    } finally {
      stop.abort();
      await running;
    }
  });

  it('only heartbeats: no reconcile is queued for a Node update that leaves its pod CIDR and VTEP as they were', async () => {
    const kernel = new FakeKernel();
    const n2 = node('n2', '10.244.2.0/24', { mac: 'aa:00:00:00:00:02', ip: '192.168.0.12' });
    const nodes = nodeSource([n2]);
    const client = scriptedClient({ nodes: nodes.source }, { patch: async () => ({}) as Node });
    const informers = new InformerFactory({ client });
    const overlay = new VxlanOverlay({ client, informers, nodeName: 'n1', nodeIP: '192.168.0.11', podCIDR: '10.244.1.0/24', run: kernel.run, log: () => {} });
    const stop = new AbortController();
    const running = informers.start(stop.signal);
    try {
      await overlay.informer.whenSynced();
      const queued = () => overlay.queue.length;
      // The first listing queued a reconcile: take it, so that only what follows counts.
      overlay.queue.done((await overlay.queue.get())!);
      const before = queued();
      assert.equal(before, 0);
      nodes.push('MODIFIED', { ...n2, metadata: { ...n2.metadata, resourceVersion: '2' }, status: { phase: 'Running' } } as Node);
      await waitFor(() => overlay.informer.get('n2')?.metadata.resourceVersion === '2');
      assert.equal(queued(), before);
      nodes.push('MODIFIED', node('n2', '10.244.2.0/24', { mac: 'aa:00:00:00:00:09', ip: '192.168.0.12' }, '3'));
      await waitFor(() => overlay.informer.get('n2')?.metadata.resourceVersion === '3');
      assert.equal(queued(), 1);
    } finally {
      stop.abort();
      await running;
    }
  });
});
