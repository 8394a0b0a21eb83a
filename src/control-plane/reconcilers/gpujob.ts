// GpuJob controller: one submitter pod per job (a new one resumes if it dies), the job's phase from what the submitter saw of Slurm, and on deletion a canceller pod that scancels the Slurm job before the finalizer goes.
import { dirname } from 'node:path';
import { gpuJobKind, isFinalPhase, type GpuJob, type GpuJobStatus } from '../../core/api/gpujob.js';
import type { Pod } from '../../core/api/pod.js';
import { podKind } from '../../core/api/pod.js';
import { roleBindingKind, roleKind, type RoleBinding } from '../../core/api/rbac.js';
import { serviceAccountKind } from '../../core/api/serviceaccount.js';
import { secretKind, type Secret } from '../../core/api/secret.js';
import { slurmClusterKind, type SlurmCluster } from '../../core/api/slurmcluster.js';
import type { Client } from '../../core/client/client.js';
import { runController, type ReconcileResult } from '../../core/controller/controller.js';
import { LABEL_INDEX, NAMESPACE_INDEX, type Informer } from '../../core/controller/informer.js';
import type { InformerFactory } from '../../core/controller/informer-factory.js';
import { WorkQueue } from '../../core/controller/work-queue.js';
import { AlreadyExistsError, ForbiddenError, NotFoundError } from '../../core/errors.js';
import { gpuJobAccessName, gpuJobRole, gpuJobRoleBinding, gpuJobServiceAccount, gpuJobTokenSeconds } from './gpujob-access.js';
import { isFinalSlurmState, phaseFromSlurm } from './gpujob-phase.js';
import { recordEvent } from './record-event.js';

/** Held by every job until its Slurm job is cancelled (if it may run) and its stored outputs are removed. */
export const GPUJOB_FINALIZER = 'minik8s.io/slurm-job';
export const GPUJOB_UID_LABEL = 'minik8s.io/gpujob-uid';
export const GPUJOB_ROLE_LABEL = 'minik8s.io/gpujob-role';
export const SUBMITTER_SCRIPT = '/opt/minik8s/gpujob-submitter.py';
/** Submitter pods a job may use up; each new one resumes the Slurm job the last one submitted. */
export const MAX_SUBMIT_ATTEMPTS = 3;
/** Canceller pods tried before a deleted job lets go anyway (with a Warning event): deletion must not hang on a cluster that is gone. */
export const MAX_CANCEL_ATTEMPTS = 3;
/** A submitter that exited 0 has reported the end just before; its report may reach us after the pod's own status. */
export const REPORT_GRACE_MS = 5_000;
/** How long a submitter may still run after its last report (it removes the job directory, then exits). */
export const CLEANUP_GRACE_MS = 60_000;

export type PodRole = 'submit' | 'cancel';

export type GpuJobAction =
  | { type: 'addFinalizer' }
  | { type: 'removeFinalizer' }
  | { type: 'createPod'; pod: Pod }
  | { type: 'deletePod'; name: string }
  | { type: 'status'; status: Partial<GpuJobStatus> }
  | { type: 'removeOutputs' }
  | { type: 'revokeAccess' }
  | { type: 'event'; eventType: 'Normal' | 'Warning'; reason: string; message: string };

export interface GpuJobState {
  job: GpuJob;
  /** The SlurmCluster the job names, if it exists. */
  cluster?: SlurmCluster;
  /** The pods made for this job object (by its uid label). */
  pods: readonly Pod[];
  /** Whether the job's RoleBinding (gpujob-access.ts) still grants its token anything. */
  accessGranted?: boolean;
  /** Where pods reach the API server. */
  serverUrl: string;
  /** The cluster CA (PEM) that signed the API server's certificate, when it serves HTTPS: pods verify the server with it. */
  caPem?: string;
  nowMs: number;
}

export interface GpuJobPlan {
  actions: GpuJobAction[];
  requeueAfterMs?: number;
}

function roleOf(pod: Pod): PodRole | undefined {
  const role = pod.metadata.labels?.[GPUJOB_ROLE_LABEL];
  return role === 'submit' || role === 'cancel' ? role : undefined;
}

function attemptOf(pod: Pod): number {
  return Number(/-(\d+)$/.exec(pod.metadata.name ?? '')?.[1] ?? 0);
}

