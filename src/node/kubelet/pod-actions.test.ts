// Table-driven tests of the kubelet's pure pod plan: first start, restarts by policy, backoff, probes, failed starts.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Pod } from '../../core/api/pod.js';
import type { RuntimeContainer, RuntimePod } from '../../runtime/provider.js';
import { formatDelay, planPod, podFinished, SANDBOX, shouldRestart, type PlanInput, type StartFailure } from './pod-actions.js';
import { RestartBackoff } from './restart-backoff.js';

const NOW = Date.parse('2026-01-01T00:10:00Z');

function pod(overrides: Partial<Pod['spec']> = {}): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'web', namespace: 'default', uid: 'u1' },
    spec: { containers: [{ name: 'app', image: 'busybox:1.35' }], restartPolicy: 'Always', terminationGracePeriodSeconds: 30, ...overrides },
    status: {},
  } as Pod;
}

function container(over: Partial<RuntimeContainer> = {}): RuntimeContainer {
  return {
    name: 'app',
    id: 'c1',
    image: 'busybox:1.35',
    state: 'running',
    attempt: 0,
    createdAt: '2026-01-01T00:00:00Z',
    startedAt: '2026-01-01T00:00:01Z',
    ...over,
  };
}

function runtime(containers: RuntimeContainer[], state: 'ready' | 'notready' = 'ready'): RuntimePod {
  return { uid: 'u1', namespace: 'default', name: 'web', sandbox: { id: 's1', state, ip: '10.244.1.2', createdAt: '2026-01-01T00:00:00Z' }, containers };
}

function input(over: Partial<PlanInput> = {}): PlanInput {
  return { pod: pod(), runtime: undefined, now: NOW, backoff: new RestartBackoff(), failures: new Map(), probes: () => ({}), ...over };
}

const exited = (exitCode: number, finishedAt = '2026-01-01T00:09:59Z', attempt = 0) => container({ state: 'exited', exitCode, finishedAt, attempt });

