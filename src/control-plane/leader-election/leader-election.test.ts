// The election decision and fencing as tables, and two electors over one in-memory store with resourceVersion preconditions.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Lease } from '../../core/api/lease.js';
import type { Client } from '../../core/client/client.js';
import { AlreadyExistsError, ConflictError, NotFoundError } from '../../core/errors.js';
import { waitFor } from '../../core/wait-for.js';
import { DEFAULT_ELECTION_TIMING, decideElection, fenceAt, LeaderElector, leaseExpiresAt, releasedSpec } from './leader-election.js';

const T0 = Date.parse('2026-01-01T00:00:00.000Z');
const timing = DEFAULT_ELECTION_TIMING;

function lease(spec: Lease['spec'], resourceVersion = '7'): Lease {
  return { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'kube-scheduler', namespace: 'kube-system', resourceVersion }, spec };
}
const iso = (ms: number) => new Date(ms).toISOString();

describe('decideElection', () => {
  const cases: {
    name: string;
    lease?: Lease;
    observedAt?: number;
    now: number;
    want: { action: string; holder?: string; transitions?: number; acquireTime?: string };
  }[] = [
    { name: 'no lease: create it, held by us', now: T0, want: { action: 'create', holder: 'a', transitions: 0, acquireTime: iso(T0) } },
    {
      name: 'another holder renewed 5 s ago: wait',
      lease: lease({ holderIdentity: 'b', leaseDurationSeconds: 15, renewTime: iso(T0 - 5000), leaseTransitions: 3 }),
      now: T0,
      want: { action: 'wait', holder: 'b' },
    },
    {
      name: 'another holder whose renewTime is older than the duration: take it at once (a fresh start)',
      lease: lease({ holderIdentity: 'b', leaseDurationSeconds: 15, renewTime: iso(T0 - 16_000), leaseTransitions: 3 }),
      now: T0,
      want: { action: 'update', holder: 'a', transitions: 4, acquireTime: iso(T0) },
    },
    {
      name: 'renewTime looks fresh (a clock ahead) but we watched it unchanged for the whole duration: take it',
      lease: lease({ holderIdentity: 'b', leaseDurationSeconds: 15, renewTime: iso(T0 + 60_000), leaseTransitions: 1 }),
      observedAt: T0 - 15_000,
      now: T0,
      want: { action: 'update', holder: 'a', transitions: 2 },
    },
    {
      name: 'watched unchanged for 14 s of 15: still wait',
      lease: lease({ holderIdentity: 'b', leaseDurationSeconds: 15, renewTime: iso(T0 + 60_000) }),
      observedAt: T0 - 14_000,
      now: T0,
      want: { action: 'wait', holder: 'b' },
    },
    {
      name: 'our own lease (a renewal, or our restart): keep acquireTime and transitions',
      lease: lease({ holderIdentity: 'a', leaseDurationSeconds: 15, acquireTime: iso(T0 - 60_000), renewTime: iso(T0 - 2000), leaseTransitions: 2 }),
      now: T0,
      want: { action: 'update', holder: 'a', transitions: 2, acquireTime: iso(T0 - 60_000) },
    },
    {
      name: 'released (no holder): take it at once',
      lease: lease({ holderIdentity: null, leaseDurationSeconds: 1, renewTime: iso(T0), leaseTransitions: 5 }),
      now: T0,
      want: { action: 'update', holder: 'a', transitions: 6 },
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const d = decideElection({ identity: 'a', now: c.now, observation: { lease: c.lease, observedAt: c.observedAt ?? c.now }, timing });
      assert.equal(d.action, c.want.action);
      if (d.action === 'wait') {
        assert.equal(d.holder, c.want.holder);
        return;
      }
      assert.equal(d.spec.holderIdentity, c.want.holder);
      assert.equal(d.spec.leaseDurationSeconds, 15);
      assert.equal(Date.parse(d.spec.renewTime!), c.now);
      assert.equal(d.spec.leaseTransitions, c.want.transitions);
      if (c.want.acquireTime) assert.equal(Date.parse(d.spec.acquireTime!), Date.parse(c.want.acquireTime));
    });
  }
});

describe('fencing', () => {
  it('the leader stops before anyone may take its lease, for any write latency', () => {
    for (const latencyMs of [0, 500, 4000, 9999]) {
      const sentAt = T0;
      const stored = lease({ holderIdentity: 'a', leaseDurationSeconds: 15, renewTime: iso(sentAt + latencyMs) });
      // The earliest another candidate could take it: it saw the write at once and judges by renewTime too.
      const takeoverAt = leaseExpiresAt({ lease: stored, observedAt: sentAt + latencyMs }, timing);
      assert.ok(fenceAt(sentAt, timing) < takeoverAt, `latency ${latencyMs}`);
      assert.equal(takeoverAt - fenceAt(sentAt, timing), 5000 + latencyMs);
    }
  });
  it('a released lease names no holder and is free to take', () => {
    const spec = releasedSpec(lease({ holderIdentity: 'a', leaseDurationSeconds: 15, leaseTransitions: 4 }), T0);
    assert.equal(spec.holderIdentity, null);
    assert.equal(spec.leaseTransitions, 4);
    const d = decideElection({ identity: 'b', now: T0, observation: { lease: lease(spec), observedAt: T0 }, timing });
    assert.equal(d.action, 'update');
  });
});