function finished(pod: Pod): boolean {
  return pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed';
}

/** How a finished pod ended, for messages: the container's exit code and reason. */
export function podOutcome(pod: Pod): string {
  const t = pod.status?.containerStatuses?.[0]?.state?.terminated;
  if (!t) return pod.status?.reason ? `${pod.status.phase ?? 'ended'} (${pod.status.reason})` : `${pod.status?.phase ?? 'gone'}`;
  return `exit code ${t.exitCode}${t.reason && t.reason !== 'Error' && t.reason !== 'Completed' ? ` (${t.reason})` : ''}`;
}

/** A pod name of at most 63 characters (it becomes the container's host name): the job's name, its uid's start, the role and the attempt. */
export function gpuJobPodName(job: GpuJob, role: PodRole, attempt: number): string {
  const suffix = `-${(job.metadata.uid ?? '').replace(/-/g, '').slice(0, 6)}-${role}-${attempt}`;
  const base = (job.metadata.name ?? 'gpujob').slice(0, 63 - suffix.length).replace(/[-.]+$/, '');
  return `${base}${suffix}`;
}

/** The directories a local-mode submitter needs from its node, each mounted at its own path (nested ones once, by the outer). */
export function localMounts(cluster: SlurmCluster): { path: string; readOnly: boolean }[] {
  const local = cluster.spec.local!;
  const confDir = dirname(local.slurmConf);
  const wanted = [...new Set([confDir, local.mungeSocketDir, local.workDir])];
  const inside = (p: string, outer: string) => p !== outer && p.startsWith(outer.endsWith('/') ? outer : `${outer}/`);
  const outer = wanted.filter((p) => !wanted.some((o) => inside(p, o)));
  return outer.map((path) => ({
    path,
    // The configuration is only read; a mount that also holds the socket or the job directories is written through.
    readOnly:
      path === confDir && !inside(local.workDir, path) && local.workDir !== path && !inside(local.mungeSocketDir, path) && local.mungeSocketDir !== path,
  }));
}

/** The Secret holding a job's token: one per job object, owned by it (the garbage collector removes it with the job). */
export function gpuJobTokenSecretName(job: GpuJob): string {
  return `gpujob-token-${job.metadata.uid ?? ''}`;
}

/** The Secret's key for the cluster CA, as in a Kubernetes service account token Secret. */
export const GPUJOB_CA_KEY = 'ca.crt';

/**
 * The token Secret for a job; its pods read it by secretKeyRef, so the token is not in the pod
 * object that every node reads. With an HTTPS API server it also carries the cluster CA
 * (`ca.crt`), as Kubernetes gives in-cluster clients the CA beside their token.
 */
export function gpuJobTokenSecret(job: GpuJob, token: string, caPem?: string): Secret {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      name: gpuJobTokenSecretName(job),
      namespace: job.metadata.namespace,
      labels: { [GPUJOB_UID_LABEL]: job.metadata.uid ?? '' },
      ownerReferences: [
        { apiVersion: 'minik8s.io/v1', kind: 'GpuJob', name: job.metadata.name ?? '', uid: job.metadata.uid ?? '', controller: true, blockOwnerDeletion: true },
      ],
    },
    type: 'Opaque',
    data: {
      token: Buffer.from(token, 'utf8').toString('base64'),
      ...(caPem ? { [GPUJOB_CA_KEY]: Buffer.from(caPem, 'utf8').toString('base64') } : {}),
    },
  } as Secret;
}

