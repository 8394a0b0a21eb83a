// Deployment controller: rollouts of a pod template through ReplicaSets named by the template's hash.
import { createHash } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import {
  CHANGE_CAUSE_ANNOTATION,
  deploymentKind,
  POD_TEMPLATE_HASH_LABEL,
  resolveIntOrPercent,
  REVISION_ANNOTATION,
  revisionOf,
  type Deployment,
  type DeploymentStatus,
} from '../../core/api/deployment.js';
import type { Condition, OwnerReference } from '../../core/api/meta.js';
import { podKind, type Pod, type PodTemplateSpec } from '../../core/api/pod.js';
import { replicaSetKind, type ReplicaSet } from '../../core/api/replicaset.js';
import { matches, selectorFromLabelSelector, type Selector } from '../../core/api/selector.js';
import type { Client } from '../../core/client/client.js';
import { runController } from '../../core/controller/controller.js';
import { NAMESPACE_INDEX, objectKey, OWNER_UID_INDEX, type Informer } from '../../core/controller/informer.js';
import type { InformerFactory } from '../../core/controller/informer-factory.js';
import { WorkQueue } from '../../core/controller/work-queue.js';
import { AlreadyExistsError, ConflictError, NotFoundError } from '../../core/errors.js';
import { canonicalJson } from '../../core/api/canonical-json.js';
import { controllerRef } from './replicaset.js';

// Kubernetes' SafeEncodeString alphabet: no vowels (no words) and no look-alike characters.
const SAFE_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

/**
 * A stable short hash of a pod template (and the collision count, which changes the name
 * when a foreign ReplicaSet already holds it). Keys are sorted first, so the same template
 * written in another order hashes the same.
 */
export function podTemplateHash(template: PodTemplateSpec, collisionCount = 0): string {
  const digest = createHash('sha256')
    .update(canonicalJson(template))
    .update(collisionCount ? `/${collisionCount}` : '')
    .digest();
  let out = '';
  for (let i = 0; i < 10; i++) out += SAFE_ALPHABET[digest[i]! % SAFE_ALPHABET.length];
  return out;
}

/** The template without the hash label the Deployment added (what the Deployment's own template is compared with). */
function withoutHashLabel(template: PodTemplateSpec): PodTemplateSpec {
  const labels = template.metadata?.labels;
  if (!labels || !(POD_TEMPLATE_HASH_LABEL in labels)) return template;
  const { [POD_TEMPLATE_HASH_LABEL]: _hash, ...rest } = labels;
  return { ...template, metadata: { ...template.metadata, labels: rest } };
}

/** True when the ReplicaSet runs the Deployment's template (the hash label aside). */
export function templateMatches(rs: ReplicaSet, deploy: Deployment): boolean {
  return canonicalJson(withoutNullTimestamp(withoutHashLabel(rs.spec.template))) === canonicalJson(withoutNullTimestamp(deploy.spec.template));
}

/**
 * The template without `metadata.creationTimestamp: null`, which Go clients write into every
 * template they send (kubectl rollout undo copies a ReplicaSet's template back so): it means no
 * timestamp, and must not make the restored template look new.
 */
function withoutNullTimestamp(template: PodTemplateSpec): PodTemplateSpec {
  const meta = template.metadata as (PodTemplateSpec['metadata'] & { creationTimestamp?: unknown }) | undefined;
  if (!meta || meta.creationTimestamp !== null) return template;
  const { creationTimestamp: _ts, ...rest } = meta;
  return { ...template, metadata: rest };
}

export function ownerReferenceToDeployment(d: Deployment): OwnerReference {
  return { apiVersion: 'apps/v1', kind: 'Deployment', name: d.metadata.name!, uid: d.metadata.uid!, controller: true, blockOwnerDeletion: true };
}

