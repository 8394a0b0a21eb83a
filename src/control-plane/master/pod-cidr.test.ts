// Pod CIDR allocation: the pure pick (table-driven) and the persisted records on a memory store, concurrent writers included.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ConflictError, ServiceUnavailableError } from '../../core/errors.js';
import { MemoryStore } from '../../core/store/memory-store.js';
import { cidrContains, compareCidrs, parseIpv4Cidr } from '../../core/api/ipv4.js';
import { POD_CIDR_RANGE_FULL } from '../../core/api/node.js';
import { pickPodCIDR, podCIDRCapacity, POD_CIDR_PREFIX, PodCIDRAllocator } from './pod-cidr.js';

describe('pickPodCIDR', () => {
  const cases: [string, string, string[], string | undefined][] = [
    ['the first /24 of an empty range', '10.244.0.0/16', [], '10.244.0.0/24'],
    ['the lowest gap', '10.244.0.0/16', ['10.244.0.0/24', '10.244.2.0/24'], '10.244.1.0/24'],
    ['past a run', '10.244.0.0/16', ['10.244.0.0/24', '10.244.1.0/24', '10.244.2.0/24'], '10.244.3.0/24'],
    ['order of inUse does not matter', '10.244.0.0/16', ['10.244.1.0/24', '10.244.0.0/24'], '10.244.2.0/24'],
    ['a larger range in use blocks every /24 it covers', '10.244.0.0/16', ['10.244.0.0/23'], '10.244.2.0/24'],
    ['a smaller range in use blocks its /24', '10.244.0.0/16', ['10.244.0.128/25'], '10.244.1.0/24'],
    ['ranges outside are ignored', '10.244.0.0/16', ['10.245.0.0/24', '192.168.0.0/24'], '10.244.0.0/24'],
    ['a range covering the cluster blocks it all', '10.244.0.0/16', ['10.0.0.0/8'], undefined],
    ['junk in use blocks nothing', '10.244.0.0/16', ['nonsense', '', '10.244.0.1/24'], '10.244.0.0/24'],
    ['a /23 cluster holds two', '10.9.0.0/23', ['10.9.0.0/24'], '10.9.1.0/24'],
    ['full', '10.9.0.0/23', ['10.9.0.0/24', '10.9.1.0/24'], undefined],
    ['a /8 cluster', '10.0.0.0/8', ['10.0.0.0/24'], '10.0.1.0/24'],
    ['crosses the third octet', '172.16.0.0/12', Array.from({ length: 256 }, (_, i) => `172.16.${i}.0/24`), '172.17.0.0/24'],
    ['a cluster smaller than a /24 has none', '10.9.0.0/25', [], undefined],
    ['an unparsable cluster has none', '10.9.0.0/33', [], undefined],
    ['duplicates are harmless', '10.244.0.0/16', ['10.244.0.0/24', '10.244.0.0/24'], '10.244.1.0/24'],
  ];
  for (const [name, cluster, inUse, want] of cases) {
    it(name, () => assert.equal(pickPodCIDR(cluster, inUse), want));
  }

  it('gives every /24 of a /16 once, in order', () => {
    const given: string[] = [];
    for (;;) {
      const next = pickPodCIDR('10.244.0.0/16', given);
      if (!next) break;
      given.push(next);
    }
    assert.equal(given.length, 256);
    assert.equal(new Set(given).size, 256);
    assert.equal(given[255], '10.244.255.0/24');
    assert.equal(podCIDRCapacity('10.244.0.0/16'), 256);
  });

  it('parses, orders and compares ranges', () => {
    assert.deepEqual(parseIpv4Cidr('10.244.1.0/24'), { base: 10 * 256 ** 3 + 244 * 256 ** 2 + 256, bits: 24 });
    assert.equal(parseIpv4Cidr('10.244.1.1/24'), undefined);
    assert.equal(parseIpv4Cidr('10.256.0.0/16'), undefined);
    assert.equal(cidrContains('10.244.0.0/16', '10.244.7.0/24'), true);
    assert.equal(cidrContains('10.244.0.0/16', '10.245.0.0/24'), false);
    assert.equal(cidrContains('10.244.0.0/24', '10.244.0.0/16'), false);
    assert.deepEqual(['10.244.10.0/24', '10.244.2.0/24', 'x'].sort(compareCidrs), ['10.244.2.0/24', '10.244.10.0/24', 'x']);
  });
});