/** The pod that submits (or cancels) the job: our submitter image, the job's token, and in local mode the node's Slurm client setup. */
export function submitterPod(state: GpuJobState, role: PodRole, attempt: number): Pod {
  const { job } = state;
  const cluster = state.cluster!;
  const env: { name: string; value?: string; valueFrom?: unknown }[] = [
    { name: 'MINIK8S_SERVER', value: state.serverUrl },
    // Read from the job's token Secret when the container starts: only the pod's own node may read that Secret.
    { name: 'MINIK8S_TOKEN', valueFrom: { secretKeyRef: { name: gpuJobTokenSecretName(job), key: 'token' } } },
    // Over HTTPS the submitter trusts only the cluster CA, from the same Secret.
    ...(state.caPem ? [{ name: 'MINIK8S_CA_DATA', valueFrom: { secretKeyRef: { name: gpuJobTokenSecretName(job), key: GPUJOB_CA_KEY } } }] : []),
    { name: 'GPUJOB_NAMESPACE', value: job.metadata.namespace ?? 'default' },
    { name: 'GPUJOB_NAME', value: job.metadata.name ?? '' },
  ];
  const mounts = cluster.spec.mode === 'local' ? localMounts(cluster) : [];
  if (cluster.spec.mode === 'local') env.push({ name: 'SLURM_CONF', value: cluster.spec.local!.slurmConf });
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: gpuJobPodName(job, role, attempt),
      namespace: job.metadata.namespace,
      labels: { [GPUJOB_UID_LABEL]: job.metadata.uid ?? '', [GPUJOB_ROLE_LABEL]: role },
      ownerReferences: [
        { apiVersion: 'minik8s.io/v1', kind: 'GpuJob', name: job.metadata.name ?? '', uid: job.metadata.uid ?? '', controller: true, blockOwnerDeletion: true },
      ],
    },
    spec: {
      restartPolicy: 'Never',
      terminationGracePeriodSeconds: 10,
      // The job's own account (its Role names this job alone); its token is in the job's Secret, bound to the job.
      serviceAccountName: gpuJobAccessName(job),
      automountServiceAccountToken: false,
      ...(cluster.spec.nodeSelector ? { nodeSelector: { ...cluster.spec.nodeSelector } } : {}),
      containers: [
        {
          name: role === 'submit' ? 'submitter' : 'canceller',
          image: cluster.spec.image,
          imagePullPolicy: 'IfNotPresent',
          command: ['python3', SUBMITTER_SCRIPT, role],
          env,
          ...(mounts.length ? { volumeMounts: mounts.map((m, i) => ({ name: `slurm-${i}`, mountPath: m.path, readOnly: m.readOnly })) } : {}),
        },
      ],
      ...(mounts.length ? { volumes: mounts.map((m, i) => ({ name: `slurm-${i}`, hostPath: { path: m.path } })) } : {}),
    },
  } as unknown as Pod;
}

/** The status fields the controller owns, written only when they differ. */
function statusChange(job: GpuJob, want: Partial<GpuJobStatus>): GpuJobAction[] {
  const st = job.status ?? {};
  const differs = (Object.keys(want) as (keyof GpuJobStatus)[]).some((k) => st[k] !== want[k]);
  return differs ? [{ type: 'status', status: want }] : [];
}

function planDeletion(state: GpuJobState): GpuJobPlan {
  const { job, pods } = state;
  const st = job.status ?? {};
  const actions: GpuJobAction[] = [];
  for (const p of pods) {
    if (roleOf(p) === 'submit' && !p.metadata.deletionTimestamp) actions.push({ type: 'deletePod', name: p.metadata.name! });
  }
  // A submitter may have reached sbatch without having said so: any job that had one and has not ended may run in Slurm.
  const mayRun = !isFinalPhase(st.phase) && (st.attempts ?? 0) > 0 && !isFinalSlurmState(st.slurmState);
  if (mayRun) {
    const cancellers = pods.filter((p) => roleOf(p) === 'cancel');
    const done = cancellers.some((p) => p.status?.phase === 'Succeeded');
    if (!done) {
      if (cancellers.some((p) => !finished(p))) return { actions };
      const failed = cancellers.filter((p) => p.status?.phase === 'Failed').sort((a, b) => attemptOf(a) - attemptOf(b));
      const slurmJob = st.jobId ? `Slurm job ${st.jobId}` : `the Slurm job of ${job.metadata.name}`;
      if (!state.cluster) {
        actions.push({
          type: 'event',
          eventType: 'Warning',
          reason: 'CancelSkipped',
          message: `cannot cancel ${slurmJob}: SlurmCluster "${job.spec.cluster}" not found`,
        });
      } else if (failed.length >= MAX_CANCEL_ATTEMPTS) {
        actions.push({
          type: 'event',
          eventType: 'Warning',
          reason: 'CancelFailed',
          message: `gave up cancelling ${slurmJob} after ${failed.length} attempts (last: ${podOutcome(failed[failed.length - 1]!)}); it may still run in Slurm`,
        });
      } else {
        const attempt = (failed.length ? attemptOf(failed[failed.length - 1]!) : 0) + 1;
        actions.push({ type: 'createPod', pod: submitterPod(state, 'cancel', attempt) });
        return { actions };
      }
    } else {
      actions.push({ type: 'event', eventType: 'Normal', reason: 'Cancelled', message: `cancelled ${st.jobId ? `Slurm job ${st.jobId}` : 'the Slurm job'}` });
    }
  }
  // The canceller's job is done; the submitters were deleted above.
  for (const p of pods) if (roleOf(p) === 'cancel' && !p.metadata.deletionTimestamp) actions.push({ type: 'deletePod', name: p.metadata.name! });
  actions.push({ type: 'removeOutputs' }, { type: 'removeFinalizer' });
  return { actions };
}

