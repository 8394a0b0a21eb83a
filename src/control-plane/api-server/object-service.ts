// The API's verbs over the store, independent of HTTP: create, get, list, replace, patch, delete, watch.
import type { KindDefinition } from '../../core/api/kind.js';
import type { KubeObject } from '../../core/api/meta.js';
import { namespaceKind } from '../../core/api/namespace.js';
import { podKind, type Pod } from '../../core/api/pod.js';
import { persistentVolumeClaimKind } from '../../core/api/persistent-volume-claim.js';
import { storeKey, storePrefix } from '../../core/api/registry.js';
import { matchesFields, parseFieldSelector, type FieldRequirement } from '../../core/api/selector.js';
import { matches, parseSelector, type Selector } from '../../core/api/selector.js';
import { type FieldValidation, invalidError, validateObjectWith, validateUpdate } from '../../core/api/validate.js';
import { apiVersionOf } from '../../core/api/kind.js';
import { AlreadyExistsError, BadRequestError, ConflictError, ForbiddenError, GoneError, NotFoundError, TimeoutError, toApiError } from '../../core/errors.js';
import type { ListWatcher } from '../../core/controller/informer.js';
import { failedKey, type RawEntry, type SharedWatchEvent, type Store, type StoreEntry, type StoreOp, type StoreWatchEvent } from '../../core/store/store.js';
import { decodeContinue, encodeContinue } from './continue-token.js';
import { withDefaultTolerations } from './default-tolerations.js';
import { applyPatch, type PatchType } from './patch.js';
import { fieldValues, type PathKey } from '../../core/api/managed-fields/field-set.js';
import { readEntries, trackWrite, type ManagedFieldsEntry } from '../../core/api/managed-fields/managed-fields.js';
import { defaultPatchMeta } from '../../core/api/patch-meta.js';
import { applier, buildApplied, appliedFields, scopeOf } from './server-side-apply.js';
import { effectivePolicy, finalizersForDeletion, ownsDependents } from '../../core/api/deletion-propagation.js';
import { podGracePeriod } from './pod-deletion.js';
import { RequestCounter } from './request-metrics.js';
import type { AllocationHook } from './service-allocator.js';
import {
  generateNameSuffix,
  markDeleting,
  prepareCreate,
  prepareStatusUpdate,
  prepareUpdate,
  qualifiedResource,
  readyToRemove,
  reconcileIdentity,
  sameObject,
  withResourceVersion,
} from './objects.js';

/** Namespaces that always exist and may not be deleted. */
export const SYSTEM_NAMESPACES = ['default', 'kube-system', 'kube-node-lease'] as const;

export interface ListOptions {
  labelSelector?: string;
  fieldSelector?: string;
  /** At most this many items (a positive integer); the list then says how to continue. */
  limit?: number;
  /** A token from a previous page's metadata.continue. */
  continue?: string;
  /** The request's resourceVersion, which may not come with a continue token. */
  resourceVersion?: string;
}

/** Who a write is recorded under in metadata.managedFields. */
export interface ManagerOptions {
  /** The field manager; a client view's client name, else `unknown`, when absent. */
  fieldManager?: string;
  /** Server-side apply: the fields of the applied configuration (the write is then the manager's Apply). */
  applied?: ReadonlySet<PathKey>;
}

/** fieldValidation and where its warnings go (the response's Warning headers). */
export interface FieldValidationOptions {
  /** What becomes of unknown fields (default Strict: refused). */
  fieldValidation?: FieldValidation;
  /** Called with each warning of the write (an unknown field dropped under Warn). */
  onWarning?: (message: string) => void;
}

export interface WriteOptions extends ManagerOptions, FieldValidationOptions {
  /** `status` for writes to the /status subresource. */
  subresource?: string;
  /** dryRun=All: validated and admitted in full, nothing written; the answer is the object as it would be. */
  dryRun?: boolean;
}

export interface CreateOptions extends ManagerOptions, FieldValidationOptions {
  dryRun?: boolean;
}

/** Validates under the write's fieldValidation, reporting each dropped field under Warn as kube-apiserver words it. */
function validateForWrite(def: KindDefinition, input: unknown, options: FieldValidationOptions): KubeObject {
  const policy = options.fieldValidation ?? 'Strict';
  const { object, unknownFields } = validateObjectWith(def, input, policy);
  if (policy === 'Warn') for (const field of unknownFields) options.onWarning?.(`unknown field "${field}"`);
  return object;
}

export interface PatchOptions extends WriteOptions {
  /** How the patch reads (default: a JSON merge patch); `apply` is server-side apply. */
  patchType?: PatchType;
  /** Server-side apply: take the fields other managers own instead of answering 409. */
  force?: boolean;
}

export interface DeleteOptions {
  preconditions?: { uid?: string; resourceVersion?: string };
  propagationPolicy?: 'Background' | 'Foreground' | 'Orphan';
  /** Deprecated form of propagationPolicy: true is Orphan, false Background. */
  orphanDependents?: boolean;
  /** Pods on a node: how long the kubelet gives the containers; 0 removes the object at once. */
  gracePeriodSeconds?: number;
  /** dryRun=All: the object as the delete would leave it (or as it was, when it would go), nothing written. */
  dryRun?: boolean;
}

export interface WatchOptions extends ListOptions {
  /** Resume after this revision; undefined or '0' starts with ADDED events for every current object. */
  resourceVersion?: string;
  signal?: AbortSignal;
}

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED';

