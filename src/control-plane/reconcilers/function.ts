// The function controller's shell: informers on Functions, FunctionVersions and ReplicaSets, planFunction's actions applied, and the image builds it starts.
import { isDeepStrictEqual } from 'node:util';
import { functionKind, type FunctionObject } from '../../core/api/function.js';
import { functionVersionKind, type FunctionVersion, type FunctionVersionStatus } from '../../core/api/function-version.js';
import { replicaSetKind, type ReplicaSet } from '../../core/api/replicaset.js';
import { timestamp } from '../../core/api/timestamp.js';
import type { Client } from '../../core/client/client.js';
import { runController } from '../../core/controller/controller.js';
import { objectKey, OWNER_UID_INDEX, type Informer } from '../../core/controller/informer.js';
import type { InformerFactory } from '../../core/controller/informer-factory.js';
import { WorkQueue } from '../../core/controller/work-queue.js';
import { AlreadyExistsError, ConflictError, NotFoundError } from '../../core/errors.js';
import { ProgressThrottle } from '../../runtime/image-factory/build-progress.js';
import { BuildError, type BuiltImage, type BuildRequest } from '../../runtime/image-factory/image-factory.js';
import { planFunction, type FunctionAction, type FunctionEvent } from './function-plan.js';
import { recordEvent } from './record-event.js';
import { controllerRef } from './replicaset.js';

/** What the controller needs of the image factory (a fake in unit tests). */
export interface FunctionImageBuilder {
  readonly templateHash: string;
  build(request: BuildRequest): Promise<BuiltImage>;
  /** Releases what the builder holds (the image factory's registry forwarder); called when the controller stops. */
  close?(): Promise<void>;
}

export interface FunctionControllerOptions {
  client: Client;
  /** The process's shared informers: Functions, and FunctionVersions and ReplicaSets read through their owner index. */
  informers: InformerFactory;
  builder: FunctionImageBuilder;
  /** `http://ADDRESS:PORT`: the activator as clients reach it; a function's URL is this plus /function/NAME. */
  activatorUrl?: string;
  /** How often a build's progress is written (default 500 ms). */
  progressIntervalMs?: number;
  /** A build taking longer than this fails (default 15 minutes). */
  buildTimeoutMs?: number;
  log?: (message: string) => void;
  workers?: number;
  now?: () => Date;
}

/** The HTTP trigger of a function: `/function/NAME` in the default namespace, `/namespaces/NS/function/NAME` elsewhere. */
export function functionUrl(base: string | undefined, namespace: string, name: string): string | undefined {
  if (!base) return undefined;
  const root = base.replace(/\/+$/, '');
  return namespace === 'default' ? `${root}/function/${name}` : `${root}/namespaces/${namespace}/function/${name}`;
}

/**
 * The merge patch that turns `from` into `to`: keys `to` no longer has become null (a plain
 * merge patch would keep them: a finished build's step, an old message), objects recurse,
 * everything else is replaced.
 */
export function replacingPatch(from: unknown, to: unknown): unknown {
  const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
  if (!isObject(from) || !isObject(to)) return to;
  const patch: Record<string, unknown> = {};
  for (const key of Object.keys(from)) if (!(key in to)) patch[key] = null;
  for (const [key, value] of Object.entries(to)) patch[key] = replacingPatch(from[key], value);
  return patch;
}

interface RunningBuild {
  abort: AbortController;
  functionUid: string;
}

export class FunctionController {
  readonly functions: Informer<FunctionObject>;
  readonly versions: Informer<FunctionVersion>;
  readonly replicaSets: Informer<ReplicaSet>;
  readonly queue = new WorkQueue();
  readonly #client: Client;
  readonly #builder: FunctionImageBuilder;
  readonly #log: (message: string) => void;
  readonly #now: () => Date;
  readonly #options: FunctionControllerOptions;
  /** Builds running in this process, by FunctionVersion key (`ns/NAME-vN`). */
  readonly #builds = new Map<string, RunningBuild>();
  readonly #buildsDone = new Set<Promise<void>>();

  constructor(options: FunctionControllerOptions) {
    this.#options = options;
    this.#client = options.client;
    this.#builder = options.builder;
    this.#log = options.log ?? (() => {});
    this.#now = options.now ?? (() => new Date());
    this.functions = options.informers.informer<FunctionObject>(functionKind);
    this.versions = options.informers.informer<FunctionVersion>(functionVersionKind);
    this.replicaSets = options.informers.informer<ReplicaSet>(replicaSetKind);
    const enqueue = (fn: FunctionObject) => this.queue.add(objectKey(fn));
    this.functions.addHandlers({
      onAdd: enqueue,
      onUpdate: (_old, fn) => enqueue(fn),
      onDelete: (fn) => this.#functionGone(fn),
    });
    // A version's or ReplicaSet's change concerns the Function that controls it.
    const owned = (obj: FunctionVersion | ReplicaSet) => {
      const ref = controllerRef(obj);
      if (ref?.kind === 'Function') this.queue.add(`${obj.metadata.namespace}/${ref.name}`);
    };
    this.versions.addHandlers({ onAdd: owned, onUpdate: (_o, v) => owned(v), onDelete: owned });
    this.replicaSets.addHandlers({ onAdd: owned, onUpdate: (_o, rs) => owned(rs), onDelete: owned });
  }

