// When a call cannot be served and waiting would not help: the current version failed to build, or every pod of it cannot load its handler or keeps exiting. The activator answers such calls at once with the reason and the version.
import type { Pod } from '../../core/api/pod.js';

/** The parts of a Function's status the decision reads. */
export interface FunctionStatusView {
  version?: number;
  build?: { version: number; phase: string; message?: string };
}

/** An answer instead of a wait: HTTP code, Status reason, the version it is about, and what went wrong. */
export interface CallFailure {
  code: number;
  reason: 'BuildFailed' | 'FunctionFailed';
  version?: number;
  message: string;
  /** The build's whole message (its output's last lines) when it has more than the first line. */
  detail?: string;
}

/**
 * The build of the function's current version failed and no earlier version serves: 503 (no
 * Retry-After: a retry cannot help until new code or a new build request comes). While a version
 * serves, a newer one that failed to build changes nothing for calls, as Knative keeps routing to
 * the last ready revision.
 */
export function buildFailure(name: string, status: FunctionStatusView | undefined): CallFailure | undefined {
  const build = status?.build;
  if (status?.version !== undefined || build?.phase !== 'Failed') return undefined;
  const text = (build.message ?? 'the build failed').trim();
  const [first, ...rest] = text.split('\n');
  return {
    code: 503,
    reason: 'BuildFailed',
    version: build.version,
    message: `function ${name} version ${build.version} failed to build: ${first}`,
    ...(rest.length ? { detail: text } : {}),
  };
}

/** What failed pods of the current version say, when every one of them has failed (undefined while any may still come good). */
export function startFailure(name: string, version: number | undefined, podMessages: readonly (string | undefined)[]): CallFailure | undefined {
  if (podMessages.length === 0 || podMessages.some((m) => m === undefined)) return undefined;
  return {
    code: 502,
    reason: 'FunctionFailed',
    ...(version !== undefined ? { version } : {}),
    message: `function ${name}${version !== undefined ? ` version ${version}` : ''} cannot start: ${podMessages[0]}`,
  };
}

/**
 * Why a function pod's runtime is down, when it has exited and is not running now (terminated,
 * or waiting in CrashLoopBackOff after an exit): its exit code and reason, with the termination
 * message when the runtime left one. A pod being deleted is not crashing.
 */
export function podCrash(pod: Pod): string | undefined {
  if (pod.metadata.deletionTimestamp) return undefined;
  const s = pod.status?.containerStatuses?.find((c) => c.name === pod.spec.containers[0]?.name);
  if (!s || s.state?.running) return undefined;
  const t = s.state?.terminated ?? (s.state?.waiting ? s.lastState?.terminated : undefined);
  if (!t) return undefined;
  const message = (t.message ?? '').trim();
  const backoff = s.state?.waiting?.reason === 'CrashLoopBackOff' ? `, restarted ${s.restartCount ?? 0} times` : '';
  const fn = pod.metadata.labels?.['minik8s.io/function'];
  const more = message ? `: ${message}` : fn ? `; its output: minik8s function logs ${fn}` : '';
  return `the runtime exited with code ${t.exitCode} (${t.reason ?? 'Error'}${backoff})${more}`;
}

/** `handler.py line 3`: the innermost frame of a Python traceback, where the error was raised. */
export function tracebackWhere(traceback: string | undefined): string | undefined {
  if (!traceback) return undefined;
  const frames = [...traceback.matchAll(/^\s*File "([^"]+)", line (\d+)/gm)];
  const last = frames.at(-1);
  if (!last) return undefined;
  const file = last[1]!.replace(/^\/app\/function\//, '');
  return `${file} line ${last[2]}`;
}
