// Tests of the status the kubelet reports: phase by Kubernetes' rules, conditions, container states and transitions.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ContainerStatus, Pod } from '../../core/api/pod.js';
import type { RuntimePod } from '../../runtime/provider.js';
import { computePodStatus, podPhase, sameStatus } from './pod-status.js';

function pod(restartPolicy: Pod['spec']['restartPolicy'] = 'Always', containers = ['app']): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'web', namespace: 'default', uid: 'u1' },
    spec: {
      containers: containers.map((name) => ({ name, image: 'busybox:1.35', readinessProbe: name === 'gated' ? { exec: { command: ['true'] } } : undefined })),
      restartPolicy,
    },
    status: {},
  } as Pod;
}

const running: ContainerStatus = { name: 'a', state: { running: {} }, ready: true, restartCount: 0 };
const done = (exitCode: number): ContainerStatus => ({ name: 'a', state: { terminated: { exitCode } }, ready: false, restartCount: 0 });
const creating: ContainerStatus = { name: 'a', state: { waiting: { reason: 'ContainerCreating' } }, ready: false, restartCount: 0 };
const crashLoop: ContainerStatus = {
  name: 'a',
  state: { waiting: { reason: 'CrashLoopBackOff' } },
  lastState: { terminated: { exitCode: 1 } },
  ready: false,
  restartCount: 3,
};

describe('podPhase', () => {
  const cases: [string, Pod['spec']['restartPolicy'], ContainerStatus[], string][] = [
    ['nothing started yet', 'Always', [creating], 'Pending'],
    ['one running, one still creating', 'Always', [running, creating], 'Pending'],
    ['all running', 'Always', [running, running], 'Running'],
    ['crash looping under Always', 'Always', [crashLoop], 'Running'],
    ['one running, one exited 0', 'Never', [running, done(0)], 'Running'],
    ['all exited 0, Never', 'Never', [done(0), done(0)], 'Succeeded'],
    ['one failed, Never', 'Never', [done(0), done(1)], 'Failed'],
    ['exited 0 under OnFailure', 'OnFailure', [done(0)], 'Succeeded'],
    ['exited 1 under OnFailure (will restart)', 'OnFailure', [done(1)], 'Running'],
    ['exited 0 under Always (will restart)', 'Always', [done(0)], 'Running'],
  ];
  for (const [name, policy, statuses, phase] of cases) {
    it(name, () => assert.equal(podPhase(pod(policy), statuses), phase));
  }
});

