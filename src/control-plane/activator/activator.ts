// The activator: owns the functions' and workflows' URLs, proxies calls to function pods (holding them through a cold start), records every call, and drives the function autoscaler.
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { KubeObject } from '../../core/api/meta.js';
import { podKind, type Pod } from '../../core/api/pod.js';
import { kindByResource } from '../../core/api/registry.js';
import { replicaSetKind, type ReplicaSet } from '../../core/api/replicaset.js';
import type { Client } from '../../core/client/client.js';
import type { InformerFactory } from '../../core/controller/informer-factory.js';
import { LABEL_INDEX, objectKey, type Informer } from '../../core/controller/informer.js';
import { ApiError, toApiError } from '../../core/errors.js';
import { getOrCreate } from '../../core/get-or-create.js';
import type { Store } from '../../core/store/store.js';
import { recordEvent } from '../reconcilers/record-event.js';
import { parseActivatorUrl } from '../../core/api/activator-paths.js';
import { FunctionConcurrency } from './concurrency.js';
import { buildFailure, startFailure, type CallFailure, type FunctionStatusView } from './fail-fast.js';
import { FunctionAutoscaler, type ScaleChange } from './function-autoscaler.js';
import { FUNCTION_LABEL, needsProbe, pickPod, podFacts, servingPods, VERSION_LABEL, type PodFacts, type ProbeView } from './function-pods.js';
import { HealthProber } from './health-prober.js';
import { HeldRequests } from './held-requests.js';
import type { InvocationRecord } from '../../core/api/invocation-record.js';
import { InvocationLog } from './invocation-records.js';
import type { FunctionInvoker, InvokeRequest, InvokeResult } from './invoker.js';
import type { KpaTuning, ScaleSettings } from './kpa.js';
import { SCALE_EVENT_COMPONENT, scaleMessage, scaleReason } from './scale-events.js';
import { forward, UpstreamError, UpstreamPool } from './upstream.js';
import { applyListenerLimits, defaultListenerLimits, type ListenerTls, listenerServeOptions } from '../../core/lifecycle/listener-limits.js';

/** The parts of a Function (minik8s.io/v1) the activator reads; the schema itself is the function kind's. */
export interface FunctionView extends KubeObject {
  spec?: {
    scaling?: { target?: number; minScale?: number; maxScale?: number; idleGraceSeconds?: number };
    timeoutSeconds?: number;
  };
  status?: FunctionStatusView;
}

/** The contract's WorkflowRunner (src/control-plane/workflows/runner.ts), as far as the activator calls it. */
export interface WorkflowRunnerLike {
  run(o: { namespace: string; name: string; input: unknown; signal?: AbortSignal }): Promise<{
    executionName: string;
    status: 'SUCCEEDED' | 'FAILED' | 'TIMED_OUT';
    output?: unknown;
    error?: string;
    cause?: string;
  }>;
}

export const DEFAULT_SCALING: ScaleSettings = { target: 10, minScale: 0, maxScale: 10, idleGraceMs: 30_000 };
export const DEFAULT_TIMEOUT_SECONDS = 60;
/** Request bodies above this are refused with 413 (Lambda's synchronous payload limit). */
export const MAX_REQUEST_BYTES = 6 * 1024 * 1024;
/** What the record keeps of a result or an error body. */
const RECORD_TEXT_LIMIT = 4096;

/** Headers that belong to one connection, not to the request (RFC 9110 7.6.1), and our own capture headers. */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'te',
  'trailer',
  'upgrade',
  'proxy-authorization',
  'proxy-authenticate',
  'host',
  'content-length',
]);
const CAPTURE_HEADERS = new Set(['x-minik8s-stdout', 'x-minik8s-stderr', 'x-minik8s-duration-ms', 'x-minik8s-invocation-id']);

export interface ActivatorOptions {
  /** Scale writes and the autoscaler's Events. */
  client: Client;
  /** Where the Function, Pod and ReplicaSet informers come from (the process starts them). */
  informers: InformerFactory;
  /** Where invocation records are kept: under their own etcd prefix, not API objects, so no Client reaches them. */
  store: Store;
  address: string;
  port: number;
  /** Serve HTTPS with this certificate (signed by the cluster CA); absent: plain HTTP (the master's --insecure-http). */
  tls?: ListenerTls;
  log?: (message: string) => void;
  /** Requests held per function while it has no pod (default 100). */
  holdCapacity?: number;
  /** How long a held request waits for a pod before a 503 (default 60 s: a first pull of the image on a node takes a while). */
  coldStartTimeoutMs?: number;
  autoscalerTickMs?: number;
  tuning?: Partial<KpaTuning>;
  /** Invocation records kept per function (default 200). */
  recordsPerFunction?: number;
  recordsFlushMs?: number;
}

