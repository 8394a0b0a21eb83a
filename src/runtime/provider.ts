// The pod provider interface the kubelet drives: Docker in production, an in-memory fake in unit tests.
import type { Readable, Writable } from 'node:stream';
import type { Pod } from '../core/api/pod.js';

/**
 * Shaped like virtual-kubelet's PodLifecycleHandler (create, update, delete, get, list, and a
 * status callback), narrowed so that the kubelet keeps the Kubernetes policy (restart by
 * policy with backoff, probes, status) and the provider only does what it is told:
 *
 * - `createPod` makes the pod's sandbox (the pause container holding the network, IPC and
 *   PID namespaces, with the pod's IP) and nothing else; app containers are started by
 *   `updatePod`. Idempotent: an existing running sandbox is returned as it is.
 * - `updatePod` applies container actions: start a container (a fresh instance, attempt
 *   `n`), or kill one gracefully.
 * - `deletePod` stops every container gracefully (SIGTERM, the grace period, SIGKILL) and
 *   removes them and the pod's volumes. Deleting a pod that is not there succeeds.
 * - `getPod`/`listPods` report what actually runs, found by container labels, so a kubelet
 *   that restarts adopts what it finds.
 * - `onPodChange` is called (with the pod's uid) whenever a container of the pod changes
 *   state on its own (exits, is OOM-killed), so the kubelet resyncs it at once.
 *
 * Every implementation passes the one contract suite in provider-contract.ts.
 */
export interface PodProvider {
  createPod(pod: Pod, options: CreatePodOptions): Promise<RuntimePod>;
  updatePod(pod: Pod, action: ContainerAction): Promise<ActionResult>;
  deletePod(ref: PodRef, options: { gracePeriodSeconds: number }): Promise<void>;
  getPod(uid: string): Promise<RuntimePod | undefined>;
  listPods(): Promise<RuntimePod[]>;
  onPodChange(callback: (uid: string) => void): void;

  /** Runs a command in a running container; resolves with its exit code and output. */
  exec(ref: PodRef, container: string, command: string[], options?: ExecOptions): Promise<ExecResult>;
  /**
   * Runs a command with its streams attached (exec over a stream upgrade): stdin as the caller
   * writes it, output as it comes, a terminal when asked. Optional: a provider without it
   * serves only the one-shot `exec`.
   */
  execStream?(ref: PodRef, container: string, command: string[], options: StreamOptions): Promise<StreamSession>;
  /** Attaches to the container's main process (kubectl attach); `done` resolves when that process exits. */
  attachStream?(ref: PodRef, container: string, options: StreamOptions): Promise<StreamSession>;
  /** The container's log (stdout and stderr interleaved), optionally followed. */
  logs(ref: PodRef, container: string, options: LogOptions): Promise<Readable>;
  /**
   * CPU and memory use of each of the pod's containers, now. `pod` is the pod as the API has it
   * when the kubelet knows it: the fake provider reads the usage it should report from it.
   */
  stats(ref: PodRef, pod?: Pod): Promise<ContainerStats[]>;
  /** Facts for the Node object: runtime version, capacity. */
  info(): Promise<RuntimeInfo>;
}

/** Enough to find a pod's containers: labels carry uid, namespace and name. */
export interface PodRef {
  uid: string;
  namespace: string;
  name: string;
}

export interface CreatePodOptions {
  /** The node's pod subnet, e.g. 10.244.3.0/24; the sandbox gets an address in it. */
  podCIDR?: string;
}

export type ContainerAction =
  | {
      type: 'start';
      container: string;
      /** 0 for the first instance, restartCount + 1 afterwards; kept as a container label. */
      attempt: number;
    }
  | {
      type: 'kill';
      container: string;
      gracePeriodSeconds: number;
      /** Why, for the record (e.g. "failed liveness probe"). */
      reason: string;
    };