/** The ReplicaSet a Deployment makes for its current template: `${name}-${hash}`, the hash in selector, labels and template. */
export function newReplicaSetBody(d: Deployment, options: { replicas: number; revision: number }): Record<string, unknown> {
  const hash = podTemplateHash(d.spec.template, d.status?.collisionCount ?? 0);
  const template = d.spec.template;
  const labels = { ...(template.metadata?.labels ?? {}), [POD_TEMPLATE_HASH_LABEL]: hash };
  const cause = d.metadata.annotations?.[CHANGE_CAUSE_ANNOTATION];
  return {
    apiVersion: 'apps/v1',
    kind: 'ReplicaSet',
    metadata: {
      name: `${d.metadata.name}-${hash}`,
      namespace: d.metadata.namespace,
      labels,
      annotations: { [REVISION_ANNOTATION]: String(options.revision), ...(cause ? { [CHANGE_CAUSE_ANNOTATION]: cause } : {}) },
      ownerReferences: [ownerReferenceToDeployment(d)],
    },
    spec: {
      replicas: options.replicas,
      minReadySeconds: d.spec.minReadySeconds,
      selector: { ...d.spec.selector, matchLabels: { ...(d.spec.selector.matchLabels ?? {}), [POD_TEMPLATE_HASH_LABEL]: hash } },
      template: { ...template, metadata: { ...template.metadata, labels } },
    },
  };
}

/** maxSurge and maxUnavailable in pods, as Kubernetes resolves them: surge rounds up, unavailable down, never both 0. */
export function resolveFenceposts(d: Deployment): { maxSurge: number; maxUnavailable: number } {
  if (d.spec.strategy.type === 'Recreate') return { maxSurge: 0, maxUnavailable: d.spec.replicas };
  const ru = d.spec.strategy.rollingUpdate ?? { maxSurge: '25%', maxUnavailable: '25%' };
  const maxSurge = resolveIntOrPercent(ru.maxSurge, { total: d.spec.replicas, roundUp: true });
  const maxUnavailable = resolveIntOrPercent(ru.maxUnavailable, { total: d.spec.replicas, roundUp: false });
  // Both 0 after rounding (e.g. 25% of 1 unavailable, 0 surge) would stall: allow one unavailable.
  if (maxSurge === 0 && maxUnavailable === 0) return { maxSurge, maxUnavailable: 1 };
  return { maxSurge, maxUnavailable };
}

export type DeploymentAction =
  | { type: 'adopt'; rs: ReplicaSet; ownerReferences: OwnerReference[] }
  | { type: 'release'; rs: ReplicaSet; ownerReferences: OwnerReference[] }
  | { type: 'create'; body: Record<string, unknown> }
  /** Sets spec.replicas (and minReadySeconds, revision annotations) of an owned ReplicaSet. */
  | { type: 'update'; rs: ReplicaSet; replicas: number; minReadySeconds?: number; annotations?: Record<string, string> }
  /** An old ReplicaSet beyond revisionHistoryLimit, scaled to 0 and without pods. */
  | { type: 'delete'; rs: ReplicaSet };

export interface DeploymentPlan {
  actions: DeploymentAction[];
  status: DeploymentStatus;
  /** When to look again without an event: a progress deadline or minReadySeconds to pass. */
  recheckAfterMs?: number;
  /**
   * The deployment.kubernetes.io/revision the Deployment itself should carry (its new
   * ReplicaSet's), when the stored one differs: kubectl rollout undo's JSON patch replaces
   * /metadata/annotations and fails where the Deployment has none.
   */
  revisionAnnotation?: string;
}

export interface DeploymentInputs {
  /** The ReplicaSets of the Deployment's namespace (claimed here: owned, orphans matching, others ignored). */
  replicaSets: readonly ReplicaSet[];
  /** Whether pods of the old ReplicaSets still exist (Recreate waits for them to be gone). */
  oldPodsRunning: boolean;
  now: Date;
}

function byCreation(a: ReplicaSet, b: ReplicaSet): number {
  const t = (rs: ReplicaSet) => Date.parse(rs.metadata.creationTimestamp ?? '') || 0;
  return t(a) - t(b) || (a.metadata.name ?? '').localeCompare(b.metadata.name ?? '');
}

