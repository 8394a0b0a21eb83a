// The master's host routes to nodes' pod ranges: the plan from nodes and routes, the commands, and the sync against a fake `ip`.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, closeSync, openSync } from 'node:fs';
import { NetCommandError, runNetCommand, type NetCommand } from './net-command.js';
import {
  parseRouteGet,
  parseRoutes,
  planPodRoutes,
  podRouteCommands,
  removePodRoutes,
  syncPodRoutes,
  type NodeRouteFacts,
  type Reachability,
  type RouteEntry,
} from './pod-routes.js';

const CLUSTER = '10.200.0.0/16';
const node = (name: string, podCIDR: string, internalIP: string, ready = true): NodeRouteFacts => ({ name, podCIDR, internalIP, ready });
const direct: Reachability = { local: false, direct: true };

describe('planPodRoutes', () => {
  const reach = new Map<string, Reachability>([
    ['10.123.5.11', direct],
    ['10.123.5.12', direct],
    ['127.0.0.1', { local: true, direct: false }],
    ['192.168.9.9', { local: false, direct: false }],
  ]);
  const cases: [string, NodeRouteFacts[], RouteEntry[], string[]][] = [
    [
      'a route per Ready node on a connected network',
      [node('a', '10.200.1.0/24', '10.123.5.11'), node('b', '10.200.2.0/24', '10.123.5.12')],
      [],
      ['ip route replace 10.200.1.0/24 via 10.123.5.11 proto 117', 'ip route replace 10.200.2.0/24 via 10.123.5.12 proto 117'],
    ],
    ['already there: nothing', [node('a', '10.200.1.0/24', '10.123.5.11')], [{ dst: '10.200.1.0/24', gateway: '10.123.5.11', ours: true }], []],
    [
      'moved to another address: replaced',
      [node('a', '10.200.1.0/24', '10.123.5.12')],
      [{ dst: '10.200.1.0/24', gateway: '10.123.5.11', ours: true }],
      ['ip route replace 10.200.1.0/24 via 10.123.5.12 proto 117'],
    ],
    [
      'node gone or not Ready: ours removed',
      [node('a', '10.200.1.0/24', '10.123.5.11', false)],
      [
        { dst: '10.200.1.0/24', gateway: '10.123.5.11', ours: true },
        { dst: '10.200.7.0/24', gateway: '10.123.5.19', ours: true },
      ],
      ['ip route del 10.200.1.0/24 proto 117', 'ip route del 10.200.7.0/24 proto 117'],
    ],
    ['this machine is the node (its bridge routes it): nothing', [node('a', '10.200.0.0/24', '127.0.0.1')], [], []],
    ['behind a gateway (not host-gw reachable): nothing', [node('a', '10.200.3.0/24', '192.168.9.9')], [], []],
    [
      'someone else routes the range (an overlay, a bridge): left to them',
      [node('a', '10.200.1.0/24', '10.123.5.11')],
      [{ dst: '10.200.1.0/24', dev: 'minik8s.vx', gateway: '10.200.1.0', ours: false }],
      [],
    ],
    [
      "our routes outside this cluster's range (another master's) are not ours to remove",
      [],
      [{ dst: '10.201.1.0/24', gateway: '10.123.5.11', ours: true }],
      [],
    ],
    ["a range outside the cluster's: ignored", [node('a', '10.99.1.0/24', '10.123.5.11')], [], []],
    ['no address, no range: nothing', [{ name: 'a', ready: true }], [], []],
  ];
  for (const [name, nodes, routes, want] of cases) {
    it(name, () => {
      const plan = planPodRoutes({ nodes, clusterCIDR: CLUSTER, routes, reach });
      assert.deepEqual(
        podRouteCommands(plan).map((c) => `${c.tool} ${c.args.join(' ')}`),
        want,
      );
    });
  }
});