export interface ActionResult {
  /** Set when a start pulled the image: how long the pull took. */
  pulled?: { image: string; ms: number };
  /** The id of the container that was created (start only). */
  containerID?: string;
}

export type SandboxState = 'ready' | 'notready';

export interface RuntimePod extends PodRef {
  sandbox: {
    id: string;
    state: SandboxState;
    ip?: string;
    createdAt: string;
  };
  /** The newest instance of each container that has been started, by name. */
  containers: RuntimeContainer[];
}

export type ContainerRunState = 'created' | 'running' | 'exited' | 'unknown';

export interface RuntimeContainer {
  name: string;
  id: string;
  image: string;
  imageID?: string;
  state: ContainerRunState;
  attempt: number;
  createdAt: string;
  startedAt?: string;
  finishedAt?: string;
  exitCode?: number;
  /** For exited containers: OOMKilled, Error or Completed. */
  reason?: string;
  message?: string;
  /** The ids its process runs with (status.containerStatuses[].user.linux), when the runtime knows them. */
  user?: { uid: number; gid: number; supplementalGroups: number[] };
  /** The instance before this one, if it is still kept (for lastState). */
  previous?: Omit<RuntimeContainer, 'previous'>;
}

export interface ExecOptions {
  timeoutMs?: number;
  stdin?: Buffer;
}

export interface StreamOptions {
  stdin: boolean;
  /** A pseudo-terminal: output comes on stdout alone, and the size can change. */
  tty: boolean;
}

/** An attached command or process. */
export interface StreamSession {
  /** Where the caller's input goes (with `stdin`); ending it closes the process's stdin. */
  stdin?: Writable;
  stdout: Readable;
  /** Absent with a terminal, whose output is all on stdout. */
  stderr?: Readable;
  /** Sets the terminal's size (tty only). */
  resize(size: { width: number; height: number }): Promise<void>;
  /** The exit code, once the output has ended. */
  done: Promise<number>;
  /** Detaches early (the client went away); the process itself is left to end on its own or by stdin's close. */
  close(): void;
}

export interface ExecResult {
  exitCode: number;
  stdout: string;
  stderr: string;
}

export interface LogOptions {
  follow?: boolean;
  tailLines?: number;
  /** Logs of the previous instance (after a restart). */
  previous?: boolean;
  timestamps?: boolean;
  signal?: AbortSignal;
}

export interface ContainerStats {
  name: string;
  /** CPU used, in cores (e.g. 0.25), averaged over the last sample window. */
  cpuCores: number;
  memoryBytes: number;
}

export interface RuntimeInfo {
  runtimeVersion: string;
  cpuCores: number;
  memoryBytes: number;
  kernelVersion: string;
  osImage: string;
  architecture: string;
}

/** Kinds of failure a start can meet; the kubelet shows them as waiting reasons, as Kubernetes does (PostStartHookError: the kubelet's own, a failed postStart hook). */
export type StartFailureReason =
  | 'ErrImagePull'
  | 'ErrImageNeverPull'
  | 'CreateContainerError'
  | 'RunContainerError'
  | 'CreateContainerConfigError'
  | 'PostStartHookError'
  | 'ContainerCreating';

/** A start that failed for a reason the user must see (bad image, port taken, bad config). */
export class ContainerStartError extends Error {
  readonly reason: StartFailureReason;
  constructor(reason: StartFailureReason, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ContainerStartError';
    this.reason = reason;
  }
}

/** Labels every minik8s container carries, so a restarted kubelet finds and adopts them. */
export const LABELS = {
  managed: 'minik8s.io/managed',
  podUid: 'minik8s.io/pod-uid',
  podName: 'minik8s.io/pod-name',
  podNamespace: 'minik8s.io/pod-namespace',
  container: 'minik8s.io/container',
  attempt: 'minik8s.io/attempt',
  /** "sandbox" or "app". */
  role: 'minik8s.io/role',
  /** The node whose kubelet made it: several simulated nodes may share one Docker engine. */
  node: 'minik8s.io/node',
} as const;
