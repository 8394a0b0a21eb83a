// drain's decisions: which pods it evicts, refuses or warns about (kubectl's filters and words), and its flags.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod } from '../core/api/pod.js';
import { CliError } from './cli-error.js';
import { drainFailure, parseDrainGracePeriod, parseDrainTimeout, planDrain } from './drain.js';

interface PodOptions {
  owner?: string;
  emptyDir?: boolean;
  phase?: string;
  mirror?: boolean;
}

function pod(name: string, o: PodOptions = {}): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: 'default',
      uid: `uid-${name}`,
      ...(o.owner ? { ownerReferences: [{ apiVersion: 'apps/v1', kind: o.owner, name: 'owner', uid: 'o', controller: true }] } : {}),
      ...(o.mirror ? { annotations: { 'kubernetes.io/config.mirror': 'x' } } : {}),
    },
    spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'busybox' }], ...(o.emptyDir ? { volumes: [{ name: 'scratch', emptyDir: {} }] } : {}) },
    status: { phase: o.phase ?? 'Running' },
  } as unknown as Pod;
}

const UNMANAGED = 'cannot delete Pods that declare no controller (use --force to override)';
const LOCAL = 'cannot delete Pods with local storage (use --delete-emptydir-data to override)';
const DAEMONS = 'cannot delete DaemonSet-managed Pods (use --ignore-daemonsets to ignore)';

describe('planDrain', () => {
  const cases: [string, Pod[], Parameters<typeof planDrain>[1], string[], string[], string[]][] = [
    // name, pods, flags, evicted, errors, warnings
    ['managed pods go', [pod('a', { owner: 'ReplicaSet' })], {}, ['a'], [], []],
    ['a bare pod stops the drain (the rest would go)', [pod('a', { owner: 'ReplicaSet' }), pod('bare')], {}, ['a'], [`${UNMANAGED}: default/bare`], []],
    ['--force evicts it, with a warning', [pod('bare')], { force: true }, ['bare'], [], ['deleting Pods that declare no controller: default/bare']],
    ['emptyDir stops the drain, before the controller check', [pod('scratch', { emptyDir: true })], { force: true }, [], [`${LOCAL}: default/scratch`], []],
    [
      '--delete-emptydir-data evicts it, with a warning',
      [pod('scratch', { owner: 'ReplicaSet', emptyDir: true })],
      { deleteEmptydirData: true },
      ['scratch'],
      [],
      ['deleting Pods with local storage: default/scratch'],
    ],
    [
      'both flags for a bare pod with emptyDir',
      [pod('x', { emptyDir: true })],
      { force: true, deleteEmptydirData: true },
      ['x'],
      [],
      ['deleting Pods with local storage: default/x', 'deleting Pods that declare no controller: default/x'],
    ],
    [
      'finished pods go without complaint',
      [pod('done', { phase: 'Succeeded', emptyDir: true }), pod('failed', { phase: 'Failed' })],
      {},
      ['done', 'failed'],
      [],
      [],
    ],
    ['mirror pods are left alone', [pod('static', { mirror: true })], {}, [], [], []],
    ['DaemonSet pods stop the drain', [pod('ds', { owner: 'DaemonSet' })], {}, [], [`${DAEMONS}: default/ds`], []],
    [
      '--ignore-daemonsets leaves them, with a warning',
      [pod('ds', { owner: 'DaemonSet' })],
      { ignoreDaemonsets: true },
      [],
      [],
      ['ignoring DaemonSet-managed Pods: default/ds'],
    ],
    [
      "refusals are grouped by reason, in the filters' order",
      [pod('b1'), pod('b2'), pod('s', { emptyDir: true })],
      {},
      [],
      [`${LOCAL}: default/s`, `${UNMANAGED}: default/b1, default/b2`],
      [],
    ],
  ];
  for (const [name, pods, flags, evicted, errors, warnings] of cases) {
    it(name, () => {
      const plan = planDrain(pods, flags);
      assert.deepEqual(
        plan.evict.map((p) => p.metadata.name),
        evicted,
      );
      assert.deepEqual(plan.errors, errors);
      assert.deepEqual(plan.warnings, warnings);
    });
  }
});

describe('drain flags and messages', () => {
  it('--timeout takes Go durations; 0 means no limit', () => {
    assert.equal(parseDrainTimeout('90s'), 90_000);
    assert.equal(parseDrainTimeout('1m30s'), 90_000);
    assert.equal(parseDrainTimeout('500ms'), 500);
    assert.equal(parseDrainTimeout('0'), undefined);
    assert.equal(parseDrainTimeout('0s'), undefined);
    assert.equal(parseDrainTimeout(undefined), undefined);
    assert.throws(
      () => parseDrainTimeout('soon'),
      (err: Error) => err instanceof CliError && /invalid --timeout "soon"/.test(err.message),
    );
  });

  it("--grace-period: seconds, negative for the pod's own", () => {
    assert.equal(parseDrainGracePeriod('0'), 0);
    assert.equal(parseDrainGracePeriod('15'), 15);
    assert.equal(parseDrainGracePeriod('-1'), undefined);
    assert.equal(parseDrainGracePeriod(undefined), undefined);
    assert.throws(() => parseDrainGracePeriod('1.5'), /invalid --grace-period "1.5"/);
  });

  it("fails in kubectl's words", () => {
    assert.equal(
      drainFailure('n1', ['e1']),
      'error: unable to drain node "n1" due to error: e1, continuing command...\nThere are pending nodes to be drained:\n n1\ne1\n',
    );
    assert.match(drainFailure('n1', ['e1', 'e2']), /due to error: \[e1, e2\], continuing command\.\.\.\n[\s\S]*\ne1\ne2\n$/);
  });
});