/**
 * Pure decision for one job. The submitter reports what it sees of Slurm into the status; this
 * turns that into the phase, keeps one submitter pod alive until the job ends (a new one resumes
 * the same Slurm job, found by its name), removes pods once the job has ended, and on deletion
 * cancels in Slurm before letting go of the finalizer.
 */
export function planGpuJob(state: GpuJobState): GpuJobPlan {
  const { job, pods } = state;
  const finalizers = job.metadata.finalizers ?? [];
  if (job.metadata.deletionTimestamp) {
    return finalizers.includes(GPUJOB_FINALIZER) ? planDeletion(state) : { actions: [] };
  }
  // The finalizer first, so that no pod ever exists for a job that could be deleted without cancelling.
  if (!finalizers.includes(GPUJOB_FINALIZER)) return { actions: [{ type: 'addFinalizer' }] };

  const st = job.status ?? {};
  const actions: GpuJobAction[] = [];
  const live = pods.filter((p) => !p.metadata.deletionTimestamp);
  if (isFinalPhase(st.phase)) {
    // A submitter removes the job directory after its last report and then exits: it is left that
    // long (a minute at most), so that deleting it cannot cut its cleanup short.
    const reported = Date.parse(st.lastReportTime ?? '');
    const lingering = Number.isNaN(reported) ? Infinity : state.nowMs - reported;
    let requeueAfterMs: number | undefined;
    // A finished job's token writes nothing more: a leaked one is worth little and not for long.
    if (state.accessGranted) actions.push({ type: 'revokeAccess' });
    for (const p of live) {
      if (finished(p) || lingering >= CLEANUP_GRACE_MS) actions.push({ type: 'deletePod', name: p.metadata.name! });
      else requeueAfterMs = CLEANUP_GRACE_MS - lingering + 100;
    }
    return { actions, requeueAfterMs };
  }

  const verdict = phaseFromSlurm(st);
  const attempts = st.attempts ?? 0;
  const current = live.find((p) => roleOf(p) === 'submit' && attemptOf(p) === attempts);
  const finalVerdict = isFinalPhase(verdict.phase);
  if (finalVerdict) {
    actions.push(...statusChange(job, { phase: verdict.phase, reason: verdict.reason, message: verdict.message }));
    actions.push({ type: 'event', eventType: verdict.phase === 'Succeeded' ? 'Normal' : 'Warning', reason: verdict.reason, message: verdict.message });
    return { actions };
  }
  for (const p of live) {
    // Earlier attempts' pods, finished: the new one carries on.
    if (p !== current && roleOf(p) === 'submit' && finished(p)) actions.push({ type: 'deletePod', name: p.metadata.name! });
  }

  if (current && !finished(current)) {
    const message = current.status?.phase === 'Pending' ? pendingPodMessage(current) : undefined;
    const base =
      attempts > 0 && st.slurmState === undefined && st.clusterReachable === undefined && message
        ? { phase: 'Pending' as const, reason: 'SubmitterPending', message }
        : verdict;
    actions.push(...statusChange(job, { phase: base.phase, reason: base.reason, message: base.message }));
    return { actions };
  }

  if (current?.status?.phase === 'Succeeded') {
    const finishedAt = Date.parse(current.status.containerStatuses?.[0]?.state?.terminated?.finishedAt ?? '');
    const waited = Number.isNaN(finishedAt) ? REPORT_GRACE_MS : state.nowMs - finishedAt;
    if (waited < REPORT_GRACE_MS) return { actions, requeueAfterMs: REPORT_GRACE_MS - waited + 100 };
  }

  // No submitter at work: the first one, or the next after one failed or vanished.
  if (!state.cluster) {
    actions.push(
      ...statusChange(job, {
        phase: 'Pending',
        reason: 'ClusterNotFound',
        message: `SlurmCluster "${job.spec.cluster}" not found in namespace ${job.metadata.namespace}`,
      }),
    );
    return { actions };
  }
  if (attempts >= MAX_SUBMIT_ATTEMPTS) {
    const last = current ?? live.filter((p) => roleOf(p) === 'submit').sort((a, b) => attemptOf(b) - attemptOf(a))[0];
    const why = st.submitterError ?? (last ? `its pod ended with ${podOutcome(last)}` : 'its pod is gone');
    const message = `the submitter failed ${attempts} times; the last: ${why}`;
    actions.push(...statusChange(job, { phase: 'Failed', reason: 'SubmitterFailed', message }));
    actions.push({ type: 'event', eventType: 'Warning', reason: 'SubmitterFailed', message });
    return { actions };
  }
  if (current) actions.push({ type: 'deletePod', name: current.metadata.name! });
  const pod = submitterPod(state, 'submit', attempts + 1);
  actions.push({ type: 'createPod', pod });
  const resumed = attempts > 0 ? `; it resumes after the last one (${current ? podOutcome(current) : 'its pod is gone'})` : '';
  actions.push({
    type: 'status',
    status: {
      attempts: attempts + 1,
      podName: pod.metadata.name,
      ...(st.phase === undefined ? { phase: 'Pending', reason: 'Submitting', message: 'the submitter pod is starting' } : {}),
    },
  });
  actions.push({ type: 'event', eventType: 'Normal', reason: 'SubmitterCreated', message: `created submitter pod ${pod.metadata.name}${resumed}` });
  return { actions };
}