  /** Builds of a deleted function are not worth finishing. */
  #functionGone(fn: FunctionObject): void {
    for (const [key, build] of this.#builds) {
      if (build.functionUid === fn.metadata.uid) build.abort.abort(new Error(`function ${fn.metadata.name} was deleted (build ${key})`));
    }
  }

  async start(signal: AbortSignal): Promise<void> {
    signal.addEventListener(
      'abort',
      () => {
        for (const build of this.#builds.values()) build.abort.abort(new Error('the master is stopping'));
      },
      { once: true },
    );
    // The informers are started by the process's factory; the workers wait for them.
    await runController(
      {
        name: 'function',
        queue: this.queue,
        informers: [this.functions, this.versions, this.replicaSets],
        reconcile: (key) => this.reconcile(key),
        workers: this.#options.workers ?? 2,
        log: this.#log,
      },
      signal,
    );
    // A stopping master waits for its builds to notice (they record nothing more once aborted).
    await Promise.allSettled([...this.#buildsDone]);
    await this.#builder.close?.();
  }

  /** What `fn` controls, from the owner index. */
  #ownedBy<T extends FunctionVersion | ReplicaSet>(informer: Informer<T>, fn: FunctionObject): T[] {
    return informer
      .byIndex(OWNER_UID_INDEX, fn.metadata.uid!)
      .filter((o) => o.metadata.namespace === fn.metadata.namespace && controllerRef(o)?.uid === fn.metadata.uid);
  }

  async #event(fn: FunctionObject, e: FunctionEvent): Promise<void> {
    await recordEvent(
      { client: this.#client, object: fn, type: e.type, reason: e.reason, message: e.message, component: 'function-controller', now: this.#now() },
      this.#log,
    );
  }

  async reconcile(key: string): Promise<{ requeueAfterMs?: number } | void> {
    const fn = this.functions.get(key);
    if (!fn) return;
    const namespace = fn.metadata.namespace!;
    const building = new Set([...this.#builds.keys()].filter((k) => k.startsWith(`${namespace}/`)).map((k) => k.slice(namespace.length + 1)));
    const plan = planFunction(fn, {
      versions: this.#ownedBy(this.versions, fn),
      replicaSets: this.#ownedBy(this.replicaSets, fn),
      building,
      templateHash: this.#builder.templateHash,
      url: functionUrl(this.#options.activatorUrl, namespace, fn.metadata.name!),
      now: this.#now(),
    });
    let retry = false;
    for (const action of plan.actions) {
      try {
        await this.#apply(fn, action);
      } catch (err) {
        if (err instanceof AlreadyExistsError || err instanceof ConflictError || err instanceof NotFoundError) retry = true;
        else throw err;
      }
    }
    if (!isDeepStrictEqual(fn.status ?? {}, plan.status)) {
      try {
        await this.#client.patch(
          functionKind,
          { namespace, name: fn.metadata.name! },
          { status: replacingPatch(fn.status ?? {}, plan.status) },
          { subresource: 'status' },
        );
      } catch (err) {
        if (!(err instanceof NotFoundError || err instanceof ConflictError)) throw err;
      }
    }
    // A write that lost to a newer state (the cache is behind): look again once the informers caught up.
    if (retry) return { requeueAfterMs: 200 };
  }

  async #apply(fn: FunctionObject, action: FunctionAction): Promise<void> {
    const namespace = fn.metadata.namespace!;
    const key = objectKey(fn);
    switch (action.type) {
      case 'createVersion': {
        const name = (action.body.metadata as { name: string }).name;
        const created = (await this.#client.create(functionVersionKind, action.body, { namespace })) as FunctionVersion;
        this.#log(`function ${key}: created version ${created.spec.version}${action.build ? '' : ` (${action.status.message})`}`);
        for (const e of action.events) await this.#event(fn, e);
        if (action.build) this.#startBuild(fn, created, action.status.request);
        else await this.#writeVersionStatus(namespace, name, action.status);
        return;
      }
      case 'build':
        for (const e of action.events) await this.#event(fn, e);
        this.#startBuild(fn, action.version, action.request);
        return;
      case 'reuseImage':
        await this.#writeVersionStatus(namespace, action.version.metadata.name!, action.status);
        for (const e of action.events) await this.#event(fn, e);
        return;
      case 'createReplicaSet':
        await this.#client.create(replicaSetKind, action.body, { namespace });
        this.#log(
          `function ${key}: created replicaset ${(action.body.metadata as { name: string }).name} with ${(action.body.spec as { replicas: number }).replicas} replicas`,
        );
        return;
      case 'scale':
        await this.#client.patch(
          replicaSetKind,
          { namespace, name: action.rs.metadata.name! },
          { metadata: { resourceVersion: action.rs.metadata.resourceVersion }, spec: { replicas: action.replicas } },
        );
        this.#log(`function ${key}: scaled replicaset ${action.rs.metadata.name} to ${action.replicas}`);
        for (const e of action.events) await this.#event(fn, e);
        return;
      case 'deleteVersion':
        if (action.rs)
          await this.#client.delete(replicaSetKind, { namespace, name: action.rs.metadata.name! }, { preconditions: { uid: action.rs.metadata.uid } });
        await this.#client.delete(
          functionVersionKind,
          { namespace, name: action.version.metadata.name! },
          { preconditions: { uid: action.version.metadata.uid } },
        );
        this.#log(`function ${key}: deleted old version ${action.version.spec.version}`);
        return;
    }
  }

  async #writeVersionStatus(namespace: string, name: string, status: FunctionVersionStatus): Promise<void> {
    // A merge patch: null removes what the new phase no longer has (a failure's message when a retry starts).
    const patch: Record<string, unknown> = { step: null, message: null, completionTime: null, ...status };
    await this.#client.patch(functionVersionKind, { namespace, name }, { status: patch }, { subresource: 'status' });
  }

  /** Marks the version Building and runs the build in the background; its end is written to the version, which wakes the Function. */
  #startBuild(fn: FunctionObject, version: FunctionVersion, request: string | undefined): void {
    const namespace = fn.metadata.namespace!;
    const name = version.metadata.name!;
    const key = `${namespace}/${name}`;
    if (this.#builds.has(key)) return;
    const abort = new AbortController();
    this.#builds.set(key, { abort, functionUid: fn.metadata.uid! });
    const timeoutMs = this.#options.buildTimeoutMs ?? 15 * 60_000;
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      abort.abort(new BuildError(`the build took longer than ${Math.round(timeoutMs / 1000)} s`));
    }, timeoutMs);
    const started = this.#now();
    const done = (async () => {
      const progress = new ProgressThrottle<string>({
        intervalMs: this.#options.progressIntervalMs ?? 500,
        write: async (step) => {
          if (abort.signal.aborted) return;
          await this.#client.patch(functionVersionKind, { namespace, name }, { status: { step } }, { subresource: 'status' });
        },
      });
      let outcome: FunctionVersionStatus;
      let event: FunctionEvent;
      try {
        await this.#writeVersionStatus(namespace, name, { phase: 'Building', step: 'queued', ...(request ? { request } : {}), startTime: timestamp(started) });
        const built = await this.#builder.build({
          namespace,
          name: fn.metadata.name!,
          version: version.spec.version,
          spec: version.spec.template,
          buildHash: version.spec.buildHash,
          onProgress: (step) => progress.push(step),
          signal: abort.signal,
        });
        const seconds = ((this.#now().getTime() - started.getTime()) / 1000).toFixed(1);
        outcome = { phase: 'Succeeded', image: built.image, tag: built.tag, message: `built in ${seconds} s`, completionTime: timestamp(this.#now()) };
        event = { type: 'Normal', reason: 'BuildSucceeded', message: `Built version ${version.spec.version}: ${built.tag} in ${seconds} s` };
      } catch (err) {
        const message = err instanceof BuildError ? err.message : `the build failed: ${err instanceof Error ? err.message : String(err)}`;
        outcome = { phase: 'Failed', message, completionTime: timestamp(this.#now()) };
        event = { type: 'Warning', reason: 'BuildFailed', message: `Version ${version.spec.version}: ${message.split('\n')[0]}` };
      } finally {
        clearTimeout(timer);
        await progress.close();
      }
      // A master stopping mid-build leaves the version Building: the next start builds it again.
      if (abort.signal.aborted && !timedOut) {
        this.#log(`function ${namespace}/${fn.metadata.name}: build of version ${version.spec.version} stopped: ${outcome.message}`);
        return;
      }
      try {
        await this.#writeVersionStatus(namespace, name, { ...outcome, ...(request ? { request } : {}), startTime: timestamp(started) });
        await this.#event(fn, event);
        this.#log(`function ${namespace}/${fn.metadata.name}: ${event.message.split('\n')[0]}`);
      } catch (err) {
        if (!(err instanceof NotFoundError))
          this.#log(`function ${namespace}/${fn.metadata.name}: recording the build of version ${version.spec.version}: ${(err as Error).message}`);
      }
    })().finally(() => {
      this.#builds.delete(key);
      this.#buildsDone.delete(done);
      // The version's status change wakes the Function; this covers a write that failed.
      this.queue.add(objectKey(fn));
    });
    this.#buildsDone.add(done);
  }
}