const specReplicas = (rs: ReplicaSet | undefined) => rs?.spec.replicas ?? 0;
const available = (rs: ReplicaSet | undefined) => rs?.status?.availableReplicas ?? 0;

/** The new ReplicaSet (the oldest owned one running the current template) and the others. */
export function splitReplicaSets(d: Deployment, owned: readonly ReplicaSet[]): { newRs?: ReplicaSet; old: ReplicaSet[] } {
  const sorted = [...owned].sort(byCreation);
  const newRs = sorted.find((rs) => templateMatches(rs, d));
  return { ...(newRs ? { newRs } : {}), old: sorted.filter((rs) => rs !== newRs) };
}

/**
 * One RollingUpdate step, as Kubernetes' rolloutRolling: first scale the new ReplicaSet up
 * as far as maxSurge allows; only when that makes no change, scale old ones down as far
 * as maxUnavailable allows (unhealthy pods first, then oldest ReplicaSets first).
 * Returns the target spec.replicas per ReplicaSet name (`newName` for the new one).
 */
export function rollingStep(
  d: Deployment,
  newRs: { name: string; replicas: number; available: number },
  old: readonly { name: string; replicas: number; available: number }[],
): Map<string, number> {
  const targets = new Map<string, number>();
  const desired = d.spec.replicas;
  const { maxSurge, maxUnavailable } = resolveFenceposts(d);
  const current = newRs.replicas + old.reduce((n, rs) => n + rs.replicas, 0);
  if (newRs.replicas > desired) {
    targets.set(newRs.name, desired);
    return targets;
  }
  if (newRs.replicas < desired) {
    const up = Math.min(desired + maxSurge - current, desired - newRs.replicas);
    if (up > 0) {
      targets.set(newRs.name, newRs.replicas + up);
      return targets;
    }
  }
  if (old.every((rs) => rs.replicas === 0)) return targets;
  const minAvailable = desired - maxUnavailable;
  const newUnavailable = Math.max(0, newRs.replicas - newRs.available);
  const maxScaledDown = current - minAvailable - newUnavailable;
  if (maxScaledDown <= 0) return targets;
  // Unavailable pods of old ReplicaSets cost nothing to remove.
  let left = maxScaledDown;
  const after = old.map((rs) => ({ ...rs }));
  for (const rs of after) {
    if (left <= 0) break;
    const unhealthy = rs.replicas - Math.min(rs.available, rs.replicas);
    if (unhealthy <= 0) continue;
    const down = Math.min(left, unhealthy);
    rs.replicas -= down;
    left -= down;
  }
  // Then available ones, while the total available stays at least minAvailable.
  const totalAvailable = newRs.available + old.reduce((n, rs) => n + rs.available, 0);
  let healthyLeft = Math.min(left, totalAvailable - minAvailable);
  for (const rs of after) {
    if (healthyLeft <= 0) break;
    const down = Math.min(rs.replicas, healthyLeft);
    rs.replicas -= down;
    healthyLeft -= down;
  }
  for (let i = 0; i < old.length; i++) if (after[i]!.replicas !== old[i]!.replicas) targets.set(old[i]!.name, after[i]!.replicas);
  return targets;
}

function setCondition(conditions: readonly Condition[], next: Condition, now: string): Condition[] {
  const prev = conditions.find((c) => c.type === next.type);
  const same = prev && prev.status === next.status && prev.reason === next.reason && prev.message === next.message;
  const merged: Condition = same
    ? prev
    : { ...next, lastUpdateTime: now, lastTransitionTime: prev && prev.status === next.status ? (prev.lastTransitionTime ?? now) : now };
  return [...conditions.filter((c) => c.type !== next.type), merged].sort((a, b) => a.type.localeCompare(b.type));
}