/** Why a submitter pod has not started, when it says (ErrImagePull, ...). */
function pendingPodMessage(pod: Pod): string | undefined {
  const waiting = pod.status?.containerStatuses?.[0]?.state?.waiting;
  if (waiting?.reason && waiting.reason !== 'ContainerCreating')
    return `submitter pod ${pod.metadata.name}: ${waiting.reason}${waiting.message ? `: ${waiting.message}` : ''}`;
  return undefined;
}

/** What the controller needs of the master's store of uploaded outputs (GpuJobOutputs). */
export interface GpuJobOutputStore {
  /** The uids of the jobs that have outputs stored. */
  uids(): Promise<string[]>;
  remove(uid: string): Promise<void>;
}

export interface GpuJobControllerOptions {
  client: Client;
  /** The process's shared informers: GpuJobs, SlurmClusters, and Pods read through the label index. */
  informers: InformerFactory;
  outputs: GpuJobOutputStore;
  /** Issues a job's token: its service account's, bound to the job object (ServiceAccounts.issueGpuJobToken). */
  issueToken(input: {
    namespace: string;
    serviceAccount: { name: string; uid: string };
    job: { name: string; uid: string };
    expirationSeconds: number;
  }): Promise<{ token: string }>;
  /** The API server's URL as pods reach it. */
  serverUrl: string;
  /** The cluster CA (PEM) when the API server serves HTTPS; it goes into each job's token Secret for its pods. */
  caPem?: string;
  log?: (message: string) => void;
  now?: () => number;
}

const COMPONENT = 'gpujob-controller';

export class GpuJobController {
  readonly jobs: Informer<GpuJob>;
  readonly clusters: Informer<SlurmCluster>;
  readonly pods: Informer<Pod>;
  readonly roleBindings: Informer<RoleBinding>;
  readonly queue = new WorkQueue({ baseDelayMs: 500, maxDelayMs: 30_000 });
  readonly #options: GpuJobControllerOptions;
  readonly #client: Client;
  readonly #log: (message: string) => void;
  readonly #now: () => number;

