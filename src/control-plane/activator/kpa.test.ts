// The function autoscaler's decision (Knative KPA): stable window, panic, slow scale-down, scale to zero after the grace, min/max scale.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { decideScale, type KpaInput, type KpaState } from './kpa.js';

const settings = { target: 10, minScale: 0, maxScale: 10, idleGraceMs: 30_000 };
const calm: KpaState = { maxPanicPods: 0 };

function input(o: Partial<KpaInput>): KpaInput {
  return {
    now: 100_000,
    stableConcurrency: 0,
    panicConcurrency: 0,
    readyPods: 0,
    currentReplicas: 0,
    inFlight: 0,
    idleMs: Infinity,
    settings,
    state: calm,
    ...o,
  };
}

describe('decideScale', () => {
  const cases: [string, Partial<KpaInput>, { desired: number; panicking?: boolean; reason?: RegExp }][] = [
    ['nothing ever: stays at zero', {}, { desired: 0, reason: /no requests/ }],
    [
      'a request held at zero pods: one pod at once',
      { inFlight: 1, panicConcurrency: 0.2, stableConcurrency: 0.2 },
      { desired: 1, reason: /in flight|stable/ },
    ],
    [
      'stable load: ceil(average / target)',
      { stableConcurrency: 25, panicConcurrency: 25, readyPods: 3, currentReplicas: 3, inFlight: 25, idleMs: 0 },
      { desired: 3, panicking: false, reason: /stable: 25 in flight/ },
    ],
    [
      'stable load grows within the threshold: up to what it needs',
      { stableConcurrency: 38, panicConcurrency: 45, readyPods: 3, currentReplicas: 3, inFlight: 40, idleMs: 0 },
      { desired: 4, panicking: false },
    ],
    [
      'panic window at twice the ready pods: panic, take the panic figure',
      { stableConcurrency: 12, panicConcurrency: 60, readyPods: 2, currentReplicas: 2, inFlight: 60, idleMs: 0 },
      { desired: 6, panicking: true, reason: /panic: 60 in flight over 6 s/ },
    ],
    [
      'cold start burst of 50: five pods at once',
      { stableConcurrency: 50, panicConcurrency: 50, readyPods: 0, currentReplicas: 1, inFlight: 50, idleMs: 0 },
      { desired: 5, panicking: true },
    ],
    ['load gone: at most halve per decision', { stableConcurrency: 1, panicConcurrency: 0, readyPods: 8, currentReplicas: 8, idleMs: 5_000 }, { desired: 4 }],
    ['odd count halves down rounding down', { stableConcurrency: 0.5, panicConcurrency: 0, readyPods: 5, currentReplicas: 5, idleMs: 5_000 }, { desired: 2 }],
    [
      'one pod left, idle within the grace: kept',
      { stableConcurrency: 0, panicConcurrency: 0, readyPods: 1, currentReplicas: 1, idleMs: 10_000 },
      { desired: 1, reason: /idle grace: 20 s left/ },
    ],
    [
      'idle past the grace: to zero',
      { stableConcurrency: 0.3, panicConcurrency: 0, readyPods: 1, currentReplicas: 1, idleMs: 30_000 },
      { desired: 0, reason: /idle for 30 s \(grace 30 s\)/ },
    ],
    [
      'idle past the grace with several pods: straight to zero',
      { stableConcurrency: 2, panicConcurrency: 0, readyPods: 3, currentReplicas: 3, idleMs: 45_000 },
      { desired: 0 },
    ],
    [
      'in flight never goes to zero, however long since the last arrival',
      { stableConcurrency: 0, panicConcurrency: 0, readyPods: 1, currentReplicas: 1, inFlight: 1, idleMs: 0 },
      { desired: 1 },
    ],
    [
      'minScale holds pods when idle',
      { settings: { ...settings, minScale: 2 }, readyPods: 2, currentReplicas: 2, idleMs: 90_000 },
      { desired: 2, reason: /minScale 2/ },
    ],
    [
      'maxScale caps a panic',
      { settings: { ...settings, maxScale: 3 }, stableConcurrency: 20, panicConcurrency: 200, readyPods: 2, currentReplicas: 2, inFlight: 200, idleMs: 0 },
      { desired: 3, panicking: true, reason: /maxScale 3/ },
    ],
    [
      'target 1: one pod per request in flight',
      { settings: { ...settings, target: 1 }, stableConcurrency: 3, panicConcurrency: 3, readyPods: 3, currentReplicas: 3, inFlight: 3, idleMs: 0 },
      { desired: 3 },
    ],
  ];
  for (const [name, given, want] of cases) {
    it(name, () => {
      const d = decideScale(input(given));
      assert.equal(d.desired, want.desired);
      if (want.panicking !== undefined) assert.equal(d.panicking, want.panicking);
      if (want.reason) assert.match(d.reason, want.reason);
    });
  }

  it('never scales down while panicking, and stops panicking a stable window after the last surge', () => {
    // The surge: panic at 8 pods.
    let d = decideScale(input({ now: 0, stableConcurrency: 20, panicConcurrency: 80, readyPods: 2, currentReplicas: 2, inFlight: 80, idleMs: 0 }));
    assert.deepEqual([d.desired, d.panicking, d.state.maxPanicPods], [8, true, 8]);
    // Load falls off while still in panic: hold 8.
    d = decideScale(
      input({ now: 2_000, stableConcurrency: 25, panicConcurrency: 10, readyPods: 8, currentReplicas: 8, inFlight: 10, idleMs: 0, state: d.state }),
    );
    assert.deepEqual([d.desired, d.panicking], [8, true]);
    d = decideScale(
      input({ now: 59_000, stableConcurrency: 12, panicConcurrency: 5, readyPods: 8, currentReplicas: 8, inFlight: 5, idleMs: 0, state: d.state }),
    );
    assert.deepEqual([d.desired, d.panicking], [8, true]);
    // A stable window (60 s) after the panic began with no new surge: calm again, and down by at most half.
    d = decideScale(
      input({ now: 60_001, stableConcurrency: 12, panicConcurrency: 5, readyPods: 8, currentReplicas: 8, inFlight: 5, idleMs: 0, state: d.state }),
    );
    assert.deepEqual([d.desired, d.panicking, d.state.maxPanicPods], [4, false, 0]);
  });

  it('a new surge during a panic extends it and raises the floor', () => {
    let d = decideScale(input({ now: 0, stableConcurrency: 10, panicConcurrency: 40, readyPods: 2, currentReplicas: 2, inFlight: 40, idleMs: 0 }));
    assert.equal(d.desired, 4);
    d = decideScale(
      input({ now: 30_000, stableConcurrency: 30, panicConcurrency: 90, readyPods: 4, currentReplicas: 4, inFlight: 90, idleMs: 0, state: d.state }),
    );
    assert.deepEqual([d.desired, d.state.panicTime], [9, 30_000]);
    d = decideScale(
      input({ now: 70_000, stableConcurrency: 20, panicConcurrency: 10, readyPods: 9, currentReplicas: 9, inFlight: 10, idleMs: 0, state: d.state }),
    );
    assert.deepEqual([d.desired, d.panicking], [9, true]);
  });

  it('soft update: the new version inherits the load, and its ready pods are what counts', () => {
    // The new version's RS starts with the old one's replicas (3) but none of its pods are ready yet:
    // the panic ratio is judged against max(1, ready), so a steady 25 in flight does not trigger a runaway.
    const d = decideScale(input({ stableConcurrency: 25, panicConcurrency: 25, readyPods: 0, currentReplicas: 3, inFlight: 25, idleMs: 0 }));
    assert.equal(d.desired, 3);
  });
});
