// CRD controller: accepts a CRD's names (NamesAccepted, Established, acceptedNames, storedVersions), and on deletion removes its objects before releasing the CRD.
import { CRD_CLEANUP_FINALIZER, crdKind, type CustomResourceDefinition } from '../../core/api/crd.js';
import { deepEqual } from '../../core/api/canonical-json.js';
import type { Condition } from '../../core/api/meta.js';
import { kinds, kindByResource } from '../../core/api/registry.js';
import type { Client } from '../../core/client/client.js';
import { runController } from '../../core/controller/controller.js';
import type { Informer } from '../../core/controller/informer.js';
import type { InformerFactory } from '../../core/controller/informer-factory.js';
import { WorkQueue } from '../../core/controller/work-queue.js';
import { NotFoundError } from '../../core/errors.js';

export interface CrdStatus {
  conditions: Condition[];
  acceptedNames: Record<string, unknown>;
  storedVersions: string[];
}

function condition(
  type: string,
  status: 'True' | 'False',
  reason: string,
  message: string,
  previous: readonly Condition[] | undefined,
  now: string,
): Condition {
  const old = previous?.find((c) => c.type === type);
  const lastTransitionTime = old && old.status === status ? (old.lastTransitionTime ?? now) : now;
  return { type, status, lastTransitionTime, reason, message };
}

/**
 * Pure decision: the status a CRD should have. Its names are refused when another CRD of the
 * same group already has its plural or kind, or a built-in kind of the group has the plural.
 */
export function planCrdStatus(crd: CustomResourceDefinition, others: readonly CustomResourceDefinition[], now: Date): CrdStatus {
  const at = now.toISOString().replace(/\.\d{3}Z$/, 'Z');
  const { group, names } = crd.spec;
  const previous = crd.status?.conditions;
  const older = others.filter((o) => o.metadata.name !== crd.metadata.name && o.spec.group === group);
  const builtIn = kinds.some((k) => k.group === group && k.resource === names.plural && !('crdName' in k));
  let conflict: { reason: string; message: string } | undefined;
  if (builtIn || older.some((o) => o.spec.names.plural === names.plural || (o.spec.names.shortNames ?? []).includes(names.plural))) {
    conflict = { reason: 'PluralConflict', message: `"${names.plural}" is already in use` };
  } else if (older.some((o) => o.spec.names.kind === names.kind)) {
    conflict = { reason: 'KindConflict', message: `"${names.kind}" is already in use` };
  }
  const storage = crd.spec.versions.find((v) => v.storage)?.name;
  const storedVersions = [...(crd.status?.storedVersions ?? [])];
  if (storage && !storedVersions.includes(storage)) storedVersions.push(storage);
  const conditions: Condition[] = [];
  if (conflict) {
    conditions.push(condition('NamesAccepted', 'False', conflict.reason, conflict.message, previous, at));
    conditions.push(condition('Established', 'False', 'NotAccepted', 'not all names are accepted', previous, at));
  } else {
    conditions.push(condition('NamesAccepted', 'True', 'NoConflicts', 'no conflicts found', previous, at));
    conditions.push(condition('Established', 'True', 'InitialNamesAccepted', 'the initial names have been accepted', previous, at));
  }
  if (crd.metadata.deletionTimestamp) {
    conditions.push(condition('Terminating', 'True', 'InstanceDeletionInProgress', 'CustomResource deletion is in progress', previous, at));
  }
  return { conditions, acceptedNames: conflict ? (crd.status?.acceptedNames ?? {}) : { ...names }, storedVersions };
}

function sameStatus(crd: CustomResourceDefinition, next: CrdStatus): boolean {
  const strip = (cs: readonly Condition[] | undefined) => (cs ?? []).map(({ type, status, reason, message }) => ({ type, status, reason, message }));
  const now = crd.status ?? {};
  return (
    // Key order differs between what we plan and what the schema stored: compare as values.
    deepEqual(strip(now.conditions), strip(next.conditions)) &&
    deepEqual(now.acceptedNames ?? {}, next.acceptedNames) &&
    deepEqual(now.storedVersions ?? [], next.storedVersions)
  );
}

