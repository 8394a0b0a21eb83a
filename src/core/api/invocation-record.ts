// A function call as the activator records it and the API serves it (`.../functions/NAME/invocations`).

/** What started a call. */
export type InvocationTrigger = 'http' | 'workflow' | 'schedule';

export interface InvocationRecord {
  id: string;
  namespace: string;
  function: string;
  /** The version of the pod that answered; absent when none did. */
  version?: number;
  trigger: InvocationTrigger;
  /** RFC 3339, when the activator received the call. */
  start: string;
  durationMs: number;
  /** The call waited for a pod to start. */
  coldStart: boolean;
  /** HTTP status answered (the function's, or the activator's own 502/503/504). */
  status: number;
  pod?: string;
  /** The handler's return value (parsed JSON), for successful calls. */
  result?: unknown;
  /** `ValueError: message` for a handler that raised; the activator's reason for its own failures. */
  error?: string;
  traceback?: string;
  stdout?: string;
  stderr?: string;
}
