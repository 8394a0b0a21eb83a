// One pod's sync: read the runtime, plan, act through the provider, report status and events. The kubelet's core shell.
import type { Container, Pod, PodStatus } from '../../core/api/pod.js';
import { getOrCreate } from '../../core/get-or-create.js';
import { ContainerStartError, type PodProvider, type PodRef, type RuntimePod } from '../../runtime/provider.js';
import type { ConfigVolumes } from './config-volumes.js';
import { type ConfigReader, resolveContainerEnv } from './env-resolve.js';
import { VolumeSetUpError } from './projected-volumes.js';
import type { EventRecorder } from './event-recorder.js';
import type { LifecycleHooks } from './lifecycle-hooks.js';
import { backoffKey, planPod, SANDBOX, type ProbeVerdict, type StartFailure, type Waiting } from './pod-actions.js';
import { computePodStatus, sameStatus, type ProbeStatus } from './pod-status.js';
import { RestartBackoff } from './restart-backoff.js';
import { sysctlRejection } from './sysctl-admission.js';

/** What the sync needs from the API server; a fake in unit tests. */
export interface PodApi {
  /** Writes the pod's status; resolves undefined when the pod is gone. */
  updateStatus(pod: Pod, status: PodStatus): Promise<void>;
  /** The final delete once the containers are gone (grace period 0, guarded by uid). */
  deletePod(pod: Pod): Promise<void>;
  /** A Secret's data (base64 values), undefined when there is none; the API lets a node read only Secrets its own pods name. */
  readSecret?(namespace: string, name: string): Promise<Record<string, string> | undefined>;
  /** A ConfigMap's data and binaryData, undefined when there is none; as for Secrets, only those its own pods name. */
  readConfigMap?: ConfigReader['readConfigMap'];
}

/** The pod with one container's env from ConfigMaps and Secrets made plain (env-resolve.ts); the name older callers know. */
export function withSecretEnv(pod: Pod, containerName: string, api: PodApi): Promise<Pod> {
  return resolveContainerEnv(pod, containerName, api);
}

/** What the sync needs from the probers; the ProbeManager in production, a table in unit tests. */
export interface Probes {
  sync(pod: Pod, runtime: RuntimePod | undefined): void;
  verdict(containerID: string): ProbeVerdict;
  status(containerID: string): ProbeStatus;
  forgetPod(uid: string): void;
}

export interface PodSyncOptions {
  provider: PodProvider;
  api: PodApi;
  events: Pick<EventRecorder, 'record' | 'forgetPod'>;
  probes: Probes;
  nodeIP: string;
  podCIDR?: string;
  now?: () => number;
  backoff?: RestartBackoff;
  /** Runs containers' postStart and preStop hooks; without it none are run (fake nodes, as kwok's, run none). */
  hooks?: Pick<LifecycleHooks, 'postStart' | 'preStop'>;
  /** Writes configMap, secret, downwardAPI and projected volumes (config-volumes.ts); without it none are written (fake nodes). */
  volumes?: Pick<ConfigVolumes, 'setUp'>;
  /** Volumes the kubelet writes itself (the service account token's, service-account-volume.ts): the pod as the runtime should run it. */
  preparePod?: (pod: Pod) => Promise<Pod>;
  /** Sysctls beyond Kubernetes' safe set this node lets pods set (the kubelet's --allowed-unsafe-sysctls). */
  allowedUnsafeSysctls?: readonly string[];
  log?: (message: string) => void;
}

export interface SyncResult {
  /**
   * When to look at the pod again (a backoff ends), in ms since the epoch on the sync's clock:
   * an instant rather than a delay, so time spent in the sync's own API calls does not push it later.
   */
  requeueAt?: number;
}

/** Kubernetes' floor for the grace period of a pod it must kill without knowing better. */
export const MIN_GRACE_SECONDS = 2;

export function podRef(pod: Pod): PodRef {
  return { uid: pod.metadata.uid!, namespace: pod.metadata.namespace!, name: pod.metadata.name! };
}

const fieldPath = (container: string) => `spec.containers{${container}}`;

export class PodSync {
  readonly #o: PodSyncOptions;
  readonly #now: () => number;
  readonly #backoff: RestartBackoff;
  /** Start failures by pod uid, then container name (SANDBOX for the pause container). */
  readonly #failures = new Map<string, Map<string, StartFailure>>();

  constructor(options: PodSyncOptions) {
    this.#o = options;
    this.#now = options.now ?? Date.now;
    this.#backoff = options.backoff ?? new RestartBackoff();
  }