/** Counts reported in the Deployment's status, from its ReplicaSets' status. */
function counts(d: Deployment, newRs: ReplicaSet | undefined, all: readonly ReplicaSet[]) {
  const sum = (f: (rs: ReplicaSet) => number | undefined) => all.reduce((n, rs) => n + (f(rs) ?? 0), 0);
  const availableReplicas = sum((rs) => rs.status?.availableReplicas);
  return {
    replicas: sum((rs) => rs.status?.replicas),
    updatedReplicas: newRs?.status?.replicas ?? 0,
    readyReplicas: sum((rs) => rs.status?.readyReplicas),
    availableReplicas,
    unavailableReplicas: Math.max(0, d.spec.replicas - availableReplicas),
  };
}

/**
 * The whole decision for one Deployment: claim ReplicaSets, find the new one, take one
 * rollout step (RollingUpdate or Recreate; none while paused beyond plain scaling),
 * clean up history beyond revisionHistoryLimit, and compute status with the Available and
 * Progressing conditions (ProgressDeadlineExceeded once no progress was made for
 * progressDeadlineSeconds).
 */
export function planDeployment(d: Deployment, inputs: DeploymentInputs): DeploymentPlan {
  const uid = d.metadata.uid;
  const now = inputs.now.toISOString();
  const deleting = !!d.metadata.deletionTimestamp;
  let selector: Selector | undefined;
  try {
    selector = selectorFromLabelSelector(d.spec.selector);
  } catch {
    selector = undefined;
  }
  const actions: DeploymentAction[] = [];
  const owned: ReplicaSet[] = [];
  for (const rs of inputs.replicaSets) {
    if (rs.metadata.namespace !== d.metadata.namespace) continue;
    const ref = controllerRef(rs);
    const matching = !!selector && matches(selector, rs.metadata.labels);
    if (ref) {
      if (ref.uid !== uid) continue;
      if (matching) owned.push(rs);
      else if (!rs.metadata.deletionTimestamp)
        actions.push({ type: 'release', rs, ownerReferences: (rs.metadata.ownerReferences ?? []).filter((r) => r.uid !== uid) });
    } else if (matching && !deleting && !rs.metadata.deletionTimestamp) {
      actions.push({ type: 'adopt', rs, ownerReferences: [...(rs.metadata.ownerReferences ?? []), ownerReferenceToDeployment(d)] });
      owned.push(rs);
    }
  }
  const live = owned.filter((rs) => !rs.metadata.deletionTimestamp);
  const { newRs, old } = splitReplicaSets(d, live);
  const maxOldRevision = Math.max(0, ...old.map(revisionOf));
  const paused = !!d.spec.paused;
  let created = false;
  let scaled = false;

  const scaleTo = (rs: ReplicaSet, replicas: number) => {
    actions.push({ type: 'update', rs, replicas });
    scaled = true;
  };

  let revisionAnnotation: string | undefined;
  if (!deleting) {
    // The new ReplicaSet carries the newest revision (also when an undo brought an old template back) and the current minReadySeconds.
    const wantedRevision = maxOldRevision + 1;
    let newTarget = specReplicas(newRs);
    let newExists = !!newRs;
    const newFixups: { minReadySeconds?: number; annotations?: Record<string, string> } = {};
    if (newRs && !paused) {
      if (revisionOf(newRs) < wantedRevision) newFixups.annotations = { [REVISION_ANNOTATION]: String(wantedRevision) };
      if ((newRs.spec.minReadySeconds ?? 0) !== d.spec.minReadySeconds) newFixups.minReadySeconds = d.spec.minReadySeconds;
    }
    if (newRs) {
      const revision = String(newFixups.annotations ? wantedRevision : revisionOf(newRs));
      if (revision !== '0' && d.metadata.annotations?.[REVISION_ANNOTATION] !== revision) revisionAnnotation = revision;
    }
    const olds = old.map((rs) => ({ name: rs.metadata.name!, replicas: specReplicas(rs), available: available(rs) }));
    const oldTargets = new Map<string, number>();

    if (paused) {
      // Paused: only scaling, and only when one ReplicaSet is active (no rollout in progress to share it).
      const active = live.filter((rs) => specReplicas(rs) > 0);
      const only = active.length === 1 ? active[0]! : active.length === 0 ? newRs : undefined;
      if (only && specReplicas(only) !== d.spec.replicas) {
        if (only === newRs) newTarget = d.spec.replicas;
        else oldTargets.set(only.metadata.name!, d.spec.replicas);
      }
    } else if (d.spec.strategy.type === 'Recreate') {
      if (olds.some((rs) => rs.replicas > 0))
        for (const rs of olds) {
          if (rs.replicas > 0) oldTargets.set(rs.name, 0);
        }
      else if (!inputs.oldPodsRunning) {
        newTarget = d.spec.replicas;
        newExists = true;
      }
    } else {
      const targets = rollingStep(d, { name: '\0new', replicas: specReplicas(newRs), available: available(newRs) }, olds);
      if (targets.has('\0new')) newTarget = targets.get('\0new')!;
      for (const [name, n] of targets) if (name !== '\0new') oldTargets.set(name, n);
      newExists = true; // RollingUpdate makes the new ReplicaSet at once, even with 0 replicas.
    }

    if (!newRs && newExists && !paused) {
      actions.push({ type: 'create', body: newReplicaSetBody(d, { replicas: newTarget, revision: wantedRevision }) });
      created = true;
    } else if (newRs && (newTarget !== specReplicas(newRs) || newFixups.annotations || newFixups.minReadySeconds !== undefined)) {
      actions.push({ type: 'update', rs: newRs, replicas: newTarget, ...newFixups });
      if (newTarget !== specReplicas(newRs)) scaled = true;
    }
    for (const rs of old) {
      const target = oldTargets.get(rs.metadata.name!);
      if (target !== undefined) scaleTo(rs, target);
    }

    // History: the oldest fully scaled-down ReplicaSets beyond revisionHistoryLimit go.
    const idle = old.filter((rs) => specReplicas(rs) === 0 && (rs.status?.replicas ?? 0) === 0 && !oldTargets.has(rs.metadata.name!));
    const excess = idle.length - d.spec.revisionHistoryLimit;
    if (excess > 0) {
      for (const rs of [...idle].sort((a, b) => revisionOf(a) - revisionOf(b) || byCreation(a, b)).slice(0, excess)) actions.push({ type: 'delete', rs });
    }
  }

  // Status.
  const c = counts(d, newRs, live);
  const { maxUnavailable } = resolveFenceposts(d);
  let conditions = [...(d.status?.conditions ?? [])];
  const minAvailable = d.spec.replicas - maxUnavailable;
  conditions = setCondition(
    conditions,
    c.availableReplicas >= minAvailable
      ? { type: 'Available', status: 'True', reason: 'MinimumReplicasAvailable', message: 'Deployment has minimum availability.' }
      : { type: 'Available', status: 'False', reason: 'MinimumReplicasUnavailable', message: 'Deployment does not have minimum availability.' },
    now,
  );

  const newName =
    newRs?.metadata.name ?? (actions.find((a) => a.type === 'create') as { body: { metadata: { name: string } } } | undefined)?.body.metadata.name;
  const complete =
    !!newRs &&
    c.updatedReplicas === d.spec.replicas &&
    c.replicas === d.spec.replicas &&
    c.availableReplicas === d.spec.replicas &&
    specReplicas(newRs) === d.spec.replicas &&
    old.every((rs) => specReplicas(rs) === 0);
  const prevProgressing = conditions.find((x) => x.type === 'Progressing');
  const prev = d.status ?? {};
  const progressed =
    c.updatedReplicas > (prev.updatedReplicas ?? 0) ||
    c.readyReplicas > (prev.readyReplicas ?? 0) ||
    c.availableReplicas > (prev.availableReplicas ?? 0) ||
    c.replicas - c.updatedReplicas < (prev.replicas ?? 0) - (prev.updatedReplicas ?? 0);
  let recheckAfterMs: number | undefined;
  const progressing = (reason: string, message: string): Condition => ({ type: 'Progressing', status: 'True', reason, message });
  if (paused) {
    conditions = setCondition(conditions, { type: 'Progressing', status: 'Unknown', reason: 'DeploymentPaused', message: 'Deployment is paused' }, now);
  } else if (complete) {
    conditions = setCondition(conditions, progressing('NewReplicaSetAvailable', `ReplicaSet "${newName}" has successfully progressed.`), now);
  } else if (created) {
    conditions = forceUpdate(setCondition(conditions, progressing('NewReplicaSetCreated', `Created new replica set "${newName}"`), now), 'Progressing', now);
  } else if (progressed || !prevProgressing || prevProgressing.reason === 'DeploymentPaused') {
    // Progress (or a fresh start of a rollout) moves the deadline forward.
    const reason = prevProgressing?.reason === 'DeploymentPaused' ? 'DeploymentResumed' : 'ReplicaSetUpdated';
    const message = reason === 'DeploymentResumed' ? 'Deployment is resumed' : `ReplicaSet "${newName}" is progressing.`;
    conditions = forceUpdate(setCondition(conditions, progressing(reason, message), now), 'Progressing', now);
  } else if (scaled) {
    // A scale step is not progress (Kubernetes' DeploymentProgressing looks only at the counts): it
    // moves lastUpdateTime only when it changes the condition (a rollout starting on a ReplicaSet
    // that exists). Forcing it here made a status write, changing nothing else, for every step
    // retried after a conflict with the ReplicaSet controller's status writes.
    conditions = setCondition(conditions, progressing('ReplicaSetUpdated', `ReplicaSet "${newName}" is progressing.`), now);
  }
  const current = conditions.find((x) => x.type === 'Progressing');
  // A finished rollout does not time out (a pod lost later is the ReplicaSet's to replace).
  if (!paused && !complete && current && current.status === 'True' && current.reason !== 'NewReplicaSetAvailable' && current.lastUpdateTime) {
    const deadline = Date.parse(current.lastUpdateTime) + d.spec.progressDeadlineSeconds * 1000;
    if (deadline <= inputs.now.getTime()) {
      conditions = setCondition(
        conditions,
        { type: 'Progressing', status: 'False', reason: 'ProgressDeadlineExceeded', message: `ReplicaSet "${newName}" has timed out progressing.` },
        now,
      );
    } else recheckAfterMs = deadline - inputs.now.getTime();
  }

  const status: DeploymentStatus = {
    ...prev,
    ...c,
    ...(d.metadata.generation !== undefined ? { observedGeneration: d.metadata.generation } : {}),
    conditions,
  };
  return {
    actions,
    status,
    ...(recheckAfterMs !== undefined ? { recheckAfterMs } : {}),
    ...(revisionAnnotation !== undefined ? { revisionAnnotation } : {}),
  };
}

