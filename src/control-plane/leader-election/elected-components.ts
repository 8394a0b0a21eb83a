// The master's components that must run once per cluster, each group under its own Lease in kube-system; the API servers stay active-active.
import { randomBytes } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import { readFileSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import type { Client } from '../../core/client/client.js';
import type { InformerFactory } from '../../core/controller/informer-factory.js';
import { type ElectionTiming, LeaderElector } from './leader-election.js';

/**
 * The Leases, named as Kubernetes names its own where the component is Kubernetes' (the
 * controller manager's controllers, the scheduler) and minik8s-* for ours.
 */
export const LEASE_NAMES = {
  controllerManager: 'kube-controller-manager',
  scheduler: 'kube-scheduler',
  functions: 'minik8s-function-controller',
  cronTriggers: 'minik8s-cron-triggers',
  activatorAutoscaler: 'minik8s-activator-autoscaler',
  storeCompactor: 'minik8s-store-compactor',
} as const;

/** A component run while its Lease is held: built afresh for each term (on informers whose handlers go with the term). */
export type ElectedComponent = (leaderSignal: AbortSignal, informers: InformerFactory) => Promise<unknown>;

export interface ElectedComponentsOptions {
  client: Client;
  informers: InformerFactory;
  identity: string;
  /** Lease name -> what runs under it. */
  components: Record<string, ElectedComponent>;
  timing?: Partial<ElectionTiming>;
  log: (message: string) => void;
}

/** Runs one elector per Lease until `signal` aborts; resolves once every component has stopped and its Lease is released. */
export async function runElectedComponents(options: ElectedComponentsOptions, signal: AbortSignal): Promise<void> {
  await Promise.all(
    Object.entries(options.components).map(([name, run]) =>
      new LeaderElector({
        client: options.client,
        name,
        identity: options.identity,
        timing: options.timing,
        log: options.log,
        onStartedLeading: async (leaderSignal) => {
          // Every informer handler and loop of the component listens on it: many listeners are by design.
          setMaxListeners(100, leaderSignal);
          await run(leaderSignal, options.informers.scoped(leaderSignal));
        },
      }).start(signal),
    ),
  );
}

/**
 * This master's identity in Leases: HOSTNAME_RANDOM, made at its first start and kept in
 * DATA_DIR/master-id, so that a restarted master takes its own Leases back at once. Each master
 * needs its own: copy the pki, never this file, to a new master.
 */
export function loadOrCreateMasterIdentity(dataDir: string): string {
  const path = join(dataDir, 'master-id');
  try {
    const id = readFileSync(path, 'utf8').trim();
    if (id) return id;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  const id = `${hostname()}_${randomBytes(6).toString('hex')}`;
  writeFileSync(path, `${id}\n`, { mode: 0o600 });
  return id;
}
