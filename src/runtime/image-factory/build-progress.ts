// Reads Docker's build stream: the step it is at (for status.build), the last output lines (plain text), and a failure turned into a message people can act on.
import { failingLine, stripAnsi, terminalLine } from './clean-output.js';

/** One JSON message of Docker's build (or push) stream. */
export interface DockerStreamEvent {
  stream?: string;
  status?: string;
  id?: string;
  error?: string;
  errorDetail?: { code?: number; message?: string };
  aux?: { ID?: string; Digest?: string; Tag?: string };
}

/** How many output lines a failure message quotes. */
export const QUOTED_LINES = 12;
const KEPT_LINES = 200;

/** pip's ways of saying that no index could be reached (urllib3, requests and resolver wording). */
const UNREACHABLE = [
  /NewConnectionError/,
  /Failed to establish a new connection/,
  /Temporary failure in name resolution/,
  /Name or service not known/,
  /No address associated with hostname/,
  /Network is unreachable/,
  /No route to host/,
  /Connection refused/,
  /ConnectTimeoutError/,
  /Read timed out/,
  /Could not fetch URL/,
  /ProxyError/,
  /connection timed out/i,
];

export class BuildLog {
  /** `3/7 RUN python3 -m pip install ...`, once Docker has said which step it is at. */
  step: string | undefined;
  #stepInstruction = '';
  #lines: string[] = [];
  #partial = '';
  error: string | undefined;
  errorCode: number | undefined;
  imageId: string | undefined;

  /** Feeds one stream message; returns true when the step changed. */
  feed(event: DockerStreamEvent): boolean {
    if (event.aux?.ID) this.imageId = event.aux.ID;
    if (event.error || event.errorDetail?.message) {
      this.error = stripAnsi(event.errorDetail?.message ?? event.error ?? '').trim();
      this.errorCode = event.errorDetail?.code;
    }
    if (typeof event.stream !== 'string') return false;
    let changed = false;
    const text = this.#partial + event.stream;
    const parts = text.split('\n');
    this.#partial = parts.pop() ?? '';
    for (const raw of parts) {
      // What a terminal would have shown: pip's colours and progress redraws must not reach status or the CLI.
      const line = terminalLine(raw);
      const m = /^Step (\d+)\/(\d+) : (.*)$/.exec(line);
      if (m) {
        this.#stepInstruction = m[3]!;
        const instruction = m[3]!.length > 100 ? `${m[3]!.slice(0, 100)}...` : m[3]!;
        this.step = `${m[1]}/${m[2]} ${instruction}`;
        changed = true;
        // What a failure quotes is the failing step's own output.
        this.#lines = [];
        continue;
      }
      if (line.trim() !== '') this.#lines.push(line);
    }
    if (this.#lines.length > KEPT_LINES) this.#lines.splice(0, this.#lines.length - KEPT_LINES);
    return changed;
  }

  /** The current step's last output lines (Docker's own ` ---> ` bookkeeping left out). */
  lastLines(n = QUOTED_LINES): string[] {
    const partial = terminalLine(this.#partial);
    const all = [...this.#lines, ...(partial.trim() ? [partial] : [])];
    return all.filter((l) => !/^ ---> /.test(l) && !/^Removing intermediate container/.test(l)).slice(-n);
  }

  /** True when the step that failed is the requirements' pip install. */
  get failedInPip(): boolean {
    return /^RUN .*\bpip install\b/.test(this.#stepInstruction);
  }

  /** The message for a failed build (the Function's Built condition and the CLI show it); its first line names the failing line, the rest quotes the step's last output. */
  failureMessage(): string {
    const quoted = this.lastLines()
      .map((l) => `  ${l}`)
      .join('\n');
    if (this.failedInPip) {
      const lines = this.lastLines(KEPT_LINES);
      const text = lines.join('\n');
      const exit = /returned a non-zero code: (\d+)/.exec(this.error ?? '')?.[1];
      const why = failingLine(lines);
      if (UNREACHABLE.some((re) => re.test(text))) {
        return `requirements could not be installed: no package index reachable (set --pip-index-url on the master, or PIP_INDEX_URL or a pip.conf where it runs, to an index it can reach, or put the packages in the function's code)${why ? `: ${why}` : ''}; pip said:\n${quoted}`;
      }
      return `requirements could not be installed: pip failed${exit ? ` (exit code ${exit})` : ''}${why ? `: ${why}` : ''}\n${quoted}`;
    }
    const at = this.step ? ` at step ${this.step}` : '';
    return `the image build failed${at}: ${this.error ?? 'unknown error'}${quoted ? `\n${quoted}` : ''}`;
  }
}

/**
 * Limits how often progress is written: at most once per interval, the latest value winning,
 * with a last write when the build ends (flush). Writes never overlap.
 */
export class ProgressThrottle<T> {
  readonly #write: (value: T) => Promise<void>;
  readonly #intervalMs: number;
  readonly #now: () => number;
  #last = -Infinity;
  #pending: { value: T } | undefined;
  #timer: NodeJS.Timeout | undefined;
  #inFlight: Promise<void> = Promise.resolve();

  constructor(options: { write: (value: T) => Promise<void>; intervalMs?: number; now?: () => number }) {
    this.#write = options.write;
    this.#intervalMs = options.intervalMs ?? 500;
    this.#now = options.now ?? Date.now;
  }

  push(value: T): void {
    this.#pending = { value };
    if (this.#timer) return;
    const wait = this.#last + this.#intervalMs - this.#now();
    if (wait <= 0) this.#send();
    else this.#timer = setTimeout(() => this.#send(), wait);
  }

  #send(): void {
    this.#timer = undefined;
    const pending = this.#pending;
    if (!pending) return;
    this.#pending = undefined;
    this.#last = this.#now();
    // Progress is best effort: a failed write is replaced by the next one.
    this.#inFlight = this.#inFlight.then(() => this.#write(pending.value)).catch(() => {});
  }

  /** Drops what is pending and waits for the write in flight. */
  async close(): Promise<void> {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#pending = undefined;
    await this.#inFlight;
  }
}