  constructor(options: GpuJobControllerOptions) {
    this.#options = options;
    this.#client = options.client;
    this.#log = options.log ?? (() => {});
    this.#now = options.now ?? Date.now;
    this.jobs = options.informers.informer<GpuJob>(gpuJobKind);
    this.clusters = options.informers.informer<SlurmCluster>(slurmClusterKind);
    this.pods = options.informers.informer<Pod>(podKind);
    this.roleBindings = options.informers.informer<RoleBinding>(roleBindingKind);
    const keyOf = (o: { metadata: { namespace?: string; name?: string } }) => `${o.metadata.namespace}/${o.metadata.name}`;
    this.jobs.addHandlers({ onAdd: (j) => this.queue.add(keyOf(j)), onUpdate: (_o, j) => this.queue.add(keyOf(j)), onDelete: (j) => this.queue.add(keyOf(j)) });
    // A pod's event enqueues its job (its owner).
    const enqueueOwner = (p: Pod) => {
      if (!p.metadata.labels?.[GPUJOB_UID_LABEL]) return;
      const owner = p.metadata.ownerReferences?.find((r) => r.kind === 'GpuJob' && r.controller);
      if (owner) this.queue.add(`${p.metadata.namespace}/${owner.name}`);
    };
    this.pods.addHandlers({ onAdd: enqueueOwner, onUpdate: (_o, p) => enqueueOwner(p), onDelete: enqueueOwner });
    // Jobs waiting for their cluster (or cancelling through it) look again when it comes or changes.
    const enqueueUsers = (c: SlurmCluster) => {
      for (const j of this.jobs.byIndex(NAMESPACE_INDEX, c.metadata.namespace!)) if (j.spec.cluster === c.metadata.name) this.queue.add(keyOf(j));
    };
    this.clusters.addHandlers({ onAdd: enqueueUsers, onUpdate: (_o, c) => enqueueUsers(c), onDelete: enqueueUsers });
  }

  /** Runs the worker and the sweep of outputs once the informers (started by the process's factory) have synced. */
  async start(signal: AbortSignal): Promise<void> {
    await Promise.all([
      this.#sweepOutputs(signal),
      runController(
        {
          name: 'gpujob',
          queue: this.queue,
          informers: [this.jobs, this.clusters, this.pods, this.roleBindings],
          reconcile: (key) => this.reconcile(key),
          log: this.#log,
        },
        signal,
      ),
    ]);
  }

