// API request accounting (Kubernetes' apiserver_request_total, with the client added): counters by verb, group, resource, subresource, client and code, as Prometheus text.

/** One counted kind of request. `client` is the authenticated user, or the name of an in-process component. */
export interface RequestLabels {
  verb: string;
  group: string;
  resource: string;
  subresource: string;
  client: string;
  /** The HTTP status code the request was answered with (for an in-process call, the one it would have had): 409s are lost races. */
  code: string;
}

export interface RequestCount extends RequestLabels {
  value: number;
}

export const REQUEST_METRIC = 'apiserver_request_total';

/** The label order of every line, as written and as read back. */
const LABEL_NAMES = ['verb', 'group', 'resource', 'subresource', 'client', 'code'] as const;

/** Counted into when the map is full: paths of unknown resources must not grow the map without bound. */
const OVERFLOW: RequestLabels = { verb: 'overflow', group: 'overflow', resource: 'overflow', subresource: 'overflow', client: 'overflow', code: 'overflow' };

/** Writes: the verbs that change state (the ones a well-behaved controller spends sparingly). */
export const WRITE_VERBS: ReadonlySet<string> = new Set(['create', 'update', 'patch', 'delete', 'deletecollection']);

export interface RequestCounterOptions {
  /** Distinct label sets kept before the rest are counted as one overflow series (default 50,000: 1,000 clients of 50 kinds of request). */
  maxSeries?: number;
}

/**
 * A map of counters, one per label set. Counting is one string concatenation and one map
 * lookup, cheap enough for every request; nothing is ever removed (counters only grow, as
 * Prometheus expects), so a scraper takes deltas between two reads.
 */
export class RequestCounter {
  readonly #series = new Map<string, RequestCount>();
  readonly #maxSeries: number;

  constructor(options: RequestCounterOptions = {}) {
    this.#maxSeries = options.maxSeries ?? 50_000;
  }

  add(labels: RequestLabels, n = 1): void {
    const { verb, group, resource, subresource, client, code } = labels;
    const key = `${verb}\0${group}\0${resource}\0${subresource}\0${client}\0${code}`;
    let entry = this.#series.get(key);
    if (!entry) {
      const full = this.#series.size >= this.#maxSeries;
      if (full) {
        this.#addOverflow(n);
        return;
      }
      entry = { verb, group, resource, subresource, client, code, value: 0 };
      this.#series.set(key, entry);
    }
    entry.value += n;
  }

  #addOverflow(n: number): void {
    // One separator where real keys have five: never equal to one of them.
    const key = '\0overflow';
    let entry = this.#series.get(key);
    if (!entry) {
      entry = { ...OVERFLOW, value: 0 };
      this.#series.set(key, entry);
    }
    entry.value += n;
  }

  /** Copies of every counter, sorted by their labels. */
  snapshot(): RequestCount[] {
    return [...this.#series.values()].map((e) => ({ ...e })).sort(compareLabels);
  }
}

function compareLabels(a: RequestLabels, b: RequestLabels): number {
  for (const name of LABEL_NAMES) {
    if (a[name] !== b[name]) return a[name] < b[name] ? -1 : 1;
  }
  return 0;
}

/** Prometheus' label value escaping: backslash, double quote and line feed. */
function escapeLabel(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}

/** The counters in Prometheus' text exposition format (version 0.0.4). */
export function renderRequestMetrics(counts: readonly RequestCount[]): string {
  const lines = [
    `# HELP ${REQUEST_METRIC} API requests by verb, API group, resource, subresource, client (the authenticated user, or the master's in-process component) and HTTP status code.`,
    `# TYPE ${REQUEST_METRIC} counter`,
  ];
  for (const c of counts) {
    const labels = LABEL_NAMES.map((name) => `${name}="${escapeLabel(c[name])}"`).join(',');
    lines.push(`${REQUEST_METRIC}{${labels}} ${c.value}`);
  }
  return `${lines.join('\n')}\n`;
}

const LINE = new RegExp(`^${REQUEST_METRIC}\\{(.*)\\} (\\S+)$`);
const LABEL = /([a-z_]+)="((?:[^"\\]|\\.)*)"/g;

/** Reads apiserver_request_total lines back from Prometheus text (other metrics and comments are skipped). */
export function parseRequestMetrics(text: string): RequestCount[] {
  const out: RequestCount[] = [];
  for (const line of text.split('\n')) {
    const m = LINE.exec(line);
    if (!m) continue;
    const labels: Record<string, string> = {};
    for (const l of m[1]!.matchAll(LABEL)) labels[l[1]!] = l[2]!.replace(/\\(.)/g, (_, ch: string) => (ch === 'n' ? '\n' : ch));
    out.push({
      verb: labels.verb ?? '',
      group: labels.group ?? '',
      resource: labels.resource ?? '',
      subresource: labels.subresource ?? '',
      client: labels.client ?? '',
      code: labels.code ?? '',
      value: Number(m[2]),
    });
  }
  return out;
}

/** What was counted between two reads: `after` less `before`, series by series, zero deltas left out. */
export function requestDeltas(before: readonly RequestCount[], after: readonly RequestCount[]): RequestCount[] {
  const key = (c: RequestLabels) => LABEL_NAMES.map((n) => c[n]).join('\0');
  const old = new Map(before.map((c) => [key(c), c.value]));
  const out: RequestCount[] = [];
  for (const c of after) {
    const value = c.value - (old.get(key(c)) ?? 0);
    if (value !== 0) out.push({ ...c, value });
  }
  return out;
}
