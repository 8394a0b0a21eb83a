// Container lifecycle hooks as the kubelet runs them: postStart right after a container starts, preStop before it is stopped; exec, httpGet or sleep.
import type { Container, Pod } from '../../core/api/pod.js';
import type { ExecResult, PodProvider, RuntimePod } from '../../runtime/provider.js';
import { sleep, systemClock, type Clock } from './clock.js';
import { MIN_GRACE_SECONDS } from './pod-sync.js';
import { resolvePort, sendHttpGet } from './probe.js';

export type LifecycleHandler = NonNullable<NonNullable<Container['lifecycle']>['preStop']>;

export interface HookOutcome {
  ok: boolean;
  /** Why it failed, in Kubernetes' words: the message of the FailedPostStartHook or FailedPreStopHook event. */
  message: string;
}

/** What a hook runs against: the container, its pod's address, and a way to run a command in it. */
export interface HookTarget {
  pod: Pod;
  container: Container;
  podIP?: string;
  exec(command: string[], timeoutMs: number): Promise<ExecResult>;
}

export interface RunHookOptions {
  clock: Clock;
  /** Aborting it cuts the hook short (the grace period ran out, the kubelet stops); its reason says why. */
  signal: AbortSignal;
  /** The longest an exec or a request may take (the caller's limit, so nothing outlives it for long). */
  timeoutMs: number;
}

/** How Kubernetes names a pod in hook messages (format.Pod): name_namespace(uid). */
export function podDescription(pod: Pod): string {
  return `${pod.metadata.name}_${pod.metadata.namespace}(${pod.metadata.uid})`;
}

const MAX_OUTPUT = 10 * 1024;

function reasonOf(signal: AbortSignal): string {
  const r = signal.reason as unknown;
  return r instanceof Error ? r.message : String(r ?? 'aborted');
}

/** Settles with the promise, or rejects as soon as the signal aborts (an exec cannot be called back, but we need not wait for it). */
function untilAborted<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(new Error(reasonOf(signal)));
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(new Error(reasonOf(signal)));
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/**
 * Runs one handler, as the kubelet's handler runner does: exec succeeds on exit code 0; httpGet
 * succeeds on any answer (Kubernetes looks only for a transport error, not at the status code);
 * sleep waits in the kubelet, not in the container. tcpSocket passes validation for backward
 * compatibility but, as in Kubernetes, fails when run.
 */
export async function runLifecycleHook(handler: LifecycleHandler, target: HookTarget, options: RunHookOptions): Promise<HookOutcome> {
  const who = `for Container "${target.container.name}" in Pod "${podDescription(target.pod)}"`;
  const { signal } = options;
  if (handler.exec) {
    const command = handler.exec.command ?? [];
    const shown = `[${command.join(' ')}]`;
    try {
      const result = await untilAborted(target.exec(command, options.timeoutMs), signal);
      if (result.exitCode === 0) return { ok: true, message: '' };
      const output = `${result.stdout}${result.stderr}`.slice(0, MAX_OUTPUT);
      return {
        ok: false,
        message: `Exec lifecycle hook (${shown}) ${who} failed - error: command '${command.join(' ')}' exited with ${result.exitCode}: ${output}, message: ${JSON.stringify(output)}`,
      };
    } catch (err) {
      return { ok: false, message: `Exec lifecycle hook (${shown}) ${who} failed - error: ${err instanceof Error ? err.message : String(err)}, message: ""` };
    }
  }
  if (handler.httpGet) {
    const get = handler.httpGet;
    const fail = (error: string): HookOutcome => ({ ok: false, message: `HTTP lifecycle hook (${get.path ?? ''}) ${who} failed - error: ${error}` });
    const host = get.host || target.podIP;
    if (!host) return fail('failed to find networking container: the pod has no IP');
    const port = resolvePort(get.port, target.container);
    if (port === undefined) return fail(`couldn't find port: ${String(get.port)} in container ${target.container.name}`);
    const answer = await sendHttpGet(get, host, port, { timeoutMs: options.timeoutMs, userAgent: 'kube-lifecycle/minik8s', signal });
    if ('error' in answer) return fail(signal.aborted ? `Get "${answer.url}": ${reasonOf(signal)}` : answer.error);
    return { ok: true, message: '' };
  }
  if (handler.sleep) {
    const seconds = handler.sleep.seconds;
    if (await sleep(options.clock, seconds * 1000, signal)) return { ok: true, message: '' };
    return {
      ok: false,
      message: `Sleep lifecycle hook (${seconds}) ${who} failed - error: container terminated before sleep hook finished (${reasonOf(signal)})`,
    };
  }
  const what = handler.tcpSocket ? 'tcpSocket is not supported as a lifecycle handler' : 'no handler type is set';
  return { ok: false, message: `Cannot run handler: invalid handler: ${what}` };
}

/**
 * The grace period left for SIGTERM once preStop hooks took `elapsedMs` of it, as the kubelet's
 * killContainer computes it: whole seconds used are taken off, and a container always gets at
 * least MIN_GRACE_SECONDS to shut down, even when the hooks used up everything.
 */