  /** Outputs of jobs deleted while the master was down (or before their finalizer ran): removed once the caches know every job. */
  async #sweepOutputs(signal: AbortSignal): Promise<void> {
    await Promise.race([this.jobs.whenSynced(), new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }))]);
    if (signal.aborted) return;
    const known = new Set(this.jobs.list().map((j) => j.metadata.uid));
    for (const uid of await this.#options.outputs.uids().catch(() => [])) {
      if (!known.has(uid)) await this.#options.outputs.remove(uid).catch((err: Error) => this.#log(`gpujob: removing outputs of ${uid}: ${err.message}`));
    }
  }

  async reconcile(key: string): Promise<ReconcileResult | void> {
    const job = this.jobs.get(key);
    if (!job) return;
    const namespace = job.metadata.namespace!;
    const uid = job.metadata.uid!;
    const plan = planGpuJob({
      job,
      cluster: this.clusters.get(`${namespace}/${job.spec.cluster}`),
      pods: this.pods.byIndex(LABEL_INDEX, `${GPUJOB_UID_LABEL}=${uid}`).filter((p) => p.metadata.namespace === namespace),
      accessGranted: this.roleBindings.get(`${namespace}/${gpuJobAccessName(job)}`) !== undefined,
      serverUrl: this.#options.serverUrl,
      caPem: this.#options.caPem,
      nowMs: this.#now(),
    });
    for (const action of plan.actions) await this.#apply(job, action);
    return plan.requeueAfterMs === undefined ? undefined : { requeueAfterMs: plan.requeueAfterMs };
  }

  /** Creates an object the job owns unless it is there already; the stored one either way. */
  async #ensure<T extends { metadata: { name?: string } }>(def: typeof secretKind, want: T, namespace: string): Promise<T> {
    try {
      return (await this.#client.create(def, want as never, { namespace })) as unknown as T;
    } catch (err) {
      if (!(err instanceof AlreadyExistsError)) throw err;
      return (await this.#client.get(def, { namespace, name: want.metadata.name! })) as unknown as T;
    }
  }

  /**
   * Before each pod (its env refers to the Secret): the job's ServiceAccount, Role and
   * RoleBinding, and a fresh token of that account bound to the job in the job's Secret, so a
   * submitter started late in a long job still gets a token with its whole lifetime ahead.
   */
  async #ensureAccess(job: GpuJob): Promise<void> {
    const namespace = job.metadata.namespace!;
    const sa = await this.#ensure(serviceAccountKind, gpuJobServiceAccount(job), namespace);
    await this.#ensure(roleKind, gpuJobRole(job), namespace);
    await this.#ensure(roleBindingKind, gpuJobRoleBinding(job), namespace);
    const { token } = await this.#options.issueToken({
      namespace,
      serviceAccount: { name: gpuJobAccessName(job), uid: (sa as { metadata: { uid?: string } }).metadata.uid ?? '' },
      job: { name: job.metadata.name!, uid: job.metadata.uid! },
      expirationSeconds: gpuJobTokenSeconds(job.spec.slurm?.time),
    });
    const want = gpuJobTokenSecret(job, token, this.#options.caPem);
    try {
      await this.#client.create(secretKind, want, { namespace });
    } catch (err) {
      if (!(err instanceof AlreadyExistsError)) throw err;
      // Made for an earlier pod of the same job: the new token (and the CA, which a master that served plain HTTP lacked).
      const data = want.data ?? {};
      await this.#client.patch(secretKind, { namespace, name: want.metadata.name! }, { data: { [GPUJOB_CA_KEY]: null, ...data } });
    }
  }

  async #apply(job: GpuJob, action: GpuJobAction): Promise<void> {
    const namespace = job.metadata.namespace!;
    const name = job.metadata.name!;
    const finalizers = job.metadata.finalizers ?? [];
    try {
      switch (action.type) {
        case 'addFinalizer':
        case 'removeFinalizer': {
          const next = action.type === 'addFinalizer' ? [...finalizers, GPUJOB_FINALIZER] : finalizers.filter((f) => f !== GPUJOB_FINALIZER);
          // With the resourceVersion: a finalizer someone else added meanwhile is not dropped (409, and we look again).
          await this.#client.patch(gpuJobKind, { namespace, name }, { metadata: { finalizers: next, resourceVersion: job.metadata.resourceVersion } });
          break;
        }
        case 'createPod':
          await this.#ensureAccess(job);
          await this.#client.create(podKind, action.pod, { namespace });
          this.#log(`gpujob: created pod ${namespace}/${action.pod.metadata.name}`);
          break;
        case 'deletePod':
          await this.#client.delete(podKind, { namespace, name: action.name });
          break;
        case 'status':
          await this.#client.patch(gpuJobKind, { namespace, name }, { status: action.status }, { subresource: 'status' });
          if (action.status.phase && action.status.phase !== job.status?.phase)
            this.#log(`gpujob: ${namespace}/${name} is ${action.status.phase}${action.status.message ? `: ${action.status.message}` : ''}`);
          break;
        case 'removeOutputs':
          await this.#options.outputs.remove(job.metadata.uid!);
          break;
        case 'revokeAccess':
          await this.#client.delete(roleBindingKind, { namespace, name: gpuJobAccessName(job) });
          this.#log(`gpujob: ${namespace}/${name} has finished: its token no longer writes`);
          break;
        case 'event':
          await recordEvent(
            { client: this.#client, object: job, type: action.eventType, reason: action.reason, message: action.message, component: COMPONENT },
            this.#log,
          );
          break;
      }
    } catch (err) {
      // Gone already, or made by our previous round: the informers bring the news and another round follows.
      if (err instanceof NotFoundError || err instanceof AlreadyExistsError) return;
      // A namespace being deleted takes no new pods: a canceller cannot run there, so deletion goes on without it.
      if (err instanceof ForbiddenError && action.type === 'createPod' && job.metadata.deletionTimestamp) {
        await recordEvent(
          {
            client: this.#client,
            object: job,
            type: 'Warning',
            reason: 'CancelSkipped',
            message: `cannot start a canceller: ${err.message}`,
            component: COMPONENT,
          },
          this.#log,
        );
        await this.#apply(job, { type: 'removeOutputs' });
        await this.#apply(job, { type: 'removeFinalizer' });
        return;
      }
      throw err;
    }
  }
}
