// Server-side apply over the object service: the applied configuration merged into the live object by ownership, conflicts answered 409, a missing object created; and the field manager a request writes as.
import type { KindDefinition } from '../../core/api/kind.js';
import { fieldValues, formatPath, isWithin, pathElements, type FieldScope, type PathKey } from '../../core/api/managed-fields/field-set.js';
import {
  conflictMessage,
  describeManager,
  findConflicts,
  ownedBy,
  ownedByOthers,
  readEntries,
  type Writer,
} from '../../core/api/managed-fields/managed-fields.js';
import { mergeApplied, removeField } from '../../core/api/managed-fields/merge.js';
import type { KubeObject } from '../../core/api/meta.js';
import { defaultPatchMeta } from '../../core/api/patch-meta.js';
import { BadRequestError, ConflictError, NotFoundError, AlreadyExistsError } from '../../core/errors.js';
import type { ObjectService } from './object-service.js';

/** Kubernetes caps a field manager's name at 128 characters. */
const MAX_MANAGER_LENGTH = 128;

/**
 * The manager a write is recorded under: the request's `fieldManager`, else (as kube-apiserver
 * does) the user agent up to its first `/` (kubectl's own verbs name themselves, e.g.
 * `kubectl-client-side-apply`, `kubectl-edit`, so this is for other clients). An apply must
 * name one.
 */
export function fieldManagerOf(options: { query: string | undefined; userAgent: string | undefined; apply: boolean }): string {
  const asked = options.query ?? '';
  if (asked !== '') {
    if (asked.length > MAX_MANAGER_LENGTH) throw new BadRequestError(`fieldManager: Too long: may not be more than ${MAX_MANAGER_LENGTH} bytes`);
    return asked;
  }
  if (options.apply) throw new BadRequestError('PATCH, application/apply-patch+yaml requires fieldManager to be specified');
  const agent = (options.userAgent ?? '').split('/')[0]!.trim();
  return agent === '' ? 'unknown' : agent.slice(0, MAX_MANAGER_LENGTH);
}

/** Which part of an object a write owns: status writes only status; spec writes all but a status that has its own subresource. */
export function scopeOf(def: Pick<KindDefinition, 'statusSubresource'>, subresource: string | undefined): FieldScope {
  if (subresource === 'status') return 'status';
  return def.statusSubresource ? 'spec' : 'all';
}

/** The writer an apply records: its manager, the Apply operation, the subresource it applies to. */
export function applier(manager: string, subresource: string | undefined): Writer {
  return { manager, operation: 'Apply', ...(subresource === 'status' ? { subresource } : {}) };
}

/** The fields an applied configuration sets: what its manager will own. */
export function appliedFields(def: KindDefinition, config: Record<string, unknown>, subresource: string | undefined): Set<PathKey> {
  return new Set(fieldValues(config, def.patchMeta ?? defaultPatchMeta, scopeOf(def, subresource)).keys());
}

/** True for the key field of a list item (`…k:{"name":"c"}` then `f:name`): an item that stays keeps what names it. */
function isItemKey(path: PathKey): boolean {
  const elements = pathElements(path);
  const item = elements.at(-2);
  const field = elements.at(-1)!;
  if (!item?.startsWith('k:') || !field.startsWith('f:')) return false;
  return Object.hasOwn(JSON.parse(item.slice(2)) as object, field.slice(2));
}

export interface ApplyBuildOptions {
  writer: Writer;
  applied: ReadonlySet<PathKey>;
  force: boolean;
  subresource?: string;
}

/**
 * The object an apply makes of the live one: the configuration merged in, fields the manager
 * applied before and now leaves out removed unless another manager owns them (or something
 * below them), and a 409 when it would change fields other managers own, unless forced (the
 * ownership then moves as the write is tracked).
 */
export function buildApplied(def: KindDefinition, live: KubeObject, config: Record<string, unknown>, options: ApplyBuildOptions): Record<string, unknown> {
  const meta = def.patchMeta ?? defaultPatchMeta;
  const scope = scopeOf(def, options.subresource);
  const entries = readEntries(live.metadata.managedFields);
  const merged = mergeApplied(live, config, meta) as Record<string, unknown>;
  const dropped = [...ownedBy(entries, options.writer)].filter((path) => !options.applied.has(path));
  // Shallowest first: an item let go of whole goes with its fields, and those are then skipped.
  dropped.sort((a, b) => a.length - b.length);
  const removed: PathKey[] = [];
  for (const path of dropped) {
    if (removed.some((r) => isWithin(path, r)) || isItemKey(path)) continue;
    if (ownedByOthers(entries, options.writer, path) || [...options.applied].some((k) => isWithin(k, path))) continue;
    removeField(merged, path, meta);
    removed.push(path);
  }
  const conflicts = findConflicts(entries, options.writer, options.applied, fieldValues(live, meta, scope), fieldValues(merged, meta, scope));
  if (conflicts.length > 0 && !options.force) {
    throw new ConflictError(conflictMessage(conflicts), {
      kind: def.resource,
      group: def.group,
      name: live.metadata.name,
      causes: conflicts.map((c) => ({ reason: 'FieldManagerConflict', message: `conflict with ${describeManager(c)}`, field: formatPath(c.path) })),
    });
  }
  // The request's managedFields never replace the stored ones on an apply (Kubernetes refuses them there).
  const metadata = { ...(merged.metadata as Record<string, unknown>) };
  metadata.managedFields = live.metadata.managedFields;
  if (metadata.managedFields === undefined) delete metadata.managedFields;
  return { ...merged, metadata };
}

export interface ApplyOptions {
  fieldManager: string;
  force?: boolean;
  subresource?: string;
  dryRun?: boolean;
}

/**
 * PATCH with application/apply-patch+yaml: the apply onto the live object, or a create when
 * there is none (`created` then, for the 201).
 */
export async function applyObject(
  service: ObjectService,
  def: KindDefinition,
  namespace: string | undefined,
  name: string,
  config: Record<string, unknown>,
  options: ApplyOptions,
): Promise<{ object: KubeObject; created: boolean }> {
  if (config.apiVersion === undefined || config.kind === undefined) {
    throw new BadRequestError('apiVersion and kind must be set in an applied configuration');
  }
  const meta = config.metadata as Record<string, unknown> | undefined;
  if (meta && Array.isArray(meta.managedFields) && meta.managedFields.length > 0) {
    throw new BadRequestError('metadata.managedFields must be nil');
  }
  const patchOptions = {
    subresource: options.subresource,
    patchType: 'apply' as const,
    dryRun: options.dryRun,
    fieldManager: options.fieldManager,
    force: options.force,
  };
  for (let attempt = 0; ; attempt++) {
    try {
      return { object: await service.patch(def, namespace, name, config, patchOptions), created: false };
    } catch (err) {
      if (!(err instanceof NotFoundError) || options.subresource || attempt > 0) throw err;
    }
    try {
      const applied = appliedFields(def, config, undefined);
      const body = { ...config, metadata: { ...meta, name } };
      const object = await service.create(def, namespace, body, { dryRun: options.dryRun, fieldManager: options.fieldManager, applied });
      return { object, created: true };
    } catch (err) {
      // Someone created it in between: apply to theirs.
      if (!(err instanceof AlreadyExistsError)) throw err;
    }
  }
}
