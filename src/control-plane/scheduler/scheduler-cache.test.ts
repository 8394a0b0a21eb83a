// The scheduler's cache: incremental per-node aggregates under informer events, assumed bindings, nodes that come and go.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { podHostPorts, podInfo, podRequests } from './pod-info.js';
import { SchedulerCache } from './scheduler-cache.js';
import { node, pod } from './scheduler-fixtures.js';

const totals = (cache: SchedulerCache, name: string) => {
  const n = cache.nodeOf(name);
  return n && { pods: n.podCount, cpu: n.requestedMilliCPU, memory: n.requestedMemory, ports: [...n.usedPorts.keys()] };
};

describe('podRequests and podHostPorts', () => {
  const cases: [string, Parameters<typeof pod>[0], { milliCPU: number; memory: number }, { milliCPU: number; memory: number }][] = [
    ['nothing requested', { name: 'p' }, { milliCPU: 0, memory: 0 }, { milliCPU: 100, memory: 200 * 1024 * 1024 }],
    ['cpu and memory', { name: 'p', cpu: '250m', memory: '64Mi' }, { milliCPU: 250, memory: 64 * 1024 * 1024 }, { milliCPU: 250, memory: 64 * 1024 * 1024 }],
    ['cpu only: memory counts as 200 MiB for scores', { name: 'p', cpu: '1' }, { milliCPU: 1000, memory: 0 }, { milliCPU: 1000, memory: 200 * 1024 * 1024 }],
    [
      'containers add up',
      {
        name: 'p',
        containers: [
          { name: 'a', image: 'x', resources: { requests: { cpu: '100m' } } },
          { name: 'b', image: 'x', resources: { requests: { cpu: '300m', memory: '1Gi' } } },
        ] as never,
      },
      { milliCPU: 400, memory: 1024 ** 3 },
      { milliCPU: 400, memory: 1024 ** 3 + 200 * 1024 * 1024 },
    ],
  ];
  for (const [name, p, requests, nonZero] of cases) {
    it(name, () => {
      const got = podRequests(pod(p));
      assert.deepEqual({ milliCPU: got.requests.milliCPU, memory: got.requests.memory }, requests);
      assert.deepEqual(got.nonZero, nonZero);
    });
  }

  it('lists host ports, with the wildcard address by default, and every port of a hostNetwork pod', () => {
    assert.deepEqual(podHostPorts(pod({ name: 'p', hostPorts: [{ port: 8080 }, { port: 53, protocol: 'UDP', ip: '10.0.0.1' }] })), [
      { ip: '0.0.0.0', protocol: 'TCP', port: 8080 },
      { ip: '10.0.0.1', protocol: 'UDP', port: 53 },
    ]);
    const host = pod({ name: 'h', containers: [{ name: 'c', image: 'x', ports: [{ containerPort: 9000, protocol: 'TCP' }] }] as never });
    assert.deepEqual(podHostPorts(host), []);
    assert.deepEqual(podHostPorts({ ...host, spec: { ...host.spec, hostNetwork: true } }), [{ ip: '0.0.0.0', protocol: 'TCP', port: 9000 }]);
  });
});

describe('SchedulerCache', () => {
  it("adds, moves and removes pods, keeping each node's sums", () => {
    const cache = new SchedulerCache();
    cache.setNode(node({ name: 'n1' }));
    cache.setNode(node({ name: 'n2' }));
    cache.updatePod(pod({ name: 'a', nodeName: 'n1', cpu: '500m', memory: '1Gi', hostPorts: [{ port: 80 }] }));
    cache.updatePod(pod({ name: 'b', nodeName: 'n1', cpu: '250m' }));
    assert.deepEqual(totals(cache, 'n1'), { pods: 2, cpu: 750, memory: 1024 ** 3, ports: ['TCP/80'] });
    // An update of the same pod replaces it rather than counting it twice.
    cache.updatePod(pod({ name: 'b', nodeName: 'n1', cpu: '300m' }));
    assert.deepEqual(totals(cache, 'n1'), { pods: 2, cpu: 800, memory: 1024 ** 3, ports: ['TCP/80'] });
    cache.deletePod(pod({ name: 'a', nodeName: 'n1' }));
    assert.deepEqual(totals(cache, 'n1'), { pods: 1, cpu: 300, memory: 0, ports: [] });
    cache.updatePod(pod({ name: 'b', nodeName: 'n1', phase: 'Succeeded' }));
    assert.deepEqual(totals(cache, 'n1'), { pods: 0, cpu: 0, memory: 0, ports: [] }, 'a finished pod frees its node');
  });

  it('lists existing nodes in name order', () => {
    const cache = new SchedulerCache();
    for (const name of ['n3', 'n1', 'n2']) cache.setNode(node({ name }));
    assert.deepEqual(
      cache.nodes().map((n) => n.name),
      ['n1', 'n2', 'n3'],
    );
    cache.deleteNode('n2');
    assert.deepEqual(
      cache.nodes().map((n) => n.name),
      ['n1', 'n3'],
    );
  });

  it('keeps pods bound to a node it has not seen, and counts them once the node appears', () => {
    const cache = new SchedulerCache();
    cache.updatePod(pod({ name: 'a', nodeName: 'late', cpu: '1' }));
    assert.deepEqual(cache.nodes(), []);
    cache.setNode(node({ name: 'late' }));
    assert.deepEqual(totals(cache, 'late'), { pods: 1, cpu: 1000, memory: 0, ports: [] });
    cache.deleteNode('late');
    assert.deepEqual(cache.nodes(), [], 'a deleted node is not offered');
    cache.deletePod(pod({ name: 'a', nodeName: 'late' }));
    assert.equal(cache.nodeOf('late'), undefined, 'and is dropped with its last pod');
  });

  it('assumes a binding until the informer shows it, and forgets it if the binding fails', () => {
    const cache = new SchedulerCache();
    cache.setNode(node({ name: 'n1' }));
    const pending = pod({ name: 'p', cpu: '1' });
    cache.assume(podInfo(pending), 'n1');
    assert.equal(cache.isAssumed('default/p'), true);
    assert.equal(totals(cache, 'n1')?.cpu, 1000);
    // A status write arrives before the binding does: still unbound in the informer, still assumed.
    cache.updatePod(pending);
    assert.equal(totals(cache, 'n1')?.cpu, 1000);
    cache.forget('default/p');
    assert.equal(totals(cache, 'n1')?.cpu, 0);

    cache.assume(podInfo(pending), 'n1');
    cache.updatePod(pod({ name: 'p', cpu: '1', nodeName: 'n1' }));
    assert.equal(cache.isAssumed('default/p'), false, 'confirmed by the informer');
    cache.forget('default/p');
    assert.equal(totals(cache, 'n1')?.cpu, 1000, 'a confirmed pod is not forgotten');
  });

  it('tracks pods with anti-affinity for the symmetric rule', () => {
    const cache = new SchedulerCache();
    cache.setNode(node({ name: 'n1' }));
    const anti = {
      podAntiAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: [{ labelSelector: { matchLabels: { app: 'x' } }, topologyKey: 'kubernetes.io/hostname' }],
      },
    };
    cache.updatePod(pod({ name: 'a', nodeName: 'n1', affinity: anti as never }));
    cache.updatePod(pod({ name: 'b', nodeName: 'n1' }));
    assert.deepEqual(
      [...cache.podsWithAntiAffinity()].map((p) => p.name),
      ['a'],
    );
    cache.deletePod(pod({ name: 'a', nodeName: 'n1' }));
    assert.deepEqual([...cache.podsWithAntiAffinity()], []);
  });
});
