// Runs the provider contract on the fake, and checks the fake's own test controls.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod } from '../core/api/pod.js';
import { FAKE_USAGE_ANNOTATION, FakeBackend, FakeProvider, parseUsageAnnotation } from './fake-provider.js';
import { runProviderContract } from './provider-contract.js';
import { ContainerStartError } from './provider.js';

const MISSING = 'contract/missing:never';

runProviderContract(
  'fake',
  async () => {
    const backend = new FakeBackend();
    const provider = new FakeProvider({ backend, missingImages: [MISSING] });
    return {
      provider,
      reopen: async () => new FakeProvider({ backend, missingImages: [MISSING] }),
      exitContainer: async (ref, container, exitCode) => provider.exitContainer(ref.uid, container, { exitCode }),
      scriptExec: (ref, container, result) => provider.setExecResult({ uid: ref.uid, container, result }),
      scriptLogs: (ref, container, lines) => provider.appendLog(ref.uid, container, lines.map((l) => `${l}\n`).join('')),
      cleanup: async () => {},
    };
  },
  { image: 'busybox:1.35', missingImage: MISSING, podCIDR: '10.244.7.0/24' },
);

function pod(name: string, containers: { name: string; image: string; imagePullPolicy?: 'Always' | 'IfNotPresent' | 'Never' }[]): Pod {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'default', uid: `uid-${name}` }, spec: { containers }, status: {} } as unknown as Pod;
}