  #failuresOf(uid: string): Map<string, StartFailure> {
    return getOrCreate(this.#failures, uid, () => new Map());
  }

  #forget(uid: string): void {
    this.#failures.delete(uid);
    this.#backoff.forget(`${uid}/`);
    this.#o.probes.forgetPod(uid);
    this.#o.events.forgetPod(uid);
  }

  /** Brings one pod bound to this node one step closer to its spec, then reports its status. */
  async sync(pod: Pod): Promise<SyncResult> {
    // Reassigned once an early status is written, so that later patches are made against it.
    if (pod.metadata.deletionTimestamp) {
      await this.#terminate(pod);
      return {};
    }
    const { provider, events, probes } = this.#o;
    const uid = pod.metadata.uid!;
    const rejected = sysctlRejection(pod, this.#o.allowedUnsafeSysctls);
    if (rejected) {
      if (pod.status?.phase !== 'Failed') {
        events.record({ pod, type: 'Warning', reason: rejected.reason, message: rejected.message });
        await this.#o.api.updateStatus(pod, rejected);
      }
      return {};
    }
    if (this.#o.preparePod) {
      try {
        pod = await this.#o.preparePod(pod);
      } catch (err) {
        events.record({ pod, type: 'Warning', reason: 'FailedMount', message: `MountVolume.SetUp failed: ${(err as Error).message}` });
        return { requeueAt: this.#now() + 5000 };
      }
    }
    let runtime = await provider.getPod(uid);
    probes.sync(pod, runtime);
    const now = this.#now();
    const failures = this.#failuresOf(uid);
    const plan = planPod({ pod, runtime, now, backoff: this.#backoff, failures, probes: (id) => probes.verdict(id) });
    const overrides = new Map<string, Waiting>();

    for (const action of plan.actions) {
      if (action.type === 'killPod') {
        events.record({ pod, type: 'Normal', reason: 'SandboxChanged', message: 'Pod sandbox changed, it will be killed and re-created.' });
        await this.#stopPod(pod, runtime, pod.spec.terminationGracePeriodSeconds ?? 30);
        probes.forgetPod(uid);
      } else if (action.type === 'createSandbox') {
        try {
          runtime = await provider.createPod(pod, { podCIDR: this.#o.podCIDR });
          failures.delete(SANDBOX);
          // The pod's address is known once its sandbox is up, while the app containers may take a while yet (pulls,
          // starts): report it now, as the kubelet does, for callers that reach the pod themselves (the activator probes
          // a cold-starting function's pod directly). The final write below patches from this status.
          const early = computePodStatus({
            pod,
            runtime,
            nodeIP: this.#o.nodeIP,
            waiting: plan.waiting,
            probes: (id) => probes.status(id),
            now: new Date(now),
          });
          if (early.podIP && !sameStatus(pod.status, early)) {
            await this.#o.api.updateStatus(pod, early);
            pod = { ...pod, status: early };
          }
        } catch (err) {
          const failure = this.#startFailed(pod, SANDBOX, err, now);
          events.record({ pod, type: 'Warning', reason: 'FailedCreatePodSandBox', message: `Failed to create pod sandbox: ${failure.message}` });
          for (const c of pod.spec.containers) overrides.set(c.name, { reason: failure.reason, message: failure.message });
          break;
        }
      } else if (action.type === 'start') {
        await this.#start(pod, action.container, action.attempt, runtime, now, overrides);
      } else {
        events.record({ pod, type: 'Normal', reason: 'Killing', message: action.message, fieldPath: fieldPath(action.container) });
        await this.#stopContainer(pod, runtime, action.container, action.gracePeriodSeconds, action.message);
      }
    }
    if (plan.actions.length > 0) {
      runtime = await provider.getPod(uid);
      probes.sync(pod, runtime);
    }

    // Mounted files follow their objects while the pod runs (each resync comes here), as the kubelet's periodic remount does.
    if (runtime?.containers.some((c) => c.state === 'running') && !plan.actions.some((a) => a.type === 'start')) {
      await this.#o.volumes
        ?.setUp(pod)
        .catch((err: Error) => this.#o.log?.(`kubelet: volumes of pod ${pod.metadata.namespace}/${pod.metadata.name}: ${err.message}`));
    }
    const waiting = new Map([...plan.waiting, ...overrides]);
    for (const [name, w] of plan.waiting) {
      if (w.reason === 'CrashLoopBackOff') {
        events.record({ pod, type: 'Warning', reason: 'BackOff', message: 'Back-off restarting failed container', fieldPath: fieldPath(name) });
      } else if (w.reason === 'ImagePullBackOff') {
        const image = pod.spec.containers.find((c) => c.name === name)?.image;
        events.record({ pod, type: 'Normal', reason: 'BackOff', message: `Back-off pulling image "${image}"`, fieldPath: fieldPath(name) });
      }
    }
    const status = computePodStatus({ pod, runtime, nodeIP: this.#o.nodeIP, waiting, probes: (id) => probes.status(id), now: new Date(now) });
    if (!sameStatus(pod.status, status)) await this.#o.api.updateStatus(pod, status);
    return plan.requeueAfterMs !== undefined ? { requeueAt: now + plan.requeueAfterMs } : {};
  }

  async #start(pod: Pod, name: string, attempt: number, runtime: RuntimePod | undefined, now: number, overrides: Map<string, Waiting>): Promise<void> {
    const { provider, events } = this.#o;
    const key = backoffKey(pod, name);
    const spec = pod.spec.containers.find((c) => c.name === name)!;
    const previous = runtime?.containers.find((c) => c.name === name);
    if (previous?.startedAt && previous.finishedAt) this.#backoff.noteRun(key, Date.parse(previous.startedAt), Date.parse(previous.finishedAt));
    // Every restart (not the first start) moves the backoff on, as the kubelet's doBackOff does.
    if (previous) this.#backoff.next(key, now);
    try {
      await this.#setUpVolumes(pod);
      const env = await resolveContainerEnv(pod, name, this.#o.api, {
        hostIP: this.#o.nodeIP,
        onSkippedKeys: (message) => events.record({ pod, type: 'Warning', reason: 'InvalidEnvironmentVariableNames', message }),
      });
      const result = await provider.updatePod(env, { type: 'start', container: name, attempt });
      this.#failuresOf(pod.metadata.uid!).delete(name);
      const at = fieldPath(name);
      if (result.pulled) {
        events.record({
          pod,
          type: 'Normal',
          reason: 'Pulled',
          message: `Successfully pulled image "${spec.image}" in ${(result.pulled.ms / 1000).toFixed(3)}s`,
          fieldPath: at,
        });
      } else {
        events.record({ pod, type: 'Normal', reason: 'Pulled', message: `Container image "${spec.image}" already present on machine`, fieldPath: at });
      }
      events.record({ pod, type: 'Normal', reason: 'Created', message: `Created container ${name}`, fieldPath: at });
      events.record({ pod, type: 'Normal', reason: 'Started', message: `Started container ${name}`, fieldPath: at });
      await this.#postStart(pod, spec, runtime);
    } catch (err) {
      if (!previous) this.#backoff.next(key, now);
      const failure = this.#startFailed(pod, name, err, now, false);
      overrides.set(name, { reason: failure.reason, message: failure.message });
      // A failed postStart hook has had its own event (FailedPostStartHook), as in Kubernetes.
      if (failure.reason === 'PostStartHookError') return;
      const message =
        failure.reason === 'ErrImagePull' || failure.reason === 'ErrImageNeverPull'
          ? `Failed to pull image "${spec.image}": ${failure.message}`
          : `Error: ${failure.message}`;
      events.record({ pod, type: 'Warning', reason: 'Failed', message, fieldPath: fieldPath(name) });
    }
  }

  /** Writes the pod's config volumes before a start; one that cannot be set up holds the container in ContainerCreating, with a FailedMount event. */
  async #setUpVolumes(pod: Pod): Promise<void> {
    try {
      await this.#o.volumes?.setUp(pod);
    } catch (err) {
      if (!(err instanceof VolumeSetUpError)) throw err;
      this.#o.events.record({ pod, type: 'Warning', reason: 'FailedMount', message: err.message });
      throw new ContainerStartError('ContainerCreating', err.message, { cause: err });
    }
  }

  /**
   * Runs the container's postStart hook right after its start, as the kubelet does before it calls
   * the container started; a hook that fails gets the container killed, which then restarts by the
   * pod's restartPolicy with backoff, and the start counts as failed (PostStartHookError).
   */
  async #postStart(pod: Pod, spec: Container, runtime: RuntimePod | undefined): Promise<void> {
    const outcome = await this.#o.hooks?.postStart(pod, spec, runtime?.sandbox.ip);
    if (!outcome || outcome.ok) return;
    this.#o.events.record({ pod, type: 'Warning', reason: 'FailedPostStartHook', message: outcome.message, fieldPath: fieldPath(spec.name) });
    const message = `Container ${spec.name} failed post-start hook, will be restarted`;
    this.#o.events.record({ pod, type: 'Normal', reason: 'Killing', message, fieldPath: fieldPath(spec.name) });
    // The runtime as it is now: the container just started is the one to stop (and its preStop hook runs, as Kubernetes' killContainer does).
    await this.#stopContainer(pod, await this.#o.provider.getPod(pod.metadata.uid!), spec.name, pod.spec.terminationGracePeriodSeconds ?? 30, message);
    throw new ContainerStartError('PostStartHookError', outcome.message);
  }

  /** Stops one container: its preStop hook first, within the grace period, then SIGTERM with what is left of it. */
  async #stopContainer(pod: Pod, runtime: RuntimePod | undefined, name: string, graceSeconds: number, reason: string): Promise<void> {
    const grace = await this.#preStop(pod, runtime, [name], graceSeconds);
    await this.#o.provider.updatePod(pod, { type: 'kill', container: name, gracePeriodSeconds: grace, reason });
  }

  /** Stops every container of the pod and its sandbox: the running containers' preStop hooks first, side by side, within the grace period. */
  async #stopPod(pod: Pod, runtime: RuntimePod | undefined, graceSeconds: number): Promise<void> {
    const grace = await this.#preStop(
      pod,
      runtime,
      pod.spec.containers.map((c) => c.name),
      graceSeconds,
    );
    await this.#o.provider.deletePod(podRef(pod), { gracePeriodSeconds: grace });
  }

  /** Runs preStop hooks and records the failures; resolves with the grace period left for SIGTERM. */
  async #preStop(pod: Pod, runtime: RuntimePod | undefined, names: string[], graceSeconds: number): Promise<number> {
    const hooks = this.#o.hooks;
    if (!hooks) return graceSeconds;
    const result = await hooks.preStop(pod, runtime, names, graceSeconds);
    for (const f of result.failures) {
      this.#o.events.record({ pod, type: 'Warning', reason: 'FailedPreStopHook', message: f.message, fieldPath: fieldPath(f.container) });
    }
    return result.graceSeconds;
  }

  /** Records a failed start; unexpected errors (Docker down) are rethrown so the queue retries the sync. */
  #startFailed(pod: Pod, name: string, err: unknown, now: number, advanceBackoff = true): StartFailure {
    if (!(err instanceof ContainerStartError)) throw err;
    const failure: StartFailure = { reason: err.reason, message: err.message, at: now };
    this.#failuresOf(pod.metadata.uid!).set(name, failure);
    if (advanceBackoff) this.#backoff.next(backoffKey(pod, name), now);
    return failure;
  }

  /** Graceful deletion: stop the containers within the grace period, then remove the pod object. */
  async #terminate(pod: Pod): Promise<void> {
    const { provider, events } = this.#o;
    const uid = pod.metadata.uid!;
    const runtime = await provider.getPod(uid);
    if (runtime) {
      for (const c of runtime.containers) {
        if (c.state === 'running')
          events.record({ pod, type: 'Normal', reason: 'Killing', message: `Stopping container ${c.name}`, fieldPath: fieldPath(c.name) });
      }
      const grace = pod.metadata.deletionGracePeriodSeconds ?? pod.spec.terminationGracePeriodSeconds ?? 30;
      // preStop hooks run while the pod is already out of its Services' endpoints (deleting it did that), so
      // a hook that waits lets clients stop sending before SIGTERM: how rolling updates lose no request.
      await this.#stopPod(pod, runtime, grace);
    }
    this.#forget(uid);
    await this.#o.api.deletePod(pod);
  }

  /**
   * Removes what runs for pods the API no longer has (deleted while this kubelet was away).
   * `known` (the uids of the API's pods) is asked only once the runtime has answered: a pod
   * that arrives and starts while the list is in flight would otherwise look like an orphan.
   */
  async removeOrphans(known: () => ReadonlySet<string>): Promise<string[]> {
    const removed: string[] = [];
    const running = await this.#o.provider.listPods();
    const uids = known();
    for (const rp of running) {
      if (uids.has(rp.uid)) continue;
      this.#o.log?.(`kubelet: removing containers of pod ${rp.namespace}/${rp.name} (${rp.uid}), which no longer exists`);
      await this.#o.provider.deletePod(rp, { gracePeriodSeconds: MIN_GRACE_SECONDS });
      this.#forget(rp.uid);
      removed.push(rp.uid);
    }
    return removed;
  }
}