describe('computePodStatus', () => {
  const rt: RuntimePod = {
    uid: 'u1',
    namespace: 'default',
    name: 'web',
    sandbox: { id: 's', state: 'ready', ip: '10.244.1.5', createdAt: '2026-01-01T00:00:00Z' },
    containers: [
      {
        name: 'app',
        id: 'abc',
        image: 'busybox:1.35',
        state: 'running',
        attempt: 2,
        createdAt: '2026-01-01T00:00:00Z',
        startedAt: '2026-01-01T00:00:02Z',
        previous: {
          name: 'app',
          id: 'old',
          image: 'busybox:1.35',
          state: 'exited',
          attempt: 1,
          createdAt: '2026-01-01T00:00:00Z',
          exitCode: 137,
          reason: 'OOMKilled',
          finishedAt: '2026-01-01T00:00:01Z',
        },
      },
    ],
  };
  const now = new Date('2026-01-01T00:01:00Z');

  it('reports a running pod: IPs, Ready, restart count, last state, container ID', () => {
    const s = computePodStatus({ pod: pod(), runtime: rt, nodeIP: '192.168.0.2', waiting: new Map(), probes: () => ({ ready: true, started: true }), now });
    assert.equal(s.phase, 'Running');
    assert.equal(s.podIP, '10.244.1.5');
    assert.equal(s.hostIP, '192.168.0.2');
    assert.equal(s.qosClass, 'BestEffort');
    const c = s.containerStatuses![0]!;
    assert.deepEqual([c.ready, c.restartCount, c.containerID], [true, 2, 'docker://abc']);
    assert.equal(c.lastState?.terminated?.reason, 'OOMKilled');
    assert.deepEqual(
      s.conditions!.map((x) => `${x.type}=${x.status}`),
      ['Initialized=True', 'Ready=True', 'ContainersReady=True', 'PodScheduled=True'],
    );
  });

  it('keeps Ready false while the readiness probe has not passed, naming the container', () => {
    const s = computePodStatus({ pod: pod(), runtime: rt, nodeIP: '192.168.0.2', waiting: new Map(), probes: () => ({ ready: false, started: true }), now });
    const ready = s.conditions!.find((x) => x.type === 'Ready')!;
    assert.deepEqual([ready.status, ready.reason, ready.message], ['False', 'ContainersNotReady', 'containers with unready status: [app]']);
  });

  it('holds Ready false until every readiness gate is a True condition, and keeps the conditions others set', () => {
    const gated = (conditions: { type: string; status: string }[]): Pod => {
      const p = pod();
      p.spec.readinessGates = [{ conditionType: 'example.com/lb-ready' }];
      p.status = { phase: 'Running', conditions: conditions as NonNullable<Pod['status']>['conditions'] };
      return p;
    };
    const statusOf = (p: Pod) =>
      computePodStatus({ pod: p, runtime: rt, nodeIP: '192.168.0.2', waiting: new Map(), probes: () => ({ ready: true, started: true }), now });
    const readyOf = (p: Pod) => statusOf(p).conditions!.find((x) => x.type === 'Ready')!;
    const cases: [string, { type: string; status: string }[], string, string | undefined][] = [
      ['no such condition yet', [], 'False', 'corresponding condition of pod readiness gate "example.com/lb-ready" does not exist.'],
      [
        'the condition is False',
        [{ type: 'example.com/lb-ready', status: 'False' }],
        'False',
        'the status of pod readiness gate "example.com/lb-ready" is not "True", but False',
      ],
      ['the condition is True', [{ type: 'example.com/lb-ready', status: 'True' }], 'True', undefined],
    ];
    for (const [name, conditions, status, message] of cases) {
      const ready = readyOf(gated(conditions));
      assert.equal(ready.status, status, name);
      assert.equal(ready.message, message, name);
      if (status === 'False') assert.equal(ready.reason, 'ReadinessGatesNotReady', name);
    }
    const kept = statusOf(gated([{ type: 'example.com/lb-ready', status: 'True' }]));
    assert.deepEqual(
      kept.conditions!.map((x) => `${x.type}=${x.status}`),
      ['Initialized=True', 'Ready=True', 'ContainersReady=True', 'PodScheduled=True', 'example.com/lb-ready=True'],
      "the gate's condition stays as its owner set it",
    );
    // Containers not ready: that is the reason, whatever the gates say.
    const p = gated([{ type: 'example.com/lb-ready', status: 'True' }]);
    const unready = computePodStatus({ pod: p, runtime: rt, nodeIP: '192.168.0.2', waiting: new Map(), probes: () => ({ ready: false, started: true }), now });
    assert.equal(unready.conditions!.find((x) => x.type === 'Ready')!.reason, 'ContainersNotReady');
  });

  it('keeps lastTransitionTime while a condition holds, and moves it when it flips', () => {
    const first = computePodStatus({ pod: pod(), runtime: rt, nodeIP: 'h', waiting: new Map(), probes: () => ({ ready: false, started: true }), now });
    const withStatus = { ...pod(), status: first } as Pod;
    const later = new Date('2026-01-01T00:05:00Z');
    const same = computePodStatus({
      pod: withStatus,
      runtime: rt,
      nodeIP: 'h',
      waiting: new Map(),
      probes: () => ({ ready: false, started: true }),
      now: later,
    });
    assert.equal(same.conditions!.find((x) => x.type === 'Ready')!.lastTransitionTime, now.toISOString());
    assert.ok(sameStatus(first, same));
    const flipped = computePodStatus({
      pod: withStatus,
      runtime: rt,
      nodeIP: 'h',
      waiting: new Map(),
      probes: () => ({ ready: true, started: true }),
      now: later,
    });
    assert.equal(flipped.conditions!.find((x) => x.type === 'Ready')!.lastTransitionTime, later.toISOString());
    assert.ok(!sameStatus(first, flipped));
  });

  it('shows a waiting reason and the terminated instance as lastState while backing off', () => {
    const dead: RuntimePod = {
      ...rt,
      containers: [{ ...rt.containers[0]!, state: 'exited', exitCode: 1, finishedAt: '2026-01-01T00:00:30Z', previous: undefined }],
    };
    const s = computePodStatus({
      pod: pod(),
      runtime: dead,
      nodeIP: 'h',
      waiting: new Map([['app', { reason: 'CrashLoopBackOff', message: 'back-off 10s' }]]),
      probes: () => ({ ready: true, started: true }),
      now,
    });
    const c = s.containerStatuses![0]!;
    assert.equal(c.state?.waiting?.reason, 'CrashLoopBackOff');
    assert.equal(c.lastState?.terminated?.exitCode, 1);
    assert.equal(c.lastState?.terminated?.reason, 'Error');
    assert.equal(s.phase, 'Running');
  });

  it('shows ContainerCreating (or the failure) before a container exists', () => {
    const s = computePodStatus({
      pod: pod(),
      runtime: undefined,
      nodeIP: 'h',
      waiting: new Map([['app', { reason: 'ErrImagePull', message: 'not found' }]]),
      probes: () => ({ ready: true, started: true }),
      now,
    });
    assert.deepEqual(s.containerStatuses![0]!.state, { waiting: { reason: 'ErrImagePull', message: 'not found' } });
    assert.equal(s.phase, 'Pending');
    assert.equal(s.podIP, undefined);
  });
});