describe('PodCIDRAllocator', () => {
  it('records allocations so that a second allocator (another master run) never repeats one', async () => {
    const store = new MemoryStore();
    const a = new PodCIDRAllocator({ store, clusterCIDR: '10.244.0.0/16' });
    assert.equal(await a.allocate('n1'), '10.244.0.0/24');
    assert.equal(await a.allocate('n2'), '10.244.1.0/24');
    const b = new PodCIDRAllocator({ store, clusterCIDR: '10.244.0.0/16' });
    assert.equal(await b.allocate('n3'), '10.244.2.0/24');
    assert.deepEqual(
      (await b.list()).map((r) => [r.cidr, r.nodeName]),
      [
        ['10.244.0.0/24', 'n1'],
        ['10.244.1.0/24', 'n2'],
        ['10.244.2.0/24', 'n3'],
      ],
    );
    const keys = (await store.list(POD_CIDR_PREFIX)).items.map((e) => e.key);
    assert.deepEqual(keys, [`${POD_CIDR_PREFIX}10.244.0.0-24`, `${POD_CIDR_PREFIX}10.244.1.0-24`, `${POD_CIDR_PREFIX}10.244.2.0-24`]);
  });

  it('never gives one range twice to concurrent allocations, even from separate allocators', async () => {
    const store = new MemoryStore();
    const allocators = Array.from({ length: 4 }, () => new PodCIDRAllocator({ store, clusterCIDR: '10.244.0.0/16' }));
    const got = await Promise.all(Array.from({ length: 24 }, (_, i) => allocators[i % 4]!.allocate(`n${i}`)));
    assert.equal(new Set(got).size, 24);
    assert.deepEqual(
      [...got].sort(compareCidrs),
      Array.from({ length: 24 }, (_, i) => `10.244.${i}.0/24`),
    );
  });

  it('skips ranges given by hand, and answers 503 when the range is full', async () => {
    const store = new MemoryStore();
    const a = new PodCIDRAllocator({ store, clusterCIDR: '10.9.0.0/22' });
    assert.equal(await a.allocate('n1', ['10.9.0.0/24', '10.9.1.0/24']), '10.9.2.0/24');
    assert.equal(await a.allocate('n2'), '10.9.0.0/24');
    assert.equal(await a.allocate('n3', ['10.9.1.0/24']), '10.9.3.0/24');
    await assert.rejects(a.allocate('n4', ['10.9.1.0/24']), (err: unknown) => {
      assert.ok(err instanceof ServiceUnavailableError);
      assert.match(err.message, /no pod CIDR left for node "n4": all 4 \/24 ranges of the cluster CIDR 10\.9\.0\.0\/22 are allocated/);
      // The cause tells a joining worker that retrying will not help.
      assert.deepEqual(
        err.toStatus().details?.causes?.map((c) => c.reason),
        [POD_CIDR_RANGE_FULL],
      );
      return true;
    });
  });

  it("claims, releases one or all of a node's ranges, and refuses another node's range", async () => {
    const store = new MemoryStore();
    const a = new PodCIDRAllocator({ store, clusterCIDR: '10.244.0.0/16' });
    await a.claim('10.244.7.0/24', 'n1');
    await a.claim('10.244.7.0/24', 'n1');
    await assert.rejects(a.claim('10.244.7.0/24', 'n2'), ConflictError);
    assert.equal(await a.heldBy('n1'), '10.244.7.0/24');
    assert.equal(await a.heldBy('n2'), undefined);
    assert.equal(await a.allocate('n2'), '10.244.0.0/24');
    assert.equal(await a.release('10.244.0.0/24', 'n1'), false, "not n1's");
    assert.equal(await a.release('10.244.0.0/24', 'n2'), true);
    assert.equal(await a.release('10.244.0.0/24', 'n2'), false, 'already free');
    await a.claim('10.244.9.0/24', 'n1');
    assert.deepEqual(await a.releaseNode('n1'), ['10.244.7.0/24', '10.244.9.0/24']);
    assert.deepEqual(await a.list(), []);
    assert.equal(await a.allocate('n3'), '10.244.0.0/24', 'freed ranges are given again, lowest first');
  });
});