/** Progress made: the condition's lastUpdateTime moves to now even though nothing else about it changed. */
function forceUpdate(conditions: Condition[], type: string, now: string): Condition[] {
  return conditions.map((c) => (c.type === type ? { ...c, lastUpdateTime: now } : c));
}

/** True when the status the plan computed differs from the stored one (so a write is worth it). */
export function statusChanged(d: Deployment, status: DeploymentStatus): boolean {
  return !isDeepStrictEqual(d.status ?? {}, status);
}

export interface DeploymentControllerOptions {
  client: Client;
  /** The process's shared informers: Deployments, ReplicaSets and Pods, read through their namespace and owner indexes. */
  informers: InformerFactory;
  log?: (message: string) => void;
  workers?: number;
  now?: () => Date;
}

/** The shell: informers on Deployments, ReplicaSets and Pods (for Recreate), applying planDeployment's actions. */
export class DeploymentController {
  readonly deployments: Informer<Deployment>;
  readonly replicaSets: Informer<ReplicaSet>;
  readonly pods: Informer<Pod>;
  readonly queue = new WorkQueue();
  readonly #client: Client;
  readonly #log: (message: string) => void;
  readonly #workers: number;
  readonly #now: () => Date;

  constructor(options: DeploymentControllerOptions) {
    this.#client = options.client;
    this.#log = options.log ?? (() => {});
    this.#workers = options.workers ?? 4;
    this.#now = options.now ?? (() => new Date());
    this.deployments = options.informers.informer<Deployment>(deploymentKind);
    this.replicaSets = options.informers.informer<ReplicaSet>(replicaSetKind);
    this.pods = options.informers.informer<Pod>(podKind);
    const enqueue = (d: Deployment) => this.queue.add(objectKey(d));
    this.deployments.addHandlers({ onAdd: enqueue, onUpdate: (_old, d) => enqueue(d), onDelete: () => {} });
    const rsChanged = (rs: ReplicaSet) => {
      const ref = controllerRef(rs);
      if (ref?.kind === 'Deployment') this.queue.add(`${rs.metadata.namespace}/${ref.name}`);
      else if (!ref) this.#enqueueMatching(rs);
    };
    this.replicaSets.addHandlers({
      onAdd: rsChanged,
      onUpdate: (old, rs) => {
        rsChanged(rs);
        const oldRef = controllerRef(old);
        if (oldRef && oldRef.uid !== controllerRef(rs)?.uid) rsChanged(old);
      },
      onDelete: rsChanged,
    });
    // Only Recreate waits on pods: a pod of an old ReplicaSet gone lets it go on.
    this.pods.addHandlers({ onAdd: () => {}, onUpdate: () => {}, onDelete: (pod) => this.#podGone(pod) });
  }

  #enqueueMatching(rs: ReplicaSet): void {
    for (const d of this.deployments.byIndex(NAMESPACE_INDEX, rs.metadata.namespace!)) {
      try {
        if (matches(selectorFromLabelSelector(d.spec.selector), rs.metadata.labels)) this.queue.add(objectKey(d));
      } catch {
        // An unparsable selector matches nothing.
      }
    }
  }

  #podGone(pod: Pod): void {
    const ref = controllerRef(pod);
    if (ref?.kind !== 'ReplicaSet') return;
    const rs = this.replicaSets.get(`${pod.metadata.namespace}/${ref.name}`);
    const owner = rs && controllerRef(rs);
    if (owner?.kind === 'Deployment') this.queue.add(`${pod.metadata.namespace}/${owner.name}`);
  }

