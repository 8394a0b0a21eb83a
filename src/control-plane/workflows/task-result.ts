// A function's HTTP answer as a Task result: the output, or the error name Retry and Catch match and its cause.
import type { TaskResult } from './interpreter.js';

/** How much of an unexpected answer's text goes into a cause. */
const MAX_CAUSE_CHARS = 4096;

/** `ValueError: bad input` -> `ValueError`; dotted names (`requests.exceptions.HTTPError`) too. */
const ERROR_TYPE = /^([A-Za-z_][A-Za-z0-9_.]*)(?::|$)/;

function parseJson(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false };
  }
}

function clip(text: string): string {
  return text.length > MAX_CAUSE_CHARS ? `${text.slice(0, MAX_CAUSE_CHARS)}...` : text;
}

/**
 * 2xx: the body as JSON (empty: null; text that is not JSON: the text). A handler that raised (the
 * runtime's 500 `{"error": "ValueError: bad", "traceback": ...}`) fails with its exception's type
 * as the error name, so `ErrorEquals: ["ValueError"]` catches it, and States.TaskFailed covers it
 * as well; the cause is the exception's message. 504 (the function's timeout passed) is
 * States.Timeout; any other answer is States.TaskFailed with the status and message as cause.
 */
export function taskResultFromResponse(status: number, body: Buffer | string): TaskResult {
  const text = typeof body === 'string' ? body : body.toString('utf8');
  const parsed = text.trim() === '' ? { ok: true as const, value: null } : parseJson(text);
  if (status >= 200 && status < 300) return { ok: true, output: parsed.ok ? parsed.value : text };
  const obj = parsed.ok && parsed.value !== null && typeof parsed.value === 'object' ? (parsed.value as Record<string, unknown>) : undefined;
  const message = typeof obj?.error === 'string' ? obj.error : typeof obj?.message === 'string' ? obj.message : text.trim();
  if (status === 504) return { ok: false, error: 'States.Timeout', cause: clip(message || 'the function did not answer in time') };
  if (status === 500 && typeof obj?.error === 'string' && typeof obj.traceback === 'string') {
    const type = ERROR_TYPE.exec(obj.error)?.[1];
    return { ok: false, error: type ?? 'States.TaskFailed', cause: clip(obj.error) };
  }
  return { ok: false, error: 'States.TaskFailed', cause: clip(`HTTP ${status}${message ? `: ${message}` : ''}`) };
}
