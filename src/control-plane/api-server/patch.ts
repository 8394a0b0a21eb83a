// PATCH bodies as Kubernetes serves them: the patch type from the content type, the body read for that type, and the patch applied to a stored object the same way wherever a write is judged.
import fastJsonPatch, { type Operation } from 'fast-json-patch';
import { parse as parseYaml } from 'yaml';
import { mergeApplied } from '../../core/api/managed-fields/merge.js';
import type { KindDefinition } from '../../core/api/kind.js';
import { defaultPatchMeta } from '../../core/api/patch-meta.js';
import { applyStrategicMergePatch } from '../../core/api/strategic-merge-patch.js';
import { BadRequestError, InvalidError, UnsupportedMediaTypeError } from '../../core/errors.js';
import { checkDocumentShape } from './body.js';
import { applyMergePatch } from './merge-patch.js';

/** JSON merge patch (RFC 7386), strategic merge patch, JSON patch (RFC 6902), server-side apply. */
export type PatchType = 'merge' | 'strategic' | 'json' | 'apply';

const PATCH_TYPES: Readonly<Record<string, PatchType>> = {
  'application/merge-patch+json': 'merge',
  'application/strategic-merge-patch+json': 'strategic',
  'application/json-patch+json': 'json',
  'application/apply-patch+yaml': 'apply',
  // Not Kubernetes' (it answers 415), but what earlier minik8s clients sent for a merge patch.
  'application/json': 'merge',
  '': 'merge',
};

/** The patch type a PATCH's content type asks for; 415 with the types served otherwise. */
export function patchTypeOf(contentType: string | null | undefined): PatchType {
  const type = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  const found = PATCH_TYPES[type];
  if (found) return found;
  throw new UnsupportedMediaTypeError(
    `the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml, application/strategic-merge-patch+json`,
  );
}

/** Parses a PATCH body: a JSON object for the merge patches, a JSON array of operations for a JSON patch, a YAML (or JSON) object for an apply. */
export function parsePatchBody(text: string, type: PatchType): unknown {
  if (text.trim() === '') throw new BadRequestError('the request body is empty');
  let value: unknown;
  try {
    // YAML 1.2 core schema, as Kubernetes' sigs.k8s.io/yaml reads it closely enough; JSON is YAML.
    value = type === 'apply' ? parseYaml(text, { schema: 'core', maxAliasCount: 100, uniqueKeys: true }) : JSON.parse(text);
  } catch (err) {
    const what = type === 'apply' ? 'YAML' : 'JSON';
    throw new BadRequestError(`the request body is not valid ${what}: ${(err as Error).message.slice(0, 200)}`, { cause: err });
  }
  checkDocumentShape(value);
  if (type === 'json') {
    if (!Array.isArray(value)) throw new BadRequestError('a JSON patch must be a JSON array of operations');
    return value;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new BadRequestError('the request body must be a JSON object');
  return value;
}

/**
 * The object the patch makes of `current` (which is not changed). Strategic merge patches merge
 * lists by the kind's patch metadata; a JSON patch's failed `test` or missing path is a 422, a
 * malformed operation a 400.
 */
export function applyPatch(def: Pick<KindDefinition, 'patchMeta'>, type: PatchType, current: unknown, patch: unknown): unknown {
  if (type === 'merge') return applyMergePatch(current, patch);
  // The merge alone, without ownership: what an apply would make of the object where only the result is judged (node restriction).
  if (type === 'apply') return mergeApplied(current, patch, def.patchMeta ?? defaultPatchMeta);
  if (type === 'strategic') return applyStrategicMergePatch(current, patch, def.patchMeta ?? defaultPatchMeta);
  const operations = patch as Operation[];
  let problem: Error | undefined;
  try {
    problem = fastJsonPatch.validate(operations, current);
    if (!problem) return fastJsonPatch.applyPatch(current, operations, false, false).newDocument;
  } catch (err) {
    // Also the library's refusal of paths through __proto__ or constructor/prototype (a TypeError).
    problem = err as Error;
  }
  throw jsonPatchError(problem);
}

/** The library's names for operations that are not well-formed: the client's syntax error, not a patch that fails to apply. */
const MALFORMED = new Set([
  'SEQUENCE_NOT_AN_ARRAY',
  'OPERATION_NOT_AN_OBJECT',
  'OPERATION_OP_INVALID',
  'OPERATION_PATH_INVALID',
  'OPERATION_FROM_REQUIRED',
  'OPERATION_VALUE_REQUIRED',
  'OPERATION_VALUE_CANNOT_CONTAIN_UNDEFINED',
]);

function jsonPatchError(err: Error): Error {
  const why = err.message.split('\n')[0]!;
  if (MALFORMED.has(err.name)) return new BadRequestError(`invalid JSON patch: ${why}`);
  return new InvalidError(`the server rejected our request due to an error in our request: ${why}`);
}