export interface CrdControllerOptions {
  client: Client;
  informers: InformerFactory;
  log?: (message: string) => void;
  now?: () => Date;
}

export class CrdController {
  readonly informer: Informer<CustomResourceDefinition>;
  readonly queue = new WorkQueue();
  readonly #client: Client;
  readonly #log: (message: string) => void;
  readonly #now: () => Date;

  constructor(options: CrdControllerOptions) {
    this.#client = options.client;
    this.#log = options.log ?? (() => {});
    this.#now = options.now ?? (() => new Date());
    this.informer = options.informers.informer<CustomResourceDefinition>(crdKind);
    const enqueue = (crd: CustomResourceDefinition) => this.queue.add(crd.metadata.name!);
    this.informer.addHandlers({
      onAdd: enqueue,
      onUpdate: (_old, crd) => enqueue(crd),
      // A freed name may let a CRD whose names conflicted be accepted now.
      onDelete: (gone) => {
        for (const crd of this.informer.list()) if (crd.spec.group === gone.spec.group) enqueue(crd);
      },
    });
  }

  async start(signal: AbortSignal): Promise<void> {
    await runController({ name: 'crd', queue: this.queue, informers: [this.informer], reconcile: (key) => this.reconcile(key), log: this.#log }, signal);
  }

  async reconcile(name: string): Promise<{ requeueAfterMs?: number } | void> {
    const crd = this.informer.get(name);
    if (!crd) return;
    const finalizers = crd.metadata.finalizers ?? [];
    if (!crd.metadata.deletionTimestamp && !finalizers.includes(CRD_CLEANUP_FINALIZER)) {
      await this.#client.patch(
        crdKind,
        { name },
        { metadata: { finalizers: [...finalizers, CRD_CLEANUP_FINALIZER], resourceVersion: crd.metadata.resourceVersion } },
      );
      return;
    }
    // The first accepted CRD of a name wins: older ones are judged against, newer ones not.
    const created = (c: CustomResourceDefinition) => c.metadata.creationTimestamp ?? '';
    const others = this.informer.list().filter((o) => created(o) < created(crd) || (created(o) === created(crd) && o.metadata.name! < name));
    const status = planCrdStatus(crd, others, this.#now());
    if (!sameStatus(crd, status)) {
      await this.#client.patch(crdKind, { name }, { metadata: { resourceVersion: crd.metadata.resourceVersion }, status }, { subresource: 'status' });
      if (!crd.status?.conditions?.length)
        this.#log(`customresourcedefinition ${name}: ${status.conditions[1]!.status === 'True' ? 'established' : status.conditions[0]!.message}`);
      return;
    }
    if (crd.metadata.deletionTimestamp && finalizers.includes(CRD_CLEANUP_FINALIZER)) return this.#cleanUp(crd);
  }

  /** Deletes the CRD's objects; once none is left, releases the CRD. */
  async #cleanUp(crd: CustomResourceDefinition): Promise<{ requeueAfterMs?: number } | void> {
    const name = crd.metadata.name!;
    const storage = crd.spec.versions.find((v) => v.storage)?.name ?? '';
    const def =
      kindByResource(crd.spec.group, storage, crd.spec.names.plural) ?? kinds.find((k) => k.group === crd.spec.group && k.resource === crd.spec.names.plural);
    if (def) {
      const { items } = await this.#client.list(def);
      let waiting = 0;
      for (const item of items) {
        waiting++;
        if (item.metadata.deletionTimestamp) continue;
        try {
          await this.#client.delete(def, { namespace: item.metadata.namespace, name: item.metadata.name! });
        } catch (err) {
          if (!(err instanceof NotFoundError)) throw err;
        }
      }
      if (waiting > 0) return { requeueAfterMs: 500 };
    }
    const rest = (crd.metadata.finalizers ?? []).filter((f) => f !== CRD_CLEANUP_FINALIZER);
    await this.#client.patch(crdKind, { name }, { metadata: { finalizers: rest, resourceVersion: crd.metadata.resourceVersion } });
    this.#log(`customresourcedefinition ${name}: objects removed, definition deleted`);
  }
}