describe('FakeProvider controls', () => {
  it('is deterministic: ids, IPs and times come from counters and the clock given', async () => {
    const now = () => new Date('2030-01-01T00:00:00.000Z');
    const run = async () => {
      const p = new FakeProvider({ now });
      const rp = await p.createPod(pod('a', [{ name: 'c', image: 'x:1' }]), { podCIDR: '10.1.2.0/24' });
      await p.updatePod(pod('a', [{ name: 'c', image: 'x:1' }]), { type: 'start', container: 'c', attempt: 0 });
      return { rp, after: await p.getPod('uid-a') };
    };
    const [first, second] = [await run(), await run()];
    assert.deepEqual(first, second);
    assert.equal(first.rp.sandbox.ip, '10.1.2.2');
    assert.equal(first.after?.containers[0].startedAt, '2030-01-01T00:00:00.000Z');
  });

  it('fails the next start of a container (once) and records the calls', async () => {
    const p = new FakeProvider();
    const spec = pod('b', [{ name: 'c', image: 'x:1' }]);
    await p.createPod(spec, {});
    p.failNextStart('c', new ContainerStartError('RunContainerError', 'boom'));
    await assert.rejects(p.updatePod(spec, { type: 'start', container: 'c', attempt: 0 }), /boom/);
    await p.updatePod(spec, { type: 'start', container: 'c', attempt: 0 });
    assert.deepEqual(
      p.calls.map((c) => c.method),
      ['createPod', 'updatePod', 'updatePod'],
    );
  });

  it('hands out the lowest free address of the pod /24, reuses freed ones, and says so when none is left', async () => {
    const p = new FakeProvider({ recordCalls: false });
    const ips: string[] = [];
    for (let i = 0; i < 253; i++) ips.push((await p.createPod(pod(`ip${i}`, []), { podCIDR: '10.1.2.0/24' })).sandbox.ip!);
    assert.deepEqual([ips[0], ips.at(-1)], ['10.1.2.2', '10.1.2.254'], 'after the gateway, before the broadcast address');
    assert.equal(new Set(ips).size, 253);
    await assert.rejects(
      p.createPod(pod('one-more', []), { podCIDR: '10.1.2.0/24' }),
      (err: Error) => err instanceof ContainerStartError && /no available IPv4 addresses on the pod network 10\.1\.2\.0\/24/.test(err.message),
    );
    await p.deletePod({ uid: 'uid-ip7', namespace: 'default', name: 'ip7' }, { gracePeriodSeconds: 0 });
    assert.equal((await p.createPod(pod('reuse', []), { podCIDR: '10.1.2.0/24' })).sandbox.ip, ips[7]);
    assert.deepEqual(p.calls, [], 'recordCalls: false keeps no history');
  });

  it('reports pulls of pullable images once, and always under Always', async () => {
    const p = new FakeProvider({ pullableImages: ['y:1'], imageRegistry: '127.0.0.1:5000' });
    const spec = pod('c', [
      { name: 'a', image: 'y:1' },
      { name: 'b', image: 'y:1' },
      { name: 'd', image: 'z', imagePullPolicy: 'Always' },
    ]);
    await p.createPod(spec, {});
    assert.deepEqual((await p.updatePod(spec, { type: 'start', container: 'a', attempt: 0 })).pulled, { image: '127.0.0.1:5000/y:1', ms: 0 });
    assert.equal((await p.updatePod(spec, { type: 'start', container: 'b', attempt: 0 })).pulled, undefined);
    assert.deepEqual((await p.updatePod(spec, { type: 'start', container: 'd', attempt: 0 })).pulled, { image: '127.0.0.1:5000/z:latest', ms: 0 });
  });

  it('reports an OOM kill given to exitContainer and notifies listeners', async () => {
    const p = new FakeProvider();
    const spec = pod('d', [{ name: 'c', image: 'x:1' }]);
    const seen: string[] = [];
    p.onPodChange((uid) => seen.push(uid));
    await p.createPod(spec, {});
    await p.updatePod(spec, { type: 'start', container: 'c', attempt: 0 });
    p.exitContainer('uid-d', 'c', { exitCode: 137, reason: 'OOMKilled' });
    const c = (await p.getPod('uid-d'))!.containers[0];
    assert.equal(c.reason, 'OOMKilled');
    assert.equal(c.exitCode, 137);
    await Promise.resolve();
    assert.deepEqual(seen, ['uid-d']);
  });

  it('follows logs until the container exits', async () => {
    const p = new FakeProvider();
    const spec = pod('e', [{ name: 'c', image: 'x:1' }]);
    await p.createPod(spec, {});
    await p.updatePod(spec, { type: 'start', container: 'c', attempt: 0 });
    p.appendLog('uid-e', 'c', 'one\n');
    const stream = await p.logs({ uid: 'uid-e', namespace: 'default', name: 'e' }, 'c', { follow: true });
    p.appendLog('uid-e', 'c', 'two\n');
    p.exitContainer('uid-e', 'c', { exitCode: 0 });
    let text = '';
    for await (const chunk of stream) text += String(chunk);
    assert.equal(text, 'one\ntwo\n');
  });

  it("reports the usage the pod's fake.minik8s.io/usage annotation sets (the pod given wins over the one last seen)", async () => {
    const p = new FakeProvider();
    const containers = [
      { name: 'web', image: 'x:1' },
      { name: 'side', image: 'x:1' },
    ];
    const annotated = (usage: string | undefined) => {
      const spec = pod('f', containers);
      if (usage !== undefined) spec.metadata.annotations = { [FAKE_USAGE_ANNOTATION]: usage };
      return spec;
    };
    const first = annotated('cpu=300m,memory=64Mi');
    await p.createPod(first, {});
    for (const c of containers) await p.updatePod(first, { type: 'start', container: c.name, attempt: 0 });
    const ref = { uid: 'uid-f', namespace: 'default', name: 'f' };
    const byName = (stats: { name: string; cpuCores: number; memoryBytes: number }[]) =>
      Object.fromEntries(stats.map((s) => [s.name, [s.cpuCores, s.memoryBytes]]));
    assert.deepEqual(byName(await p.stats(ref)), { web: [0.3, 64 * 2 ** 20], side: [0.3, 64 * 2 ** 20] });
    assert.deepEqual(byName(await p.stats(ref, annotated('web:cpu=1.5;memory=1Gi'))), { web: [1.5, 0], side: [0, 2 ** 30] });
    p.setStats({ container: 'web', cpuCores: 0.1, memoryBytes: 5 });
    assert.deepEqual(byName(await p.stats(ref, annotated(undefined))), { web: [0.1, 5], side: [0, 0] });
    assert.deepEqual(byName(await p.stats(ref, annotated('cpu=lots'))), { web: [0.1, 5], side: [0, 0] }, 'an annotation that does not parse is ignored');
  });

  it('parses usage annotations', () => {
    assert.deepEqual(parseUsageAnnotation('cpu=250m, memory=100Mi'), new Map([['*', { cpuCores: 0.25, memoryBytes: 100 * 2 ** 20 }]]));
    assert.deepEqual(
      parseUsageAnnotation('a:cpu=1;b:memory=1k'),
      new Map([
        ['a', { cpuCores: 1, memoryBytes: 0 }],
        ['b', { cpuCores: 0, memoryBytes: 1000 }],
      ]),
    );
    for (const bad of ['cpu', 'gpu=1', 'cpu=-1', 'cpu=1=2', 'cpu=x']) assert.equal(parseUsageAnnotation(bad), undefined, bad);
  });
});