export function graceAfterPreStop(graceSeconds: number, elapsedMs: number): number {
  return Math.max(MIN_GRACE_SECONDS, graceSeconds - Math.floor(elapsedMs / 1000));
}

export interface PreStopResult {
  /** What is left of the grace period for SIGTERM: unchanged when no hook ran. */
  graceSeconds: number;
  /** Hooks that failed (not those cut short by the grace period, which Kubernetes does not report either). */
  failures: { container: string; message: string }[];
}

export interface LifecycleHooksOptions {
  provider: PodProvider;
  clock?: Clock;
  /** The kubelet's: once aborted, running hooks are cut short and their callers throw rather than stop containers. */
  signal?: AbortSignal;
  /**
   * A postStart hook still running after this long has failed (default 2 minutes). Kubernetes waits
   * for ever; here a pod's syncs are serialised, so one stuck hook would hold its pod (its deletion
   * too) for good.
   */
  postStartLimitMs?: number;
  log?: (message: string) => void;
}

export const DEFAULT_POST_START_LIMIT_MS = 120_000;

/** Thrown when the kubelet stops while a hook runs: the sync is abandoned, and the next kubelet does it again. */
export class KubeletStoppingError extends Error {
  constructor() {
    super('the kubelet is stopping');
    this.name = 'KubeletStoppingError';
  }
}

/** Runs the hooks of a pod's containers through the pod provider, with the limits the kubelet puts on them. */
export class LifecycleHooks {
  readonly #o: LifecycleHooksOptions;
  readonly #clock: Clock;

  constructor(options: LifecycleHooksOptions) {
    this.#o = options;
    this.#clock = options.clock ?? systemClock;
  }

  /** Runs the container's postStart hook, if it has one; resolves undefined when there is none. */
  async postStart(pod: Pod, container: Container, podIP: string | undefined): Promise<HookOutcome | undefined> {
    const handler = container.lifecycle?.postStart;
    if (!handler) return undefined;
    const limitMs = this.#o.postStartLimitMs ?? DEFAULT_POST_START_LIMIT_MS;
    return this.#run(pod, container, handler, podIP, limitMs, `the hook did not complete within ${limitMs / 1000} s`);
  }

  /**
   * Runs the preStop hooks of the named containers that have one and are running, side by side,
   * for at most the grace period (a grace period of 0, a forced stop, runs none), and says how much
   * of it is left for SIGTERM.
   */
  async preStop(pod: Pod, runtime: RuntimePod | undefined, names: readonly string[], graceSeconds: number): Promise<PreStopResult> {
    const due = pod.spec.containers.filter(
      (c) => names.includes(c.name) && c.lifecycle?.preStop && runtime?.containers.some((rc) => rc.name === c.name && rc.state === 'running'),
    );
    if (graceSeconds <= 0 || due.length === 0) return { graceSeconds, failures: [] };
    const started = this.#clock.now();
    const limitMs = graceSeconds * 1000;
    const outcomes = await Promise.all(
      due.map(async (c) => ({
        container: c.name,
        outcome: await this.#run(pod, c, c.lifecycle!.preStop!, runtime?.sandbox.ip, limitMs, `the grace period of ${graceSeconds} s ran out`),
      })),
    );
    const elapsedMs = this.#clock.now() - started;
    const failures: PreStopResult['failures'] = [];
    for (const { container, outcome } of outcomes) {
      if (outcome.ok) continue;
      if (elapsedMs >= limitMs) {
        this.#o.log?.(
          `kubelet: preStop hook of container ${container} in pod ${pod.metadata.namespace}/${pod.metadata.name} did not complete in ${graceSeconds} s`,
        );
      } else {
        failures.push({ container, message: outcome.message });
      }
    }
    return { graceSeconds: graceAfterPreStop(graceSeconds, elapsedMs), failures };
  }

  async #run(pod: Pod, container: Container, handler: LifecycleHandler, podIP: string | undefined, limitMs: number, limitReason: string): Promise<HookOutcome> {
    const kubelet = this.#o.signal;
    if (kubelet?.aborted) throw new KubeletStoppingError();
    const cut = new AbortController();
    const cancelTimer = this.#clock.setTimer(limitMs, () => cut.abort(new Error(limitReason)));
    const onStop = () => cut.abort(new Error('the kubelet is stopping'));
    kubelet?.addEventListener('abort', onStop, { once: true });
    const ref = { uid: pod.metadata.uid!, namespace: pod.metadata.namespace!, name: pod.metadata.name! };
    try {
      const outcome = await runLifecycleHook(
        handler,
        {
          pod,
          container,
          podIP,
          exec: (command, timeoutMs) => this.#o.provider.exec(ref, container.name, command, { timeoutMs }),
        },
        { clock: this.#clock, signal: cut.signal, timeoutMs: limitMs },
      );
      if (kubelet?.aborted) throw new KubeletStoppingError();
      return outcome;
    } finally {
      cancelTimer();
      kubelet?.removeEventListener('abort', onStop);
    }
  }
}