describe('parsing ip -j', () => {
  it('routes: IPv4 destinations, ours by protocol', () => {
    assert.deepEqual(
      parseRoutes(
        '[{"dst":"default","gateway":"192.0.2.1","dev":"eth0"},{"dst":"10.200.1.0/24","gateway":"10.123.5.11","dev":"br","protocol":"117"},{"dst":"10.200.0.0/24","dev":"minik8s0","protocol":"kernel"},{"dst":"10.9.9.9","dev":"x"}]',
      ),
      [
        { dst: '10.200.1.0/24', gateway: '10.123.5.11', dev: 'br', ours: true },
        { dst: '10.200.0.0/24', gateway: undefined, dev: 'minik8s0', ours: false },
        { dst: '10.9.9.9/32', gateway: undefined, dev: 'x', ours: false },
      ],
    );
    assert.deepEqual(parseRoutes(''), []);
  });
  it('route get: local, direct, via a gateway', () => {
    assert.deepEqual(parseRouteGet('[{"type":"local","dst":"127.0.0.1","dev":"lo"}]'), { local: true, direct: false });
    assert.deepEqual(parseRouteGet('[{"dst":"10.123.5.11","dev":"mk8s-sim","prefsrc":"10.123.5.1"}]'), { local: false, direct: true });
    assert.deepEqual(parseRouteGet('[{"dst":"10.0.0.1","gateway":"192.0.2.1","dev":"eth0"}]'), { local: false, direct: false });
  });
});

describe('syncPodRoutes and removePodRoutes', () => {
  it('reads routes and reachability, then runs only what differs', async () => {
    const ran: string[] = [];
    const run = async (c: NetCommand) => {
      const line = `${c.tool} ${c.args.join(' ')}`;
      ran.push(line);
      if (line === 'ip -j route show table main') return '[{"dst":"10.200.9.0/24","gateway":"10.123.5.19","protocol":"117"}]';
      if (line === 'ip -j route get 10.123.5.11') return '[{"dst":"10.123.5.11","dev":"mk8s-sim"}]';
      if (line === 'ip -j route get 10.123.5.99') throw new Error('RTNETLINK answers: Network is unreachable');
      return '';
    };
    const done = await syncPodRoutes({
      nodes: [node('a', '10.200.1.0/24', '10.123.5.11'), node('b', '10.200.2.0/24', '10.123.5.99')],
      clusterCIDR: CLUSTER,
      run,
    });
    assert.deepEqual(done, ['ip route del 10.200.9.0/24 proto 117', 'ip route replace 10.200.1.0/24 via 10.123.5.11 proto 117']);
    assert.deepEqual(ran.slice(0, 3), ['ip -j route show table main', 'ip -j route get 10.123.5.11', 'ip -j route get 10.123.5.99']);
    ran.length = 0;
    assert.deepEqual(await removePodRoutes({ clusterCIDR: CLUSTER, run }), ['ip route del 10.200.9.0/24 proto 117']);
  });
});

describe('syncPodRoutes with the real runner when the process is out of file descriptors', () => {
  const ip = ['/usr/sbin/ip', '/sbin/ip', '/usr/bin/ip', '/bin/ip'].some((p) => existsSync(p));
  it('fails the sync with EMFILE in its message, and nothing is thrown past it', { skip: !ip && 'ip is not installed' }, async () => {
    const uncaught: unknown[] = [];
    const onUncaught = (err: unknown) => uncaught.push(err);
    process.on('uncaughtException', onUncaught);
    const held: number[] = [];
    try {
      // Use up every descriptor the process may open, as 20,000 idle connections did to the master.
      try {
        for (;;) held.push(openSync('/dev/null', 'r'));
      } catch (err) {
        assert.equal((err as NodeJS.ErrnoException).code, 'EMFILE');
      }
      // Keep one free for spawn's own bookkeeping so that the failure is the pipes', as under a flood of sockets.
      closeSync(held.pop()!);
      await assert.rejects(syncPodRoutes({ nodes: [node('a', '10.200.1.0/24', '10.123.5.11')], clusterCIDR: CLUSTER, run: runNetCommand }), (err: unknown) => {
        assert.ok(err instanceof NetCommandError, String(err));
        assert.match(err.message, /EMFILE/);
        return true;
      });
      // Node emits the spawn's 'error' on a later tick: give it the chance to escape.
      await new Promise((resolve) => setTimeout(resolve, 50));
    } finally {
      for (const fd of held) closeSync(fd);
      process.off('uncaughtException', onUncaught);
    }
    assert.deepEqual(uncaught, []);
    // With descriptors back the same runner works again: the reconciler's retry succeeds.
    assert.match(await runNetCommand({ tool: 'ip', args: ['-j', 'route', 'show', 'table', 'main'] }), /^\[/);
  });
});
