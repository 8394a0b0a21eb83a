// Stops what a role started in reverse order, each part by its own abort signal, so later parts never outlive earlier ones.

export interface ShutdownSequenceOptions {
  log: (message: string) => void;
}

interface Step {
  name: string;
  stop: () => Promise<unknown>;
}

export class ShutdownSequence {
  readonly #log: (message: string) => void;
  readonly #controllers = new Map<string, AbortController>();
  readonly #steps: Step[] = [];

  constructor(options: ShutdownSequenceOptions) {
    this.#log = options.log;
  }

  /** A signal that aborts when the sequence reaches the part called `name`. */
  signalFor(name: string): AbortSignal {
    let c = this.#controllers.get(name);
    if (!c) {
      c = new AbortController();
      this.#controllers.set(name, c);
    }
    return c.signal;
  }

  /** Registers how to wait for `name` to stop; parts stop in the reverse order of registration. */
  push(name: string, stop: () => Promise<unknown>): void {
    this.#steps.push({ name, stop });
  }

  untilAborted(signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      if (signal.aborted) resolve();
      else signal.addEventListener('abort', () => resolve(), { once: true });
    });
  }

  /** Stops every registered part, last first; a part that fails to stop is logged and the rest still stop. */
  async run(): Promise<void> {
    while (this.#steps.length) {
      const step = this.#steps.pop()!;
      this.#controllers.get(step.name)?.abort();
      try {
        await step.stop();
      } catch (err) {
        this.#log(`warning: stopping ${step.name} failed: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
    // Parts that were given a signal but never registered (their start failed) are told to stop too.
    for (const c of this.#controllers.values()) c.abort();
  }
}