  /** Runs the workers once the informers (started by the process's factory) have synced. */
  async start(signal: AbortSignal): Promise<void> {
    await runController(
      {
        name: 'deployment',
        queue: this.queue,
        informers: [this.deployments, this.replicaSets, this.pods],
        reconcile: (key) => this.reconcile(key),
        workers: this.#workers,
        log: this.#log,
      },
      signal,
    );
  }

  /** Whether any pod of an old ReplicaSet of `d` still exists (finished pods aside). */
  #oldPodsRunning(d: Deployment, rses: readonly ReplicaSet[]): boolean {
    const owned = rses.filter((rs) => controllerRef(rs)?.uid === d.metadata.uid);
    const { newRs } = splitReplicaSets(d, owned);
    const running = (rs: ReplicaSet) =>
      this.pods
        .byIndex(OWNER_UID_INDEX, rs.metadata.uid!)
        .some(
          (p) =>
            p.metadata.namespace === d.metadata.namespace &&
            controllerRef(p)?.uid === rs.metadata.uid &&
            p.status?.phase !== 'Succeeded' &&
            p.status?.phase !== 'Failed',
        );
    return owned.some((rs) => rs !== newRs && running(rs));
  }

  async #isOurs(d: Deployment, name: string): Promise<boolean> {
    try {
      const rs = (await this.#client.get(replicaSetKind, { namespace: d.metadata.namespace, name })) as ReplicaSet;
      return controllerRef(rs)?.uid === d.metadata.uid && templateMatches(rs, d);
    } catch (err) {
      if (err instanceof NotFoundError) return true; // gone meanwhile: the next try makes it
      throw err;
    }
  }

  async reconcile(key: string): Promise<{ requeueAfterMs?: number } | void> {
    const d = this.deployments.get(key);
    if (!d) return;
    const namespace = d.metadata.namespace!;
    const rses = this.replicaSets.byIndex(NAMESPACE_INDEX, namespace);
    const plan = planDeployment(d, {
      replicaSets: rses,
      oldPodsRunning: d.spec.strategy.type === 'Recreate' && this.#oldPodsRunning(d, rses),
      now: this.#now(),
    });
    let status = plan.status;
    let retry = false;
    for (const action of plan.actions) {
      try {
        switch (action.type) {
          case 'adopt':
          case 'release':
            // Guarded by the cached resourceVersion: a ReplicaSet changed meanwhile is looked at again.
            await this.#client.patch(
              replicaSetKind,
              { namespace, name: action.rs.metadata.name! },
              { metadata: { resourceVersion: action.rs.metadata.resourceVersion, ownerReferences: action.ownerReferences } },
            );
            this.#log(`deployment ${key}: ${action.type === 'adopt' ? 'adopted' : 'released'} replicaset ${action.rs.metadata.name}`);
            break;
          case 'create':
            await this.#client.create(replicaSetKind, action.body, { namespace });
            this.#log(`deployment ${key}: created replicaset ${(action.body.metadata as { name: string }).name}`);
            break;
          case 'update': {
            const annotations = action.annotations ? { annotations: action.annotations } : {};
            await this.#client.patch(
              replicaSetKind,
              { namespace, name: action.rs.metadata.name! },
              {
                metadata: { resourceVersion: action.rs.metadata.resourceVersion, ...annotations },
                spec: { replicas: action.replicas, ...(action.minReadySeconds !== undefined ? { minReadySeconds: action.minReadySeconds } : {}) },
              },
            );
            if (action.replicas !== action.rs.spec.replicas) this.#log(`deployment ${key}: scaled replicaset ${action.rs.metadata.name} to ${action.replicas}`);
            break;
          }
          case 'delete':
            await this.#client.delete(replicaSetKind, { namespace, name: action.rs.metadata.name! }, { preconditions: { uid: action.rs.metadata.uid } });
            this.#log(`deployment ${key}: deleted old replicaset ${action.rs.metadata.name}`);
            break;
        }
      } catch (err) {
        if (err instanceof AlreadyExistsError && action.type === 'create') {
          // Ours but not yet in the cache: wait for it. Someone else's under our hash name: as Kubernetes, bump collisionCount for a new name.
          if (!(await this.#isOurs(d, (action.body.metadata as { name: string }).name)))
            status = { ...status, collisionCount: (d.status?.collisionCount ?? 0) + 1 };
          retry = true;
        } else if (err instanceof ConflictError || err instanceof NotFoundError) retry = true;
        else throw err;
      }
    }
    if (statusChanged(d, status)) {
      try {
        // Against the cached version, as Kubernetes' UpdateStatus: a status worked out from a cache that has not yet
        // seen our previous write (or a newer spec) must not land; the event on its way reconciles again. Unguarded,
        // such a write set Progressing's lastUpdateTime again and again with nothing else changed.
        await this.#client.patch(
          deploymentKind,
          { namespace, name: d.metadata.name! },
          { metadata: { resourceVersion: d.metadata.resourceVersion }, status },
          { subresource: 'status' },
        );
      } catch (err) {
        if (!(err instanceof NotFoundError || err instanceof ConflictError)) throw err;
      }
    }
    if (plan.revisionAnnotation !== undefined) {
      try {
        await this.#client.patch(
          deploymentKind,
          { namespace, name: d.metadata.name! },
          { metadata: { annotations: { [REVISION_ANNOTATION]: plan.revisionAnnotation } } },
        );
      } catch (err) {
        if (!(err instanceof NotFoundError)) throw err;
      }
    }
    // A write that lost to a newer state (the cache is behind): back off until the informer catches up.
    if (retry) return { requeueAfterMs: 100 };
    if (plan.recheckAfterMs !== undefined) return { requeueAfterMs: plan.recheckAfterMs };
  }
}
