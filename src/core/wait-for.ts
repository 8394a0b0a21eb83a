// Waits for a condition with a deadline: how tests and bootstrap code synchronise without sleeps.

export interface WaitForOptions {
  timeoutMs?: number;
  intervalMs?: number;
  /** Said in the timeout error: what was being waited for. */
  description?: string;
  signal?: AbortSignal;
}

/** Polls `check` until it returns a truthy value (returned) or the deadline passes (throws). */
export async function waitFor<T>(check: () => T | Promise<T>, options: WaitForOptions = {}): Promise<NonNullable<T>> {
  const timeoutMs = options.timeoutMs ?? 10_000;
  const intervalMs = options.intervalMs ?? 20;
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value) return value as NonNullable<T>;
    } catch (err) {
      lastError = err;
    }
    if (options.signal?.aborted) throw new Error(`aborted while waiting for ${options.description ?? 'a condition'}`);
    if (Date.now() >= deadline) {
      const why = lastError instanceof Error ? `: ${lastError.message}` : '';
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${options.description ?? 'a condition'}${why}`, { cause: lastError });
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