function functionSettings(fn: FunctionView): ScaleSettings {
  const s = fn.spec?.scaling ?? {};
  return {
    target: s.target && s.target > 0 ? s.target : DEFAULT_SCALING.target,
    minScale: s.minScale ?? DEFAULT_SCALING.minScale,
    maxScale: s.maxScale ?? DEFAULT_SCALING.maxScale,
    idleGraceMs: (s.idleGraceSeconds ?? DEFAULT_SCALING.idleGraceMs / 1000) * 1000,
  };
}

/** A Status-shaped JSON body for the activator's own answers, with the invocation id when there is one. */
function statusBody(code: number, reason: string, message: string, extra: Record<string, unknown> = {}): Buffer {
  return Buffer.from(JSON.stringify({ apiVersion: 'v1', kind: 'Status', metadata: {}, status: 'Failure', message, reason, code, ...extra }));
}

function decodeCapture(value: string | string[] | undefined): string | undefined {
  if (typeof value !== 'string' || !value) return undefined;
  return Buffer.from(value, 'base64').toString('utf8');
}

function cutText(text: string): string {
  return text.length <= RECORD_TEXT_LIMIT ? text : `${text.slice(0, RECORD_TEXT_LIMIT)}... (cut)`;
}

function requestBody(body: unknown): { data: Buffer; json: boolean } {
  if (body === undefined) return { data: Buffer.alloc(0), json: false };
  if (Buffer.isBuffer(body)) return { data: body, json: false };
  if (typeof body === 'string') return { data: Buffer.from(body), json: false };
  return { data: Buffer.from(JSON.stringify(body)), json: true };
}

interface CallOutcome {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
  pod?: PodFacts;
  /** The version an answer of the activator's own is about (no pod took the call). */
  version?: number;
  /** The activator's own reason, when it answered itself. */
  error?: string;
}

export class Activator implements FunctionInvoker {
  readonly records: InvocationLog;
  readonly autoscaler: FunctionAutoscaler;
  readonly #client: Client;
  readonly #o: ActivatorOptions;
  readonly #log: (message: string) => void;
  readonly #functions?: Informer<FunctionView>;
  readonly #pods: Informer<Pod>;
  readonly #replicaSets: Informer<ReplicaSet>;
  /** function key -> pod key -> facts. */
  readonly #podsByFunction = new Map<string, Map<string, PodFacts>>();
  readonly #podByUid = new Map<string, PodFacts>();
  readonly #probedHealthy = new Set<string>();
  readonly #everKubeletReady = new Set<string>();
  /** Pods whose runtime said its handler cannot load, with what it said. */
  readonly #failedPods = new Map<string, string>();
  readonly #inFlightByPod = new Map<string, number>();
  readonly #concurrency = new Map<string, FunctionConcurrency>();
  readonly #held: HeldRequests;
  readonly #pool = new UpstreamPool();
  readonly #prober: HealthProber;
  readonly #probes: ProbeView;
  #workflows?: WorkflowRunnerLike;
  #server?: http.Server;
  #turn = 0;