export interface ObjectWatchEvent {
  type: WatchEventType;
  object: KubeObject;
  revision: number;
  /** The store event every watcher of it shares (from the watch cache): the watch stream encodes it once for all. */
  shared?: SharedWatchEvent;
}

export interface ObjectList {
  items: KubeObject[];
  resourceVersion: string;
  /** ListMeta.continue: set when `limit` left items for a next page. */
  continue?: string;
  /** ListMeta.remainingItemCount: how many items follow, when known (lists without selectors). */
  remainingItemCount?: number;
}

/** One page of a list, objects still JSON text. */
interface ListPage {
  items: RawEntry[];
  revision: number;
  continue?: string;
  remainingItemCount?: number;
}

/** Kubernetes' message for a continue token whose revision has been compacted. */
export const EXPIRED_CONTINUE_MESSAGE =
  'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.';

/** A read-only view of namespaces kept current by a watch (an informer's cache). */
export interface NamespaceLookup {
  get(name: string): KubeObject | undefined;
}

export interface ObjectServiceOptions {
  store: Store;
  now?: () => Date;
  /**
   * Admission of new pods: the seconds of the not-ready and unreachable NoExecute tolerations
   * every pod gets unless it has its own (Kubernetes' DefaultTolerationSeconds); undefined adds none.
   */
  defaultTolerationSeconds?: number;
  /** Admission of new pods by other plugins (the service account's, serviceaccounts/admission.ts); may refuse with an ApiError. */
  admitPod?: (pod: Pod) => Promise<Pod>;
  /** Admission of new PersistentVolumeClaims (the default StorageClass, storage/storage-admission.ts). */
  admitClaim?: (claim: KubeObject) => Promise<KubeObject>;
  /** Kinds whose objects hold store records of their own (a Service's cluster IP and node ports), written with them atomically. */
  allocators?: ReadonlyMap<KindDefinition, AllocationHook>;
  /** Where the requests of this service's client views (forClient) are counted; a new counter when absent. */
  requests?: RequestCounter;
  /** Maintain metadata.managedFields on every write (default true; false only to measure what it costs). */
  managedFields?: boolean;
}

/** Unconditional writes (no resourceVersion from the client) retry store conflicts this many times. */
const MAX_RETRIES = 16;

/** Names tried for one create from generateName before its AlreadyExists reaches the client (Kubernetes tries 8). */
const GENERATE_NAME_ATTEMPTS = 8;

/** How long a read at a revision the store has not reached waits for it (kube-apiserver's watch cache waits 3 s). */
const FRESH_REVISION_WAIT_MS = 3000;

/**
 * A resourceVersion as a list or watch names it: '' or undefined for "now", else a decimal
 * revision. Number() alone would take `0x10`, `1e3` or ` 7` for revisions they are not.
 */
export function parseResourceVersion(rv: string | undefined): number | undefined {
  if (rv === undefined || rv === '') return undefined;
  if (!/^(0|[1-9][0-9]*)$/.test(rv) || !Number.isSafeInteger(Number(rv))) {
    throw new BadRequestError(`resourceVersion: Invalid value: ${JSON.stringify(rv)}: must be a non-negative decimal integer`);
  }
  return Number(rv);
}

/** metadata.resourceVersion of a write body: a string or absent; any other type would skip the precondition it asks for. */
function bodyResourceVersion(body: Record<string, unknown>): string | undefined {
  const meta = body.metadata;
  if (typeof meta !== 'object' || meta === null) return undefined;
  const rv = (meta as { resourceVersion?: unknown }).resourceVersion;
  if (rv === undefined || rv === null || rv === '') return undefined;
  if (typeof rv !== 'string') {
    throw new BadRequestError(`metadata.resourceVersion must be a string, not ${Array.isArray(rv) ? 'an array' : `a ${typeof rv}`}`);
  }
  return rv;
}

interface Filter {
  labels?: Selector;
  fields?: FieldRequirement[];
}