describe('planPod', () => {
  it('creates the sandbox, then starts every container at attempt 0', () => {
    const p = pod({
      containers: [
        { name: 'a', image: 'x' },
        { name: 'b', image: 'y' },
      ],
    } as Partial<Pod['spec']>);
    assert.deepEqual(planPod(input({ pod: p })).actions, [
      { type: 'createSandbox' },
      { type: 'start', container: 'a', attempt: 0 },
      { type: 'start', container: 'b', attempt: 0 },
    ]);
  });

  it('does nothing to a running container that passes its probes', () => {
    const plan = planPod(input({ runtime: runtime([container()]) }));
    assert.deepEqual(plan.actions, []);
    assert.equal(plan.waiting.size, 0);
  });

  it('restarts per restartPolicy and exit code', () => {
    const cases: [Pod['spec']['restartPolicy'], number, boolean][] = [
      ['Always', 0, true],
      ['Always', 1, true],
      ['OnFailure', 0, false],
      ['OnFailure', 137, true],
      ['Never', 1, false],
      ['Never', 0, false],
    ];
    for (const [policy, code, restart] of cases) {
      const plan = planPod(input({ pod: pod({ restartPolicy: policy }), runtime: runtime([exited(code)]) }));
      assert.deepEqual(plan.actions, restart ? [{ type: 'start', container: 'app', attempt: 1 }] : [], `${policy} exit ${code}`);
      assert.equal(shouldRestart(policy, code), restart);
    }
  });

  it('waits in CrashLoopBackOff while the backoff runs, and says when to look again', () => {
    const backoff = new RestartBackoff();
    backoff.next('u1/app', NOW - 5000); // restarted 5 s ago: the next start waits 10 s after the exit
    const plan = planPod(input({ backoff, runtime: runtime([exited(1, new Date(NOW - 2000).toISOString(), 3)]) }));
    assert.deepEqual(plan.actions, []);
    assert.equal(plan.waiting.get('app')?.reason, 'CrashLoopBackOff');
    assert.equal(plan.waiting.get('app')?.message, 'back-off 10s restarting failed container=app pod=web_default(u1)');
    assert.equal(plan.requeueAfterMs, 8000);
  });

  it('starts again once the backoff has passed, one attempt higher', () => {
    const backoff = new RestartBackoff();
    backoff.next('u1/app', NOW - 30_000);
    const plan = planPod(input({ backoff, runtime: runtime([exited(1, new Date(NOW - 11_000).toISOString(), 3)]) }));
    assert.deepEqual(plan.actions, [{ type: 'start', container: 'app', attempt: 4 }]);
  });

  it('kills a container whose liveness or startup probe failed, with the probe grace period if set', () => {
    const live = planPod(input({ runtime: runtime([container()]), probes: () => ({ livenessFailed: 'HTTP probe failed with statuscode: 500' }) }));
    assert.deepEqual(live.actions, [
      { type: 'kill', container: 'app', gracePeriodSeconds: 30, reason: 'Killing', message: 'Container app failed liveness probe, will be restarted' },
    ]);
    const p = pod({ containers: [{ name: 'app', image: 'x', startupProbe: { exec: { command: ['false'] }, terminationGracePeriodSeconds: 5 } }] } as Partial<
      Pod['spec']
    >);
    const startup = planPod(input({ pod: p, runtime: runtime([container()]), probes: () => ({ startupFailed: 'x' }) }));
    assert.deepEqual(
      startup.actions.map((a) => a.type === 'kill' && [a.gracePeriodSeconds, a.message]),
      [[5, 'Container app failed startup probe, will be restarted']],
    );
  });

  it('shows ImagePullBackOff after a failed pull until the backoff passes', () => {
    const backoff = new RestartBackoff();
    backoff.next('u1/app', NOW - 1000);
    const failures = new Map<string, StartFailure>([['app', { reason: 'ErrImagePull', message: 'manifest unknown', at: NOW - 1000 }]]);
    const waiting = planPod(input({ backoff, failures, runtime: runtime([]) }));
    assert.deepEqual(waiting.actions, []);
    assert.equal(waiting.waiting.get('app')?.reason, 'ImagePullBackOff');
    assert.equal(waiting.requeueAfterMs, 9000);
    const retry = planPod(input({ backoff, failures, runtime: runtime([]), now: NOW + 9000 }));
    assert.deepEqual(retry.actions, [{ type: 'start', container: 'app', attempt: 0 }]);
  });

  it('backs off a sandbox that could not be created, showing the reason on every container', () => {
    const backoff = new RestartBackoff();
    backoff.next(`u1/${SANDBOX}`, NOW);
    const failures = new Map<string, StartFailure>([[SANDBOX, { reason: 'RunContainerError', message: 'port 8080 is already allocated', at: NOW }]]);
    const plan = planPod(input({ backoff, failures }));
    assert.deepEqual(plan.actions, []);
    assert.deepEqual(plan.waiting.get('app'), { reason: 'RunContainerError', message: 'port 8080 is already allocated' });
  });

  it('recreates a dead sandbox and restarts its containers one attempt higher', () => {
    const plan = planPod(input({ runtime: runtime([container({ state: 'exited', exitCode: 137, attempt: 2 })], 'notready') }));
    assert.deepEqual(plan.actions, [
      { type: 'killPod', reason: 'the pod sandbox is not running' },
      { type: 'createSandbox' },
      { type: 'start', container: 'app', attempt: 3 },
    ]);
  });

  it('leaves a finished pod alone', () => {
    const p = pod({ restartPolicy: 'Never' });
    const rt = runtime([exited(0)], 'notready');
    assert.equal(podFinished(p, rt), true);
    assert.deepEqual(planPod(input({ pod: p, runtime: rt })).actions, []);
  });

  it('prints delays like Go durations', () => {
    assert.deepEqual([10, 80, 160, 300].map(formatDelay), ['10s', '1m20s', '2m40s', '5m0s']);
  });
});