/** Leases in memory with the API's rules: create fails if present, replace needs the current resourceVersion. */
class MemoryLeases {
  stored: Lease | undefined;
  revision = 0;
  /** When set, writes hang until released: a store that stopped answering. */
  stall: Promise<void> | undefined;
  writes = 0;
  client(): Client {
    const self = this;
    return {
      async get() {
        if (!self.stored) throw new NotFoundError('leases.coordination.k8s.io "x" not found');
        return structuredClone(self.stored);
      },
      async create(_def: unknown, obj: unknown) {
        await self.stall;
        if (self.stored) throw new AlreadyExistsError('leases.coordination.k8s.io "x" already exists');
        return self.#put(obj as Lease);
      },
      async replace(_def: unknown, _ref: unknown, obj: unknown) {
        await self.stall;
        const l = obj as Lease;
        if (!self.stored || l.metadata.resourceVersion !== self.stored.metadata.resourceVersion) throw new ConflictError('the object has been modified');
        return self.#put(l);
      },
    } as unknown as Client;
  }
  #put(l: Lease): Lease {
    this.writes++;
    this.stored = structuredClone({ ...l, metadata: { ...l.metadata, resourceVersion: String(++this.revision) } });
    return structuredClone(this.stored);
  }
}

const fast = { leaseDurationMs: 1500, renewDeadlineMs: 1000, retryPeriodMs: 100 };

describe('LeaderElector', () => {
  it('two candidates: exactly one leads; on a clean stop the other takes over at once', async () => {
    const store = new MemoryLeases();
    const leading = new Set<string>();
    let overlap = false;
    const candidate = (identity: string) => {
      const stop = new AbortController();
      const elector = new LeaderElector({
        client: store.client(),
        name: 'kube-scheduler',
        identity,
        timing: { leaseDurationMs: 10_000, renewDeadlineMs: 5000, retryPeriodMs: 50 },
        async onStartedLeading(signal) {
          if (leading.size > 0) overlap = true;
          leading.add(identity);
          await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
          leading.delete(identity);
        },
      });
      return { stop, running: elector.start(stop.signal), elector };
    };
    const a = candidate('a');
    await waitFor(() => a.elector.isLeader, { description: 'a to lead' });
    const b = candidate('b');
    await waitFor(() => store.writes >= 4, { description: 'a few renewals' });
    assert.equal(b.elector.isLeader, false);
    assert.deepEqual([...leading], ['a']);
    a.stop.abort();
    await a.running;
    // Released: b needs no 10 s wait.
    await waitFor(() => b.elector.isLeader, { timeoutMs: 2000, description: 'b to lead after a released the lease' });
    assert.equal(store.stored?.spec?.holderIdentity, 'b');
    assert.equal(store.stored?.spec?.leaseTransitions, 1);
    b.stop.abort();
    await b.running;
    assert.equal(overlap, false);
  });

  it('fences: a leader whose renewals stall stops acting within the renew deadline, before its lease expires', async () => {
    const store = new MemoryLeases();
    let startedAt = 0;
    let stoppedAt = 0;
    let lastRenewSent = 0;
    const stop = new AbortController();
    const elector = new LeaderElector({
      client: store.client(),
      name: 'kube-controller-manager',
      identity: 'a',
      timing: fast,
      async onStartedLeading(signal) {
        startedAt = Date.now();
        await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
        stoppedAt = Date.now();
      },
    });
    const running = elector.start(stop.signal);
    await waitFor(() => startedAt > 0 && store.writes >= 3, { description: 'a to lead and renew' });
    let unstall!: () => void;
    store.stall = new Promise<void>((resolve) => {
      unstall = resolve;
    });
    lastRenewSent = Date.parse(store.stored!.spec!.renewTime!);
    await waitFor(() => stoppedAt > 0, { timeoutMs: 3000, description: 'the component to be fenced' });
    const expiresAt = lastRenewSent + fast.leaseDurationMs;
    assert.ok(stoppedAt < expiresAt, `stopped ${expiresAt - stoppedAt} ms before expiry`);
    assert.equal(elector.isLeader, false);
    // The store answers again: it leads again (its own lease) with a fresh component.
    startedAt = 0;
    unstall();
    store.stall = undefined;
    await waitFor(() => startedAt > 0, { timeoutMs: 2000, description: 'a to lead again' });
    stop.abort();
    await running;
  });

  it('a component that ends on its own while leading is started again', async () => {
    const store = new MemoryLeases();
    let runs = 0;
    const stop = new AbortController();
    const elector = new LeaderElector({
      client: store.client(),
      name: 'kube-controller-manager',
      identity: 'a',
      timing: fast,
      async onStartedLeading(signal) {
        runs++;
        // The first run fails at once; the second runs until its term ends.
        if (runs === 1) throw new Error('boom');
        await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
      },
    });
    const running = elector.start(stop.signal);
    await waitFor(() => runs === 2 && elector.isLeader, { timeoutMs: 3000, description: 'the component to be run again' });
    assert.equal(store.stored?.spec?.holderIdentity, 'a');
    assert.equal(store.stored?.spec?.leaseTransitions, 0, 'its own lease throughout');
    stop.abort();
    await running;
  });

  it('a candidate takes a lease whose holder vanished only after the duration', async () => {
    const store = new MemoryLeases();
    store.stored = lease({ holderIdentity: 'gone', leaseDurationSeconds: 1, renewTime: new Date().toISOString() });
    const stop = new AbortController();
    let ledAt = 0;
    const since = Date.now();
    const elector = new LeaderElector({
      client: store.client(),
      name: 'kube-scheduler',
      identity: 'b',
      timing: { leaseDurationMs: 1000, renewDeadlineMs: 600, retryPeriodMs: 50 },
      async onStartedLeading(signal) {
        ledAt = Date.now();
        await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
      },
    });
    const running = elector.start(stop.signal);
    await waitFor(() => ledAt > 0, { timeoutMs: 3000, description: 'b to take the expired lease' });
    assert.ok(ledAt - since >= 900, `took it after ${ledAt - since} ms`);
    assert.equal(store.stored?.spec?.leaseTransitions, 1);
    stop.abort();
    await running;
  });
});