function parseFilter(def: KindDefinition, options: ListOptions): Filter {
  const filter: Filter = {};
  if (options.labelSelector) {
    try {
      filter.labels = parseSelector(options.labelSelector);
    } catch (err) {
      throw new BadRequestError(`unable to parse requirement: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
    }
  }
  if (options.fieldSelector) {
    let fields: FieldRequirement[];
    try {
      fields = parseFieldSelector(options.fieldSelector);
    } catch (err) {
      throw new BadRequestError(`invalid field selector: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
    }
    const allowed = new Set(['metadata.name', 'metadata.namespace', ...(def.fieldSelectors ?? [])]);
    for (const r of fields) {
      if (!allowed.has(r.field)) {
        throw new BadRequestError(`field label not supported: ${r.field}`);
      }
    }
    filter.fields = fields;
  }
  return filter;
}

/** A list that asks for a page (limit) or continues one. */
function isPaged(options: ListOptions): boolean {
  return (options.limit !== undefined && options.limit > 0) || Boolean(options.continue);
}

/** ListMeta of a page, in Kubernetes' field order. */
function listMeta(page: ListPage): Omit<ObjectList, 'items'> {
  return {
    resourceVersion: String(page.revision),
    ...(page.continue !== undefined ? { continue: page.continue } : {}),
    ...(page.remainingItemCount !== undefined ? { remainingItemCount: page.remainingItemCount } : {}),
  };
}

function passes(filter: Filter, obj: KubeObject): boolean {
  if (filter.labels && !matches(filter.labels, obj.metadata.labels ?? {})) return false;
  if (filter.fields && !matchesFields(filter.fields, obj)) return false;
  return true;
}

/**
 * What a selector of the kind can read of an object: its labels and its selectable fields, in
 * an object of the same shape (so `passes` reads it as it reads the whole one). Kubernetes' watch
 * cache keeps the same (GetAttrs) beside each object: filtering 500 watches' initial lists then
 * parses nothing, where parsing each object for each watcher made garbage enough to grow the
 * master by hundreds of MiB.
 */
function selectionAttrs(def: KindDefinition, obj: KubeObject): KubeObject {
  const view: Record<string, unknown> = { metadata: obj.metadata.labels ? { labels: obj.metadata.labels } : {} };
  for (const path of ['metadata.name', 'metadata.namespace', ...(def.fieldSelectors ?? [])]) {
    const parts = path.split('.');
    let from: unknown = obj;
    let to = view;
    for (let i = 0; i < parts.length; i++) {
      const part = parts[i]!;
      if (from === null || typeof from !== 'object' || !Object.hasOwn(from, part)) break;
      from = (from as Record<string, unknown>)[part];
      if (i === parts.length - 1) {
        to[part] = from;
      } else {
        to[part] ??= {};
        to = to[part] as Record<string, unknown>;
      }
    }
  }
  return view as unknown as KubeObject;
}

/** The selection attributes of a stored value, kept on the value the watch cache shares (made once for all readers). */
function storedAttrs(def: KindDefinition, json: string, shared: SharedWatchEvent | undefined): KubeObject {
  if (shared?.attrs !== undefined) return shared.attrs as KubeObject;
  const attrs = selectionAttrs(def, JSON.parse(json) as KubeObject);
  if (shared) shared.attrs = attrs;
  return attrs;
}

/** An ADDED event of a watch's initial list, from a listed value; its object is parsed only if read. */
function listedEvent(entry: RawEntry): ObjectWatchEvent {
  let object: KubeObject | undefined;
  return {
    type: 'ADDED',
    revision: entry.revision,
    shared: entry.shared,
    get object(): KubeObject {
      if (object === undefined) object = withResourceVersion(JSON.parse(entry.json) as KubeObject, entry.revision);
      return object;
    },
  };
}

/**
 * A watch event of the API from a store event. Its object (a copy with its resourceVersion) is
 * made only when read: a watch stream that sends the event's shared encoding never needs it.
 */
function objectEvent(type: WatchEventType, event: StoreWatchEvent<KubeObject>): ObjectWatchEvent {
  let object: KubeObject | undefined;
  return {
    type,
    revision: event.revision,
    shared: event.shared,
    get object(): KubeObject {
      if (object === undefined) object = withResourceVersion(event.value, event.revision);
      return object;
    },
  };
}

/** Stored objects begin `{"apiVersion":…,"kind":…,"metadata":{` (the schemas emit that order). */
const STORED_HEAD = /^\{"apiVersion":"[^"\\]*","kind":"[^"\\]*","metadata":\{/;

/** Adds metadata.resourceVersion to an object's JSON text without parsing it (parses if the shape is unexpected). */
export function stampJson(json: string, revision: number): string {
  const m = STORED_HEAD.exec(json);
  if (!m) {
    const obj = JSON.parse(json) as KubeObject;
    return JSON.stringify(withResourceVersion(obj, revision));
  }
  const rest = json.slice(m[0].length);
  return `${m[0]}"resourceVersion":"${revision}"${rest.startsWith('}') ? '' : ','}${rest}`;
}

export class ObjectService {
  readonly #store: Store;
  readonly #now: () => Date;
  readonly #defaultTolerationSeconds: number | undefined;
  readonly #admitPod: ((pod: Pod) => Promise<Pod>) | undefined;
  readonly #admitClaim: ((claim: KubeObject) => Promise<KubeObject>) | undefined;
  readonly #allocators: ReadonlyMap<KindDefinition, AllocationHook>;
  readonly #options: ObjectServiceOptions;
  /** Shared with every client view, so a cache set later on the service serves them too. */
  #shared: { namespaces?: NamespaceLookup } = {};
  readonly #requests: RequestCounter;
  /** Set on client views: the component whose calls are counted under this name. */
  #client: string | undefined;

  constructor(options: ObjectServiceOptions) {
    this.#options = options;
    this.#store = options.store;
    this.#now = options.now ?? (() => new Date());
    this.#defaultTolerationSeconds = options.defaultTolerationSeconds;
    this.#admitPod = options.admitPod;
    this.#admitClaim = options.admitClaim;
    this.#allocators = options.allocators ?? new Map();
    this.#requests = options.requests ?? new RequestCounter();
  }

  /**
   * The same service for one in-process component (a controller, the scheduler): its calls are
   * counted in `requests` under `client`, as the API server counts an HTTP request under its
   * user. The service itself counts nothing: the API server counts HTTP requests before they
   * reach it, and counting them here as well would count them twice.
   */
  forClient(client: string): ObjectService {
    const view = new ClientObjectService({ ...this.#options, requests: this.#requests });
    view.#shared = this.#shared;
    view.#client = client;
    return view;
  }

  /** The request counters (apiserver_request_total) shared by this service, its client views and the API server. */
  get requests(): RequestCounter {
    return this.#requests;
  }

  /** Counts one request under this client view's client (nothing on the service itself), with the HTTP code it ended with or would have. */
  recordRequest(verb: string, def: KindDefinition, subresource = '', code = 200): void {
    if (this.#client === undefined) return;
    this.#requests.add({ verb, group: def.group, resource: def.resource, subresource, client: this.#client, code: String(code) });
  }

  /**
   * Runs a request and counts it with the code it ended with (`ok`, or the error's). The client
   * views' verbs go through it; components that write past the service (the scheduler's binding,
   * straight to the store) wrap that write in it to be counted too.
   */
  async counted<T>(verb: string, def: KindDefinition, subresource: string | undefined, run: () => Promise<T>, ok = 200): Promise<T> {
    if (this.#client === undefined) return run();
    try {
      const result = await run();
      this.recordRequest(verb, def, subresource, ok);
      return result;
    } catch (err) {
      this.recordRequest(verb, def, subresource, toApiError(err).code);
      throw err;
    }
  }

  /**
   * Lets creates check their namespace in a watched cache instead of reading etcd each time
   * (half the round trips of a create). A namespace missing from the cache is still read from
   * the store, so one created a moment ago is never refused.
   */
  useNamespaceCache(lookup: NamespaceLookup): void {
    this.#shared.namespaces = lookup;
  }

  get store(): Store {
    return this.#store;
  }

  async get(def: KindDefinition, namespace: string | undefined, name: string): Promise<KubeObject> {
    const entry = await this.#read(def, namespace, name);
    return withResourceVersion(entry.value, entry.revision);
  }

  async list(def: KindDefinition, namespace: string | undefined, options: ListOptions = {}): Promise<ObjectList> {
    return this.#list(def, namespace, options);
  }

  async #list(def: KindDefinition, namespace: string | undefined, options: ListOptions): Promise<ObjectList> {
    const filter = parseFilter(def, options);
    if (isPaged(options)) {
      const page = await this.#page(def, namespace, options, filter);
      const items = page.items.map((i) => withResourceVersion(JSON.parse(i.json) as KubeObject, i.revision));
      return { items, ...listMeta(page) };
    }
    const result = await this.#store.list<KubeObject>(storePrefix(def, namespace));
    const items: KubeObject[] = [];
    for (const entry of result.items) {
      if (!passes(filter, entry.value)) continue;
      // Store reads hand out fresh copies, so stamping in place is safe and spares 10,000 object copies.
      entry.value.metadata.resourceVersion = String(entry.revision);
      items.push(entry.value);
    }
    return { items, resourceVersion: String(result.revision) };
  }

  /**
   * One page of a list with `limit` and/or `continue`, as Kubernetes' etcd store reads it: the
   * first page at the current revision, later ones at the first page's revision from the key
   * after the last one returned; with selectors, store pages are read until `limit` objects
   * match or the keys run out (and the count of what remains is not known).
   */
  async #page(def: KindDefinition, namespace: string | undefined, options: ListOptions, filter: Filter): Promise<ListPage> {
    const prefix = storePrefix(def, namespace);
    let fromKey: string | undefined;
    let revision: number | undefined;
    if (options.continue) {
      if (options.resourceVersion !== undefined && options.resourceVersion !== '' && options.resourceVersion !== '0') {
        throw new BadRequestError('specifying resource version is not allowed when using continue');
      }
      ({ fromKey, revision } = decodeContinue(options.continue, prefix));
    }
    const filtered = filter.labels !== undefined || filter.fields !== undefined;
    const limit = options.limit;
    const items: RawEntry[] = [];
    for (;;) {
      let got: Awaited<ReturnType<Store['listRaw']>>;
      try {
        got = await this.#store.listRaw(prefix, {
          ...(fromKey !== undefined ? { fromKey } : {}),
          ...(limit ? { limit } : {}),
          ...(revision ? { revision } : {}),
        });
      } catch (err) {
        if (err instanceof GoneError && options.continue && fromKey !== undefined) {
          // As Kubernetes: the client may start over, or go on inconsistently with this token.
          const lastKey = fromKey.endsWith('\u0000') ? fromKey.slice(0, -1) : fromKey;
          throw new GoneError(EXPIRED_CONTINUE_MESSAGE, { cause: err, listContinue: encodeContinue(lastKey, prefix, -1) });
        }
        throw err;
      }
      revision = got.revision;
      let consumed = got.items.length;
      for (let i = 0; i < got.items.length; i++) {
        const item = got.items[i]!;
        if (!filtered || passes(filter, storedAttrs(def, item.json, item.shared))) items.push(item);
        if (limit !== undefined && items.length >= limit) {
          consumed = i + 1;
          break;
        }
      }
      const more = consumed < got.items.length || got.more === true;
      const lastKey = got.items[consumed - 1]?.key;
      if (!more || lastKey === undefined) return { items, revision };
      if (limit === undefined || items.length >= limit) {
        const next: ListPage = { items, revision, continue: encodeContinue(lastKey, prefix, revision) };
        // Only an unfiltered page knows how many items follow it.
        if (!filtered && got.remaining !== undefined) next.remainingItemCount = got.remaining + (got.items.length - consumed);
        return next;
      }
      fromKey = `${lastKey}\u0000`;
    }
  }

  /**
   * A list as the JSON text of a `{Kind}List`. Without selectors the stored JSON of each object
   * is spliced in as is (with its resourceVersion added), so a list of 10,000 objects is never
   * parsed and re-serialised.
   */
  async listJson(def: KindDefinition, namespace: string | undefined, options: ListOptions = {}): Promise<string> {
    const head = (meta: Omit<ObjectList, 'items'>) =>
      `{"apiVersion":${JSON.stringify(apiVersionOf(def))},"kind":${JSON.stringify(`${def.kind}List`)},"metadata":${JSON.stringify(meta)},"items":[`;
    if (isPaged(options)) {
      const page = await this.#page(def, namespace, options, parseFilter(def, options));
      return `${head(listMeta(page))}${page.items.map((i) => stampJson(i.json, i.revision)).join(',')}]}`;
    }
    const filter = parseFilter(def, options);
    const filtered = filter.labels !== undefined || filter.fields !== undefined;
    const raw = await this.#store.listRaw(storePrefix(def, namespace));
    const items = filtered ? raw.items.filter((i) => passes(filter, storedAttrs(def, i.json, i.shared))) : raw.items;
    return `${head({ resourceVersion: String(raw.revision) })}${items.map((i) => stampJson(i.json, i.revision)).join(',')}]}`;
  }

  async create(def: KindDefinition, namespace: string | undefined, body: Record<string, unknown>, options: CreateOptions = {}): Promise<KubeObject> {
    const identified = reconcileIdentity({ def, namespace }, body, apiVersionOf(def));
    const asked = identified.metadata as { name?: unknown; generateName?: unknown };
    const generateName = (asked.name === undefined || asked.name === '') && typeof asked.generateName === 'string' ? asked.generateName : '';
    const prepared = prepareCreate(def, identified, this.#now());
    let obj = validateForWrite(def, prepared, options);
    // Admission happens on create only, after validation, as Kubernetes' admission plugins run.
    if (def === podKind && this.#defaultTolerationSeconds !== undefined) obj = withDefaultTolerations(obj as Pod, this.#defaultTolerationSeconds);
    if (def === podKind && this.#admitPod) obj = await this.#admitPod(obj as Pod);
    if (def === persistentVolumeClaimKind && this.#admitClaim) obj = await this.#admitClaim(obj);
    obj = this.#track(def, undefined, obj, options, undefined);
    await this.#admit(def, obj);
    let name = obj.metadata.name!;
    if (def.namespaced) await this.#checkNamespaceOpen(namespace!);
    let key = storeKey(def, name, namespace);
    const allocator = this.#allocators.get(def);
    let namesTried = 1;
    for (let attempt = 0; ; attempt++) {
      // Allocation last: a request refused for any other reason records nothing.
      const { object, ops } = allocator ? await allocator.plan(obj, undefined) : { object: obj, ops: [] };
      if (options.dryRun) {
        // As Kubernetes' dry run: everything but the write, so a name already taken is still a 409.
        const taken = await this.#store.get(key).then(
          () => true,
          (err: unknown) => {
            if (err instanceof NotFoundError) return false;
            throw err;
          },
        );
        if (taken) throw new AlreadyExistsError(`${qualifiedResource(def)} "${name}" already exists`, { kind: def.resource, group: def.group, name });
        return object;
      }
      try {
        const revision = ops.length ? await this.#store.transaction([{ type: 'create', key, value: object }, ...ops]) : await this.#store.create(key, object);
        return withResourceVersion(object, revision);
      } catch (err) {
        // A record someone else took between our read and our write: plan again.
        if (this.#recordRace(err, key) && attempt < MAX_RETRIES) continue;
        if (err instanceof AlreadyExistsError && generateName && namesTried < GENERATE_NAME_ATTEMPTS) {
          // A generated name that someone already holds: the client asked for any name, so try another suffix.
          namesTried++;
          name = `${generateName}${generateNameSuffix()}`;
          obj = { ...obj, metadata: { ...obj.metadata, name } };
          key = storeKey(def, name, namespace);
          continue;
        }
        if (err instanceof AlreadyExistsError) {
          throw new AlreadyExistsError(`${qualifiedResource(def)} "${name}" already exists`, { cause: err, kind: def.resource, group: def.group, name });
        }
        throw err;
      }
    }
  }

  /** True when a transaction failed on a record it carried rather than on the object itself. */
  #recordRace(err: unknown, objectKey: string): boolean {
    const key = failedKey(err);
    return key !== undefined && key !== objectKey;
  }

  /** Removes an object and frees the records it holds, in one transaction. */
  async #remove(def: KindDefinition, entry: StoreEntry<KubeObject>): Promise<number> {
    const allocator = this.#allocators.get(def);
    const ops: StoreOp[] = allocator ? await allocator.release(entry.value) : [];
    if (ops.length === 0) return (await this.#store.delete(entry.key, entry.revision)).revision;
    return this.#store.transaction([{ type: 'delete', key: entry.key, expectedRevision: entry.revision }, ...ops]);
  }

  /** PUT: a full replacement of the object (or of its status, for the /status subresource). */
  async replace(
    def: KindDefinition,
    namespace: string | undefined,
    name: string,
    body: Record<string, unknown>,
    options: WriteOptions = {},
  ): Promise<KubeObject> {
    const wanted = bodyResourceVersion(body);
    const identified = reconcileIdentity({ def, namespace, name }, body, apiVersionOf(def));
    return this.#write(def, namespace, name, wanted, () => identified, options);
  }

  /** PATCH with a JSON merge patch, applied to the latest stored object. */
  async patch(
    def: KindDefinition,
    namespace: string | undefined,
    name: string,
    patch: Record<string, unknown> | unknown[],
    options: PatchOptions = {},
  ): Promise<KubeObject> {
    const type = options.patchType ?? 'merge';
    if (type === 'json' ? !Array.isArray(patch) : Array.isArray(patch)) {
      throw new BadRequestError(type === 'json' ? 'a JSON patch must be a JSON array of operations' : 'the patch must be a JSON object');
    }
    const wanted = Array.isArray(patch) ? undefined : bodyResourceVersion(patch);
    if (type === 'apply') {
      const config = patch as Record<string, unknown>;
      const applied = appliedFields(def, config, options.subresource);
      const writer = applier(this.#manager(options), options.subresource);
      const build = (current: KubeObject) =>
        reconcileIdentity(
          { def, namespace, name },
          buildApplied(def, current, config, { writer, applied, force: options.force === true, subresource: options.subresource }),
          apiVersionOf(def),
        );
      return this.#write(def, namespace, name, wanted, build, { ...options, applied });
    }
    return this.#write(
      def,
      namespace,
      name,
      wanted,
      (current) => {
        const merged = applyPatch(def, type, current, patch);
        if (typeof merged !== 'object' || merged === null || Array.isArray(merged)) throw new BadRequestError('the patch must be a JSON object');
        return reconcileIdentity({ def, namespace, name }, merged as Record<string, unknown>, apiVersionOf(def));
      },
      options,
    );
  }

  async delete(def: KindDefinition, namespace: string | undefined, name: string, options: DeleteOptions = {}): Promise<KubeObject> {
    if (def === namespaceKind && (SYSTEM_NAMESPACES as readonly string[]).includes(name)) {
      throw new ForbiddenError(`namespaces "${name}" is forbidden: this namespace may not be deleted`, { kind: def.resource, name });
    }
    for (let attempt = 0; ; attempt++) {
      const entry = await this.#read(def, namespace, name);
      const current = withResourceVersion(entry.value, entry.revision);
      const pre = options.preconditions;
      if (pre?.uid && pre.uid !== current.metadata.uid) {
        throw this.#conflict(def, name, `Precondition failed: UID in precondition: ${pre.uid}, UID in object meta: ${current.metadata.uid}`);
      }
      if (pre?.resourceVersion && pre.resourceVersion !== current.metadata.resourceVersion) {
        throw this.#conflict(
          def,
          name,
          `Precondition failed: ResourceVersion in precondition: ${pre.resourceVersion}, ResourceVersion in object meta: ${current.metadata.resourceVersion}`,
        );
      }
      try {
        const grace = podGracePeriod(current, options.gracePeriodSeconds);
        const had = current.metadata.finalizers ?? [];
        // Owners carry the garbage collector's finalizers for Foreground and Orphan; kinds that own nothing ignore the policy.
        const finalizers = ownsDependents(def) ? finalizersForDeletion(had, effectivePolicy(options)) : had;
        const finalizersChanged = finalizers.length !== had.length || finalizers.some((f, i) => f !== had[i]);
        const pending = finalizers.length > 0 || def === namespaceKind || grace > 0;
        if (!pending) {
          if (!options.dryRun) await this.#remove(def, entry);
          return current;
        }
        const shorter = grace < (current.metadata.deletionGracePeriodSeconds ?? Infinity);
        if (current.metadata.deletionTimestamp && !shorter && !finalizersChanged) return current;
        const marked = markDeleting(entry.value, this.#now(), grace);
        if (finalizersChanged) (marked.metadata as { finalizers?: string[] }).finalizers = finalizers;
        if (options.dryRun) return withResourceVersion(marked as KubeObject, entry.revision);
        const revision = await this.#store.update(entry.key, marked, entry.revision);
        return withResourceVersion(marked as KubeObject, revision);
      } catch (err) {
        if ((err instanceof ConflictError || this.#recordRace(err, entry.key)) && attempt < MAX_RETRIES) continue;
        if (err instanceof NotFoundError) throw this.#notFound(def, name, err);
        throw err;
      }
    }
  }

  /** Events for objects of a kind, with label and field filtering applied per event. */
  async *watch(def: KindDefinition, namespace: string | undefined, options: WatchOptions = {}): AsyncGenerator<ObjectWatchEvent> {
    const filter = parseFilter(def, options);
    const prefix = storePrefix(def, namespace);
    // Keys the client has been told about, so that an object leaving the selection reads as DELETED.
    const visible = new Set<string>();
    // After an initial list the client's view is known exactly; after a resume it is not.
    let authoritative = false;
    let after: number;
    const rv = options.resourceVersion;
    if (rv === undefined || rv === '' || rv === '0') {
      // Listed as text: from the watch cache each value comes with what every watcher shares of it
      // (its ADDED encoding, its selection attributes), so N watches opening cost one encoding each.
      const list = await this.#store.listRaw(prefix);
      for (const entry of list.items) {
        if (!passes(filter, storedAttrs(def, entry.json, entry.shared))) continue;
        visible.add(entry.key);
        yield listedEvent(entry);
      }
      after = list.revision;
      authoritative = true;
    } else {
      after = parseResourceVersion(rv)!;
    }
    const unfiltered = !filter.labels && !filter.fields;
    for await (const event of this.#store.watch<KubeObject>(prefix, { afterRevision: after, signal: options.signal })) {
      if (unfiltered) {
        yield objectEvent(event.type, event);
        continue;
      }
      // Selectors only read labels and fields: watchers of a shared event read one copy of those.
      const value = event.shared ? storedAttrs(def, event.shared.json, event.shared) : event.value;
      const inSelection = event.type !== 'DELETED' && passes(filter, value);
      const wasVisible = visible.has(event.key);
      if (inSelection) {
        visible.add(event.key);
        const type = wasVisible ? 'MODIFIED' : event.type === 'ADDED' || authoritative ? 'ADDED' : 'MODIFIED';
        yield objectEvent(type, event);
      } else if (wasVisible || (event.type === 'DELETED' && passes(filter, value))) {
        visible.delete(event.key);
        yield objectEvent('DELETED', event);
      }
    }
  }

  /** A list-watch source for informers of in-process reconcilers. */
  listWatcher<T extends KubeObject = KubeObject>(def: KindDefinition, namespace?: string): ListWatcher<T> {
    return {
      list: async () => {
        const list = await this.list(def, namespace);
        return { items: list.items as T[], resourceVersion: list.resourceVersion };
      },
      watch: (resourceVersion, signal) => {
        const events = this.watch(def, namespace, { resourceVersion: resourceVersion || undefined, signal });
        return events as AsyncIterable<{ type: WatchEventType; object: T }>;
      },
    };
  }

  /**
   * Waits (a short while) until the store has reached `revision`, as kube-apiserver's watch
   * cache does for a list or watch at a resourceVersion it has not seen: a client that read
   * from a fresher server may be a moment ahead. A revision still ahead after that is an error
   * the client can act on (504, ResourceVersionTooLarge), not a watch that waits forever.
   */
  async waitForRevision(revision: number, timeoutMs = FRESH_REVISION_WAIT_MS): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const current = await this.#store.currentRevision();
      if (revision <= current) return;
      if (Date.now() >= deadline) {
        throw new TimeoutError(`Too large resource version: ${revision}, current: ${current}`, {
          causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }],
          retryAfterSeconds: 1,
        });
      }
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }

  /** The store's current revision (for BOOKMARK events and list metadata). */
  async currentRevision(): Promise<number> {
    return this.#store.currentRevision();
  }

  async #write(
    def: KindDefinition,
    namespace: string | undefined,
    name: string,
    wantedVersion: string | undefined,
    build: (current: KubeObject) => Record<string, unknown>,
    options: WriteOptions,
  ): Promise<KubeObject> {
    for (let attempt = 0; ; attempt++) {
      const entry = await this.#read(def, namespace, name);
      const current = withResourceVersion(entry.value, entry.revision);
      if (wantedVersion !== undefined && wantedVersion !== current.metadata.resourceVersion) {
        throw this.#conflict(def, name, 'the object has been modified; please apply your changes to the latest version and try again');
      }
      const spec = options.subresource !== 'status';
      const allocator = spec ? this.#allocators.get(def) : undefined;
      let body = build(current);
      if (allocator) body = allocator.carryOver(entry.value, body);
      const next = spec ? prepareUpdate(def, entry.value, body) : prepareStatusUpdate(entry.value, body);
      let obj = validateForWrite(def, next, options);
      if (spec) validateUpdate(def, entry.value, obj);
      obj = this.#track(def, entry.value, obj, options, body);
      if (sameObject(obj, entry.value)) return current;
      // Only a changed spec is judged against other objects: an object being deleted, or one whose labels or finalizers change, is not refused for what it refers to.
      if (spec && def.admit && !obj.metadata.deletionTimestamp && JSON.stringify(obj.spec) !== JSON.stringify(entry.value.spec)) await this.#admit(def, obj);
      if (options.dryRun) return withResourceVersion(allocator ? (await allocator.plan(obj, entry.value)).object : obj, entry.revision);
      try {
        if (readyToRemove(obj)) {
          const revision = await this.#remove(def, entry);
          return withResourceVersion(obj, revision);
        }
        let ops: StoreOp[] = [];
        if (allocator) {
          ({ object: obj, ops } = await allocator.plan(obj, entry.value));
          if (sameObject(obj, entry.value)) return current;
        }
        const revision = ops.length
          ? await this.#store.transaction([{ type: 'update', key: entry.key, value: obj, expectedRevision: entry.revision }, ...ops])
          : await this.#store.update(entry.key, obj, entry.revision);
        return withResourceVersion(obj, revision);
      } catch (err) {
        if (this.#recordRace(err, entry.key) && attempt < MAX_RETRIES) continue;
        if (err instanceof ConflictError) {
          if (wantedVersion === undefined && attempt < MAX_RETRIES) continue;
          throw this.#conflict(def, name, 'the object has been modified; please apply your changes to the latest version and try again');
        }
        if (err instanceof NotFoundError) throw this.#notFound(def, name, err);
        throw err;
      }
    }
  }

  #manager(options: ManagerOptions): string {
    return options.fieldManager ?? this.#client ?? 'unknown';
  }

  /**
   * The one place writes record ownership: metadata.managedFields of `next` as the write leaves
   * them, from the stored entries (or those the request set in their place, as Kubernetes lets
   * a client reset or migrate them) and the fields the write changed.
   */
  #track(
    def: KindDefinition,
    before: KubeObject | undefined,
    next: KubeObject,
    options: ManagerOptions & { subresource?: string },
    body: Record<string, unknown> | undefined,
  ): KubeObject {
    if (this.#options.managedFields === false) return next;
    const stored = before?.metadata.managedFields;
    const asked = (body?.metadata as { managedFields?: unknown } | undefined)?.managedFields;
    const base: ManagedFieldsEntry[] =
      options.applied === undefined && Array.isArray(asked) && asked.length > 0 && !sameObject(asked, stored) ? readEntries(asked) : readEntries(stored);
    const meta = def.patchMeta ?? defaultPatchMeta;
    const scope = scopeOf(def, options.subresource);
    const entries = trackWrite({
      entries: base,
      writer: {
        manager: this.#manager(options),
        operation: options.applied ? 'Apply' : 'Update',
        ...(options.subresource === 'status' ? { subresource: 'status' } : {}),
      },
      apiVersion: apiVersionOf(def),
      before: before ? fieldValues(before, meta, scope) : new Map(),
      after: fieldValues(next, meta, scope),
      now: this.#now(),
      applied: options.applied,
    });
    const { managedFields: _old, ...rest } = next.metadata;
    return { ...next, metadata: entries.length ? { ...rest, managedFields: entries } : rest } as KubeObject;
  }

  /** The kind's admission check against other stored objects (KindDefinition.admit); its problems are a 422. */
  async #admit(def: KindDefinition, obj: KubeObject): Promise<void> {
    if (!def.admit) return;
    const problems = await def.admit(obj, {
      get: async (ref) => {
        const key = `/registry/${ref.group || 'core'}/${ref.resource}/${ref.namespace !== undefined ? `${ref.namespace}/` : ''}${ref.name}`;
        try {
          return (await this.#store.get<KubeObject>(key)).value;
        } catch (err) {
          if (err instanceof NotFoundError) return undefined;
          throw err;
        }
      },
    });
    if (problems.length) throw invalidError(def, obj.metadata.name ?? '', problems);
  }

  async #read(def: KindDefinition, namespace: string | undefined, name: string): Promise<StoreEntry<KubeObject>> {
    try {
      return await this.#store.get<KubeObject>(storeKey(def, name, namespace));
    } catch (err) {
      if (err instanceof NotFoundError) throw this.#notFound(def, name, err);
      throw err;
    }
  }

  async #checkNamespaceOpen(namespace: string): Promise<void> {
    let ns = this.#shared.namespaces?.get(namespace);
    if (!ns) {
      try {
        ns = (await this.#store.get<KubeObject>(storeKey(namespaceKind, namespace))).value;
      } catch (err) {
        if (err instanceof NotFoundError) throw this.#notFound(namespaceKind, namespace, err);
        throw err;
      }
    }
    if (ns.metadata.deletionTimestamp) {
      throw new ForbiddenError(`unable to create new content in namespace ${namespace} because it is being terminated`, {
        kind: 'namespaces',
        name: namespace,
      });
    }
  }

  #notFound(def: KindDefinition, name: string, cause?: unknown): NotFoundError {
    return new NotFoundError(`${qualifiedResource(def)} "${name}" not found`, { cause, kind: def.resource, group: def.group, name });
  }

  #conflict(def: KindDefinition, name: string, why: string): ConflictError {
    return new ConflictError(`Operation cannot be fulfilled on ${qualifiedResource(def)} "${name}": ${why}`, { kind: def.resource, group: def.group, name });
  }
}

/**
 * What forClient hands out: the service with each verb counted. The verbs' bodies stay in
 * ObjectService (which calls no public verb of its own, so nothing counts twice); the informers'
 * list and watch come through listWatcher, which calls these.
 */
class ClientObjectService extends ObjectService {
  override get(def: KindDefinition, namespace: string | undefined, name: string): Promise<KubeObject> {
    return this.counted('get', def, '', () => super.get(def, namespace, name));
  }

  override list(def: KindDefinition, namespace: string | undefined, options?: ListOptions): Promise<ObjectList> {
    return this.counted('list', def, '', () => super.list(def, namespace, options));
  }

  override listJson(def: KindDefinition, namespace: string | undefined, options?: ListOptions): Promise<string> {
    return this.counted('list', def, '', () => super.listJson(def, namespace, options));
  }

  override create(def: KindDefinition, namespace: string | undefined, body: Record<string, unknown>, options?: CreateOptions): Promise<KubeObject> {
    return this.counted('create', def, '', () => super.create(def, namespace, body, options), 201);
  }

  override replace(
    def: KindDefinition,
    namespace: string | undefined,
    name: string,
    body: Record<string, unknown>,
    options: WriteOptions = {},
  ): Promise<KubeObject> {
    return this.counted('update', def, options.subresource, () => super.replace(def, namespace, name, body, options));
  }

  override patch(
    def: KindDefinition,
    namespace: string | undefined,
    name: string,
    patch: Record<string, unknown> | unknown[],
    options: PatchOptions = {},
  ): Promise<KubeObject> {
    return this.counted('patch', def, options.subresource, () => super.patch(def, namespace, name, patch, options));
  }

  override delete(def: KindDefinition, namespace: string | undefined, name: string, options?: DeleteOptions): Promise<KubeObject> {
    return this.counted('delete', def, '', () => super.delete(def, namespace, name, options));
  }

  /** Counted when it starts, as the API server counts a watch when its stream opens. */
  override watch(def: KindDefinition, namespace: string | undefined, options?: WatchOptions): AsyncGenerator<ObjectWatchEvent> {
    this.recordRequest('watch', def);
    return super.watch(def, namespace, options);
  }
}