  constructor(options: ActivatorOptions) {
    this.#o = options;
    this.#client = options.client;
    this.#log = options.log ?? (() => {});
    this.#held = new HeldRequests({ capacity: options.holdCapacity });
    this.#probes = { probedHealthy: this.#probedHealthy, everKubeletReady: this.#everKubeletReady };
    this.records = new InvocationLog({ store: options.store, limit: options.recordsPerFunction, flushMs: options.recordsFlushMs, log: this.#log });
    const functionKind = kindByResource('minik8s.io', 'v1', 'functions');
    if (functionKind) {
      // Shared with the process's other components: cached objects are never changed here.
      this.#functions = options.informers.informer<FunctionView>(functionKind);
      this.#functions.addHandlers({
        onAdd: (fn) => this.#functionChanged(objectKey(fn)),
        onUpdate: (_old, fn) => this.#functionChanged(objectKey(fn)),
        onDelete: (fn) => this.#functionDeleted(fn),
      });
    } else {
      this.#log('activator: the Function kind is not registered; every function URL answers 404');
    }
    this.#pods = options.informers.informer<Pod>(podKind);
    this.#pods.addHandlers({
      onAdd: (pod) => this.#podChanged(pod),
      onUpdate: (_old, pod) => this.#podChanged(pod),
      onDelete: (pod) => this.#podDeleted(pod),
    });
    this.#replicaSets = options.informers.informer<ReplicaSet>(replicaSetKind);
    // A function's first ReplicaSet appearing (its build done) while calls wait: scale it now, not at the next tick.
    const rsChanged = (rs: ReplicaSet) => {
      const fn = rs.metadata.labels?.[FUNCTION_LABEL];
      const key = fn ? `${rs.metadata.namespace}/${fn}` : undefined;
      if (key && this.#held.count(key) > 0) void this.autoscaler.poke(key);
    };
    this.#replicaSets.addHandlers({ onAdd: rsChanged, onUpdate: (_old, rs) => rsChanged(rs) });
    this.#prober = new HealthProber({
      onHealthy: (uid) => {
        this.#probedHealthy.add(uid);
        const pod = this.#podByUid.get(uid);
        if (pod) this.#held.wake(pod.functionKey);
      },
      onFailed: (uid, message) => {
        this.#failedPods.set(uid, message);
        const pod = this.#podByUid.get(uid);
        if (!pod) return;
        this.#log(`activator: ${pod.functionKey}: pod ${pod.key} cannot serve: ${message}`);
        if (pod.version === this.#currentVersion(pod.functionKey)) this.#held.fail(pod.functionKey, message);
      },
    });
    this.autoscaler = new FunctionAutoscaler({
      view: {
        functionKeys: () => this.#functions?.list().map((fn) => objectKey(fn)) ?? [],
        settings: (key) => {
          const fn = this.#functions?.get(key);
          return fn ? functionSettings(fn) : undefined;
        },
        readyPods: (key) => this.#serving(key).length,
        currentReplicaSet: (key) => this.#currentReplicaSet(key),
        concurrency: (key) => this.#concurrencyOf(key),
      },
      scale: async (rs, replicas) => {
        // What PATCH .../replicasets/NAME/scale does (a merge patch of spec.replicas), without the HTTP round trip.
        return (await this.#client.patch(replicaSetKind, { namespace: rs.metadata.namespace, name: rs.metadata.name! }, { spec: { replicas } })) as ReplicaSet;
      },
      onScaled: (change) => this.#scaled(change),
      tickMs: options.autoscalerTickMs,
      tuning: options.tuning,
      log: this.#log,
    });
  }

  /** Requests held for a function now, waiting for a pod. */
  heldRequests(namespace: string, name: string): number {
    return this.#held.count(`${namespace}/${name}`);
  }

  /** Mounts the workflow runner at /workflow/NAME (it calls functions through this activator). */
  setWorkflowRunner(runner: WorkflowRunnerLike): void {
    this.#workflows = runner;
  }

  /** Binds the port; rejects with the listen error (EADDRINUSE ...) so the master can report it. */
  async listen(): Promise<{ port: number }> {
    // The API server's limits: a connection cap under the fd limit, headers within 10 s, whole requests within 120 s.
    const limits = defaultListenerLimits();
    // HTTPS with the cluster CA's certificate unless the master runs --insecure-http; the same serve options as the API's.
    const { createServer, serverOptions } = listenerServeOptions(limits, this.#o.tls);
    const handler = (req: http.IncomingMessage, res: http.ServerResponse) => void this.#handle(req, res);
    const server: http.Server = createServer ? createServer(serverOptions, handler) : http.createServer(serverOptions, handler);
    applyListenerLimits(server, limits);
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.#o.port, this.#o.address, () => {
        server.off('error', reject);
        resolve();
      });
    });
    this.#server = server;
    return { port: (server.address() as { port: number }).port };
  }

  /** Runs the autoscaler and the records' writer until `signal` (the informers are the factory's, started by the process); then closes the server. */
  async start(signal: AbortSignal): Promise<void> {
    const loading = this.records
      .load()
      .catch((err) => this.#log(`activator: cannot read stored invocation records: ${err instanceof Error ? err.message : String(err)}`));
    const running = [this.autoscaler.start(signal), loading.then(() => this.records.start(signal)), this.#sweepRecords(signal, loading)];
    await new Promise<void>((resolve) => (signal.aborted ? resolve() : signal.addEventListener('abort', () => resolve(), { once: true })));
    this.#prober.close();
    this.#held.close();
    await new Promise<void>((resolve) => {
      const server = this.#server;
      if (!server) return resolve();
      // Calls in flight get a few seconds to finish; a function's own timeout may be minutes.
      const force = setTimeout(() => server.closeAllConnections(), 5_000);
      server.close(() => {
        clearTimeout(force);
        resolve();
      });
      server.closeIdleConnections();
    });
    this.#pool.close();
    await Promise.all(running);
  }

  /** Calls a function: the HTTP trigger's path and the FunctionInvoker of workflows and schedules. */
  async invoke(req: InvokeRequest): Promise<InvokeResult> {
    const { data, json } = requestBody(req.body);
    const headers: Record<string, string> = { ...(req.headers ?? {}) };
    if (json && !Object.keys(headers).some((h) => h.toLowerCase() === 'content-type')) headers['content-type'] = 'application/json';
    return this.#call({
      namespace: req.namespace,
      name: req.name,
      method: req.method ?? 'POST',
      path: req.path ?? '/',
      query: req.query ?? '',
      headers,
      body: data,
      trigger: req.trigger ?? 'http',
      signal: req.signal,
    });
  }

  // ---- calls ----

  async #call(c: {
    namespace: string;
    name: string;
    method: string;
    path: string;
    query: string;
    headers: Record<string, string | string[] | undefined>;
    body: Buffer;
    trigger: InvocationRecord['trigger'];
    signal?: AbortSignal;
  }): Promise<InvokeResult> {
    const started = Date.now();
    const invocationId = randomBytes(8).toString('hex');
    const key = `${c.namespace}/${c.name}`;
    const fn = this.#functions?.get(key);
    if (!fn) {
      return {
        status: 404,
        invocationId,
        headers: { 'content-type': 'application/json' },
        body: statusBody(404, 'NotFound', `functions.minik8s.io "${c.name}" not found in namespace "${c.namespace}"`, {
          details: { name: c.name, group: 'minik8s.io', kind: 'functions' },
        }),
      };
    }
    const conc = this.#concurrencyOf(key);
    conc.begin();
    let coldStart = false;
    let outcome: CallOutcome;
    try {
      ({ outcome, coldStart } = await this.#route(c, key, fn, invocationId));
    } finally {
      conc.end();
    }
    // Recorded first: the record takes the captured output out of the headers the caller gets.
    this.records.add(this.#record({ c, invocationId, started, coldStart, outcome }));
    const headers: Record<string, string> = { ...outcome.headers, 'x-minik8s-invocation-id': invocationId, 'x-minik8s-cold-start': String(coldStart) };
    const version = outcome.pod?.version ?? outcome.version;
    if (version !== undefined) headers['x-minik8s-version'] = String(version);
    return { status: outcome.status, headers, body: outcome.body, invocationId };
  }

  /** Picks a pod (holding the call through a cold start), sends, and retries a refused connection once elsewhere. */
  async #route(
    c: {
      method: string;
      path: string;
      query: string;
      headers: Record<string, string | string[] | undefined>;
      body: Buffer;
      name: string;
      signal?: AbortSignal;
    },
    key: string,
    fn: FunctionView,
    invocationId: string,
  ): Promise<{ outcome: CallOutcome; coldStart: boolean }> {
    const deadline = Date.now() + (this.#o.coldStartTimeoutMs ?? 60_000);
    const timeoutMs = (fn.spec?.timeoutSeconds ?? DEFAULT_TIMEOUT_SECONDS) * 1000;
    const exclude = new Set<string>();
    let coldStart = false;
    let retried = false;
    const headers = this.#upstreamHeaders(c.headers, invocationId);
    const path = c.query ? `${c.path}?${c.query}` : c.path;
    for (;;) {
      const serving = servingPods(this.#podsOf(key), this.#probes, this.#currentVersion(key));
      const pod = pickPod(serving, (k) => this.#inFlightByPod.get(k) ?? 0, this.#turn++, exclude);
      if (!pod) {
        // Waiting would not help (a failed build, pods that cannot load or keep exiting): say why now.
        const failure = this.#failure(key, c.name);
        if (failure) return { outcome: this.#failed(failure, invocationId), coldStart };
        if (serving.length === 0) {
          if (!coldStart && this.#held.count(key) === 0) this.#concurrencyOf(key).restartWindow();
          coldStart = true;
        }
        const waitMs = deadline - Date.now();
        if (waitMs <= 0)
          return { outcome: this.#own(503, 'ServiceUnavailable', `function ${c.name} has no pod ready to serve yet; try again`, invocationId, 1), coldStart };
        // After a refusal with no other pod to go to: look again shortly, without the exclusion.
        const held = this.#held.hold(key, exclude.size ? Math.min(waitMs, 250) : waitMs, c.signal);
        if (!held)
          return {
            outcome: this.#own(
              503,
              'ServiceUnavailable',
              `function ${c.name} has ${this.#held.capacity} requests waiting for a pod already; try again`,
              invocationId,
              1,
            ),
            coldStart,
          };
        void this.autoscaler.poke(key);
        const result = await held;
        if (result.type === 'aborted')
          return { outcome: this.#own(499, 'ClientClosedRequest', 'the caller went away while the call waited for a pod', invocationId), coldStart };
        if (result.type === 'failed') {
          const failure = this.#failure(key, c.name) ?? startFailure(c.name, this.#currentVersion(key), [result.message])!;
          return { outcome: this.#failed(failure, invocationId), coldStart };
        }
        if (result.type === 'closing')
          return { outcome: this.#own(503, 'ServiceUnavailable', 'the activator is stopping; try again', invocationId, 1), coldStart };
        if (result.type === 'deadline' && exclude.size === 0) {
          return { outcome: this.#own(503, 'ServiceUnavailable', `function ${c.name} has no pod ready to serve yet; try again`, invocationId, 1), coldStart };
        }
        exclude.clear();
        continue;
      }
      this.#inFlightByPod.set(pod.key, (this.#inFlightByPod.get(pod.key) ?? 0) + 1);
      try {
        const res = await forward({
          agent: this.#pool.agent(pod.key),
          ip: pod.ip!,
          port: pod.port,
          method: c.method,
          path,
          headers,
          body: c.body,
          timeoutMs,
          signal: c.signal,
        });
        const out: Record<string, string> = {};
        for (const [h, v] of Object.entries(res.headers)) {
          if (v === undefined || HOP_BY_HOP.has(h)) continue;
          out[h] = Array.isArray(v) ? v.join(', ') : v;
        }
        return { outcome: { status: res.status, headers: out, body: res.body, pod }, coldStart };
      } catch (err) {
        const e = err instanceof UpstreamError ? err : new UpstreamError('other', String(err), false, err);
        if (e.retryable && !retried) {
          retried = true;
          exclude.add(pod.key);
          this.#log(`activator: ${key}: ${e.message}; trying another pod`);
          continue;
        }
        if (e.failure === 'timeout')
          return { outcome: { ...this.#own(504, 'Timeout', `function ${c.name} did not answer within ${timeoutMs / 1000} s`, invocationId), pod }, coldStart };
        if (e.failure === 'aborted') return { outcome: { ...this.#own(499, 'ClientClosedRequest', 'the caller went away', invocationId), pod }, coldStart };
        return { outcome: { ...this.#own(502, 'BadGateway', `function ${c.name}: ${e.message}`, invocationId), pod }, coldStart };
      } finally {
        const n = (this.#inFlightByPod.get(pod.key) ?? 1) - 1;
        if (n > 0) this.#inFlightByPod.set(pod.key, n);
        else this.#inFlightByPod.delete(pod.key);
      }
    }
  }

  #own(code: number, reason: string, message: string, invocationId: string, retryAfterSeconds?: number): CallOutcome {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (retryAfterSeconds !== undefined) headers['retry-after'] = String(retryAfterSeconds);
    const details = retryAfterSeconds !== undefined ? { retryAfterSeconds } : undefined;
    return { status: code, headers, body: statusBody(code, reason, message, { ...(details ? { details } : {}), invocationId }), error: message };
  }

  #failed(f: CallFailure, invocationId: string): CallOutcome {
    const outcome = this.#own(f.code, f.reason, f.message, invocationId);
    if (f.detail) {
      // The build's output (its last lines) goes with the answer, as a Status cause.
      const body = JSON.parse(outcome.body.toString('utf8')) as Record<string, unknown>;
      body.details = { causes: [{ reason: f.reason, message: f.detail }] };
      outcome.body = Buffer.from(JSON.stringify(body));
    }
    return { ...outcome, ...(f.version !== undefined ? { version: f.version } : {}) };
  }

  #upstreamHeaders(incoming: Record<string, string | string[] | undefined>, invocationId: string): http.OutgoingHttpHeaders {
    const out: http.OutgoingHttpHeaders = {};
    for (const [h, v] of Object.entries(incoming)) {
      const name = h.toLowerCase();
      if (v === undefined || HOP_BY_HOP.has(name) || CAPTURE_HEADERS.has(name)) continue;
      out[name] = v;
    }
    out['x-minik8s-invocation-id'] = invocationId;
    return out;
  }

  #record(o: {
    c: { namespace: string; name: string; trigger: InvocationRecord['trigger'] };
    invocationId: string;
    started: number;
    coldStart: boolean;
    outcome: CallOutcome;
  }): InvocationRecord {
    const { outcome } = o;
    const record: InvocationRecord = {
      id: o.invocationId,
      namespace: o.c.namespace,
      function: o.c.name,
      trigger: o.c.trigger,
      start: new Date(o.started).toISOString(),
      durationMs: Date.now() - o.started,
      coldStart: o.coldStart,
      status: outcome.status,
    };
    if (outcome.pod) {
      record.version = outcome.pod.version;
      record.pod = outcome.pod.key.slice(outcome.pod.key.indexOf('/') + 1);
    } else if (outcome.version !== undefined) record.version = outcome.version;
    if (outcome.error !== undefined) {
      record.error = outcome.error;
    } else {
      const text = outcome.body.toString('utf8');
      let parsed: unknown;
      try {
        parsed = text ? JSON.parse(text) : undefined;
      } catch {
        parsed = undefined;
      }
      if (outcome.status < 400) {
        record.result = parsed !== undefined && text.length <= RECORD_TEXT_LIMIT ? parsed : cutText(text);
      } else {
        const body = parsed as { error?: unknown; traceback?: unknown } | undefined;
        record.error = typeof body?.error === 'string' ? body.error : cutText(text) || `HTTP ${outcome.status}`;
        if (typeof body?.traceback === 'string') record.traceback = body.traceback;
      }
    }
    const stdout = decodeCapture(outcome.headers['x-minik8s-stdout']);
    const stderr = decodeCapture(outcome.headers['x-minik8s-stderr']);
    if (stdout) record.stdout = stdout;
    if (stderr) record.stderr = stderr;
    // The captures are for the record, not the caller.
    delete outcome.headers['x-minik8s-stdout'];
    delete outcome.headers['x-minik8s-stderr'];
    return record;
  }

  // ---- the HTTP server ----

  async #handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = req.url ?? '/';
    if (url === '/healthz') return void res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
    const target = parseActivatorUrl(url);
    if (!target) {
      return void res
        .writeHead(404, { 'content-type': 'application/json' })
        .end(statusBody(404, 'NotFound', `no such path ${url.split('?')[0]}: call /function/NAME or /workflow/NAME (or /namespaces/NS/function/NAME)`));
    }
    const caller = new AbortController();
    res.on('close', () => {
      if (!res.writableFinished) caller.abort();
    });
    let body: Buffer;
    try {
      body = await readBody(req, MAX_REQUEST_BYTES);
    } catch (err) {
      const tooLarge = (err as Error).message === 'too large';
      return void res
        .writeHead(tooLarge ? 413 : 400, { 'content-type': 'application/json', connection: 'close' })
        .end(
          statusBody(
            tooLarge ? 413 : 400,
            tooLarge ? 'RequestEntityTooLarge' : 'BadRequest',
            tooLarge ? `the request body is larger than ${MAX_REQUEST_BYTES} bytes` : 'the request body could not be read',
          ),
        );
    }
    try {
      if (target.type === 'workflow') {
        const r = await this.#runWorkflow(target.namespace, target.name, body, caller.signal);
        return void res.writeHead(r.status, r.headers).end(r.body);
      }
      const result = await this.#call({
        namespace: target.namespace,
        name: target.name,
        method: req.method ?? 'POST',
        path: target.subPath,
        query: target.query,
        headers: req.headers,
        body,
        trigger: 'http',
        signal: caller.signal,
      });
      res.writeHead(result.status, result.headers).end(result.body);
    } catch (err) {
      const e = toApiError(err);
      this.#log(`activator: ${url}: ${e.message}`);
      if (!res.headersSent) res.writeHead(e.code, { 'content-type': 'application/json' }).end(JSON.stringify(e.toStatus()));
      else res.destroy();
    }
  }

  async #runWorkflow(
    namespace: string,
    name: string,
    body: Buffer,
    signal: AbortSignal,
  ): Promise<{ status: number; headers: Record<string, string>; body: Buffer | string }> {
    const json = { 'content-type': 'application/json' };
    if (!this.#workflows) return { status: 501, headers: json, body: statusBody(501, 'NotImplemented', 'this master runs no workflow runner') };
    let input: unknown = {};
    const text = body.toString('utf8');
    if (text.trim()) {
      try {
        input = JSON.parse(text);
      } catch {
        return { status: 400, headers: json, body: statusBody(400, 'BadRequest', "a workflow's input must be JSON") };
      }
    }
    try {
      const r = await this.#workflows.run({ namespace, name, input, signal });
      const headers = { ...json, 'x-minik8s-execution': r.executionName };
      if (r.status === 'SUCCEEDED') return { status: 200, headers, body: JSON.stringify(r.output ?? null) };
      return { status: 500, headers, body: JSON.stringify({ error: r.error ?? r.status, cause: r.cause, execution: r.executionName, status: r.status }) };
    } catch (err) {
      const e = err instanceof ApiError ? err : toApiError(err);
      return { status: e.code, headers: json, body: JSON.stringify(e.toStatus()) };
    }
  }

  // ---- caches ----

  #concurrencyOf(key: string): FunctionConcurrency {
    return getOrCreate(this.#concurrency, key, () => new FunctionConcurrency({ keepMs: this.autoscaler?.tuning.stableWindowMs ?? 60_000 }));
  }

  #podsOf(key: string): PodFacts[] {
    const pods = this.#podsByFunction.get(key);
    return pods ? [...pods.values()] : [];
  }

  #serving(key: string): PodFacts[] {
    return servingPods(this.#podsOf(key), this.#probes, this.#currentVersion(key));
  }

  /** The version now serving or being rolled to: the Function's status, else the newest ReplicaSet's. */
  #currentVersion(key: string): number | undefined {
    const fn = this.#functions?.get(key);
    if (fn?.status?.version) return fn.status.version;
    let newest: number | undefined;
    for (const rs of this.#replicaSetsOf(key)) {
      const v = Number(rs.metadata.labels?.[VERSION_LABEL] ?? 0);
      if (v && (newest === undefined || v > newest)) newest = v;
    }
    return newest;
  }

  #replicaSetsOf(key: string): ReplicaSet[] {
    const slash = key.indexOf('/');
    const ns = key.slice(0, slash);
    const name = key.slice(slash + 1);
    // The label index holds the function's ReplicaSets in every namespace: no scan of all ReplicaSets.
    return this.#replicaSets.byIndex(LABEL_INDEX, `${FUNCTION_LABEL}=${name}`).filter((rs) => rs.metadata.namespace === ns && !rs.metadata.deletionTimestamp);
  }

  #currentReplicaSet(key: string): ReplicaSet | undefined {
    const version = this.#currentVersion(key);
    if (version === undefined) return undefined;
    return this.#replicaSetsOf(key).find((rs) => Number(rs.metadata.labels?.[VERSION_LABEL] ?? 0) === version);
  }

  /** Why no call can be served now, when waiting would not help: the build failed, or every pod of the current version cannot load its handler or has exited. */
  #failure(key: string, name: string): CallFailure | undefined {
    const built = buildFailure(name, this.#functions?.get(key)?.status);
    if (built) return built;
    const version = this.#currentVersion(key);
    const pods = this.#podsOf(key).filter((p) => p.version === version && !p.deleting && !p.finished);
    return startFailure(
      name,
      version,
      pods.map((p) => this.#failedPods.get(p.uid) ?? p.crash),
    );
  }

  #functionChanged(key: string): void {
    // A new version, or new settings: held requests may have somewhere to go now, and the scale may change.
    if (this.#held.count(key) > 0) {
      this.#held.wake(key);
      void this.autoscaler.poke(key);
    }
  }

  #functionDeleted(fn: FunctionView): void {
    const key = objectKey(fn);
    this.#held.fail(key, 'the function was deleted');
    this.#concurrency.delete(key);
    this.autoscaler.forget(key);
    this.records
      .forget(fn.metadata.namespace ?? 'default', fn.metadata.name!)
      .catch((err) => this.#log(`activator: ${key}: cannot remove its invocation records: ${err instanceof Error ? err.message : String(err)}`));
  }

  #podChanged(pod: Pod): void {
    const facts = podFacts(pod);
    if (!facts) return;
    const pods = getOrCreate(this.#podsByFunction, facts.functionKey, () => new Map());
    const old = pods.get(facts.key);
    if (old && old.uid !== facts.uid) this.#forgetPod(old);
    pods.set(facts.key, facts);
    this.#podByUid.set(facts.uid, facts);
    if (facts.kubeletReady) this.#everKubeletReady.add(facts.uid);
    if (facts.deleting || facts.finished) this.#pool.drop(facts.key);
    this.#syncProbes();
    if (this.#held.count(facts.functionKey) > 0 && this.#serving(facts.functionKey).length > 0) this.#held.wake(facts.functionKey);
    // Its runtime exited (a crash at import the runtime could not catch): held calls are told now if no pod of the version can serve.
    else if (facts.crash && this.#held.count(facts.functionKey) > 0 && facts.version === this.#currentVersion(facts.functionKey)) {
      const slash = facts.functionKey.indexOf('/');
      const failure = this.#failure(facts.functionKey, facts.functionKey.slice(slash + 1));
      if (failure) this.#held.wake(facts.functionKey);
    }
  }

  #podDeleted(pod: Pod): void {
    const facts = podFacts(pod);
    if (!facts) return;
    const pods = this.#podsByFunction.get(facts.functionKey);
    if (pods?.get(facts.key)?.uid === facts.uid) pods.delete(facts.key);
    if (pods?.size === 0) this.#podsByFunction.delete(facts.functionKey);
    this.#forgetPod(facts);
    this.#syncProbes();
  }

  #forgetPod(p: PodFacts): void {
    this.#podByUid.delete(p.uid);
    this.#probedHealthy.delete(p.uid);
    this.#everKubeletReady.delete(p.uid);
    this.#failedPods.delete(p.uid);
    this.#pool.drop(p.key);
  }

  #syncProbes(): void {
    const targets = [];
    for (const pods of this.#podsByFunction.values()) {
      for (const p of pods.values()) if (needsProbe(p, this.#probes)) targets.push({ uid: p.uid, ip: p.ip!, port: p.port });
    }
    this.#prober.sync(targets);
  }

  #scaled(change: ScaleChange): void {
    const fn = this.#functions?.get(change.functionKey);
    if (!fn) return;
    void recordEvent(
      {
        client: this.#client,
        object: fn,
        type: 'Normal',
        reason: scaleReason(change),
        component: SCALE_EVENT_COMPONENT,
        message: scaleMessage(change),
      },
      this.#log,
    );
  }

  /** Records of functions deleted while the master was down go once the caches are in. */
  async #sweepRecords(signal: AbortSignal, loaded: Promise<unknown>): Promise<void> {
    if (!this.#functions) return;
    const synced = this.#functions.whenSynced();
    await Promise.race([Promise.all([synced, loaded]), new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }))]);
    if (signal.aborted) return;
    for (const key of this.records.keys()) {
      if (this.#functions.get(key)) continue;
      const slash = key.indexOf('/');
      await this.records.forget(key.slice(0, slash), key.slice(slash + 1)).catch(() => {});
    }
  }
}

function readBody(req: http.IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        req.pause();
        reject(new Error('too large'));
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)));
    req.on('error', reject);
  });
}
