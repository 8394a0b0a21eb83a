// A CRD version's openAPIV3Schema as the API server applies it: prune unknown fields, drop nulls, apply defaults, then validate (ajv) with Kubernetes' wording.
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import * as v from 'valibot';
import type { KubeObject } from './meta.js';
import { objectMetaSchema } from './meta.js';
import { type CauseReason, shortValue } from './validate.js';

/** A JSON schema node as a CRD writes it (OpenAPI v3 with Kubernetes' x-kubernetes-* extensions). */
export type SchemaNode = Record<string, unknown>;

type Path = (string | number)[];

/** One problem of an object against its schema, in the terms validate.ts turns into a 422 cause. */
export interface SchemaProblem {
  path: Path;
  /** 'unknown' for a field the schema does not declare (fieldValidation decides what becomes of it). */
  reason: CauseReason | 'unknown';
  value?: unknown;
  detail?: string;
}

const isObject = (x: unknown): x is Record<string, unknown> => x !== null && typeof x === 'object' && !Array.isArray(x);
const props = (s: SchemaNode): Record<string, SchemaNode> | undefined => (isObject(s.properties) ? (s.properties as Record<string, SchemaNode>) : undefined);
const preserves = (s: SchemaNode) => s['x-kubernetes-preserve-unknown-fields'] === true;
const child = (s: SchemaNode, key: 'items' | 'additionalProperties'): SchemaNode | undefined => (isObject(s[key]) ? (s[key] as SchemaNode) : undefined);

/**
 * Kubernetes' pruning: fields the schema does not declare are unknown (reported, then removed
 * by the caller's fieldValidation), except under x-kubernetes-preserve-unknown-fields or an
 * additionalProperties schema; nulls are dropped where the schema does not say `nullable`.
 * Works in place on `value`; returns the unknown fields' paths.
 */
export function pruneUnknown(schema: SchemaNode, value: unknown, path: Path = [], skipRootKeys: readonly string[] = []): Path[] {
  const unknown: Path[] = [];
  if (Array.isArray(value)) {
    const items = child(schema, 'items');
    if (items)
      value.forEach((item, i) => {
        unknown.push(...pruneUnknown(items, item, [...path, i]));
      });
    return unknown;
  }
  if (!isObject(value)) return unknown;
  const known = props(schema);
  const extra = child(schema, 'additionalProperties');
  for (const key of Object.keys(value)) {
    if (path.length === 0 && skipRootKeys.includes(key)) continue;
    const sub = known?.[key] ?? extra;
    if (!sub) {
      if (!preserves(schema) && schema['x-kubernetes-embedded-resource'] !== true) unknown.push([...path, key]);
      continue;
    }
    if (value[key] === null && sub.nullable !== true) {
      delete value[key];
      continue;
    }
    unknown.push(...pruneUnknown(sub, value[key], [...path, key]));
  }
  return unknown;
}

/** Applies `default`s of absent fields, deepest last (a defaulted object gets its own fields' defaults), in place. */
export function applyDefaults(schema: SchemaNode, value: unknown): void {
  if (Array.isArray(value)) {
    const items = child(schema, 'items');
    if (items) for (const item of value) applyDefaults(items, item);
    return;
  }
  if (!isObject(value)) return;
  const known = props(schema) ?? {};
  for (const [key, sub] of Object.entries(known)) {
    if (value[key] === undefined && sub.default !== undefined) value[key] = structuredClone(sub.default);
    if (value[key] !== undefined) applyDefaults(sub, value[key]);
  }
  const extra = child(schema, 'additionalProperties');
  if (extra) for (const key of Object.keys(value)) if (!(key in known)) applyDefaults(extra, value[key]);
}

/**
 * The schema as ajv reads it: OpenAPI 3.0's boolean exclusiveMinimum/Maximum become draft-07
 * numbers, an int-or-string node loses its type (a keyword of ours checks it), and the root's
 * apiVersion, kind and metadata go (the API server checks those itself).
 */
function forAjv(schema: unknown, root = true): unknown {
  if (Array.isArray(schema)) return schema.map((s) => forAjv(s, false));
  if (!isObject(schema)) return schema;
  const out: Record<string, unknown> = {};
  for (const [key, val] of Object.entries(schema)) {
    if (key === 'default' || key === 'example' || key === 'enum') out[key] = val;
    else if (key === 'properties' && isObject(val)) {
      const entries = Object.entries(val).filter(([name]) => !(root && (name === 'metadata' || name === 'apiVersion' || name === 'kind')));
      out[key] = Object.fromEntries(entries.map(([name, s]) => [name, forAjv(s, false)]));
    } else out[key] = forAjv(val, false);
  }
  if (root && Array.isArray(out.required)) out.required = (out.required as string[]).filter((r) => r !== 'metadata' && r !== 'apiVersion' && r !== 'kind');
  if (out.exclusiveMinimum === true && typeof out.minimum === 'number') [out.exclusiveMinimum, out.minimum] = [out.minimum, undefined];
  else if (typeof out.exclusiveMinimum === 'boolean') delete out.exclusiveMinimum;
  if (out.exclusiveMaximum === true && typeof out.maximum === 'number') [out.exclusiveMaximum, out.maximum] = [out.maximum, undefined];
  else if (typeof out.exclusiveMaximum === 'boolean') delete out.exclusiveMaximum;
  for (const k of ['minimum', 'maximum']) if (out[k] === undefined) delete out[k];
  if (out['x-kubernetes-int-or-string'] === true) delete out.type;
  return out;
}

// One ajv for the process: `strict: false` because CRD schemas carry OpenAPI and x-kubernetes-* keywords
// that are not JSON schema; formats are not checked (Kubernetes checks only a few, and loosely).
const ajv = new Ajv({ allErrors: true, strict: false, validateFormats: false, useDefaults: false });
ajv.addKeyword({
  keyword: 'x-kubernetes-int-or-string',
  schemaType: 'boolean',
  validate: (on: boolean, data: unknown) => !on || (typeof data === 'number' && Number.isInteger(data)) || typeof data === 'string',
  errors: false,
});
const compiled = new WeakMap<SchemaNode, ValidateFunction>();

function compile(schema: SchemaNode): ValidateFunction {
  let fn = compiled.get(schema);
  if (!fn) {
    fn = ajv.compile(forAjv(schema) as object);
    compiled.set(schema, fn);
  }
  return fn;
}

/** JSON's name of a value's type, as Kubernetes prints it in a type error. */
function typeOf(x: unknown): string {
  if (x === null) return 'null';
  if (Array.isArray(x)) return 'array';
  if (typeof x === 'number') return Number.isInteger(x) ? 'integer' : 'number';
  return typeof x;
}

function pathOf(pointer: string, data: unknown): Path {
  if (!pointer) return [];
  const path: Path = [];
  let cur = data;
  for (const raw of pointer.slice(1).split('/')) {
    const key = raw.replaceAll('~1', '/').replaceAll('~0', '~');
    const step = Array.isArray(cur) ? Number(key) : key;
    path.push(step);
    cur = (cur as Record<string | number, unknown> | undefined)?.[step];
  }
  return path;
}

/** `spec.items[0].name`, as Kubernetes names a field in a schema error's detail. */
export function dottedPath(path: Path): string {
  return path.map((k, i) => (typeof k === 'number' ? `[${k}]` : i === 0 ? k : `.${k}`)).join('');
}

function problemOf(err: ErrorObject, data: unknown): SchemaProblem | undefined {
  const path = pathOf(err.instancePath, data);
  let value: unknown = data;
  for (const k of path) value = (value as Record<string | number, unknown>)?.[k];
  const field = dottedPath(path);
  const p = err.params as Record<string, unknown>;
  const invalid = (detail: string): SchemaProblem => ({ path, reason: 'FieldValueInvalid', value, detail: `${field} in body ${detail}` });
  switch (err.keyword) {
    case 'type':
      return {
        path,
        reason: 'FieldValueTypeInvalid',
        value: typeOf(value),
        detail: `${field} in body must be of type ${String(p.type).replace(',null', '')}: ${JSON.stringify(typeOf(value))}`,
      };
    case 'x-kubernetes-int-or-string':
      return {
        path,
        reason: 'FieldValueTypeInvalid',
        value: typeOf(value),
        detail: `${field} in body must be of type integer,string: ${JSON.stringify(typeOf(value))}`,
      };
    case 'required':
      return { path: [...path, String(p.missingProperty)], reason: 'FieldValueRequired' };
    case 'enum':
      return {
        path,
        reason: 'FieldValueNotSupported',
        value,
        detail: `supported values: ${(p.allowedValues as unknown[]).map((x) => shortValue(x)).join(', ')}`,
      };
    case 'pattern':
      return invalid(`should match '${String(p.pattern)}'`);
    case 'minimum':
      return invalid(`should be greater than or equal to ${String(p.limit)}`);
    case 'maximum':
      return invalid(`should be less than or equal to ${String(p.limit)}`);
    case 'exclusiveMinimum':
      return invalid(`should be greater than ${String(p.limit)}`);
    case 'exclusiveMaximum':
      return invalid(`should be less than ${String(p.limit)}`);
    case 'minLength':
      return invalid(`should be at least ${String(p.limit)} chars long`);
    case 'maxLength':
      return invalid(`should be at most ${String(p.limit)} chars long`);
    case 'minItems':
      return invalid(`should have at least ${String(p.limit)} items`);
    case 'maxItems':
      return invalid(`should have at most ${String(p.limit)} items`);
    case 'minProperties':
      return invalid(`should have at least ${String(p.limit)} properties`);
    case 'maxProperties':
      return invalid(`should have at most ${String(p.limit)} properties`);
    case 'multipleOf':
      return invalid(`should be a multiple of ${String(p.multipleOf)}`);
    case 'uniqueItems':
      return { path, reason: 'FieldValueDuplicate', value: (value as unknown[])?.[Number(p.j)] };
    case 'if':
    case 'anyOf':
    case 'oneOf':
    case 'not':
      return invalid(`must validate ${err.keyword === 'not' ? 'not' : `${err.keyword} of the schemas`}`);
    default:
      return invalid(err.message ?? 'is invalid');
  }
}

/** Validates `value` (pruned and defaulted) against `schema`; no problems means it is valid. */
export function schemaProblems(schema: SchemaNode, value: unknown): SchemaProblem[] {
  const validate = compile(schema);
  if (validate(value)) return [];
  const problems: SchemaProblem[] = [];
  const seen = new Set<string>();
  for (const err of validate.errors ?? []) {
    const problem = problemOf(err, value);
    if (!problem) continue;
    const key = `${dottedPath(problem.path)} ${problem.reason} ${problem.detail ?? ''}`;
    if (!seen.has(key)) problems.push(problem);
    seen.add(key);
  }
  return problems;
}

const rootSchema = (apiVersions: readonly string[], kind: string) =>
  v.looseObject({
    apiVersion: v.picklist(apiVersions, `must be ${apiVersions.map((a) => `"${a}"`).join(' or ')}`),
    kind: v.literal(kind, `must be "${kind}"`),
    metadata: objectMetaSchema,
  });

function issuePath(root: unknown, path: Path): [v.IssuePathItem, ...v.IssuePathItem[]] | undefined {
  const items: v.IssuePathItem[] = [];
  let cur: unknown = root;
  path.forEach((key) => {
    const value = (cur as Record<string | number, unknown> | undefined)?.[key];
    items.push(
      typeof key === 'number'
        ? { type: 'array', origin: 'value', input: (cur ?? []) as unknown[], key, value }
        : { type: 'object', origin: 'value', input: (cur ?? {}) as Record<string, unknown>, key, value },
    );
    cur = value;
  });
  return items.length ? (items as [v.IssuePathItem, ...v.IssuePathItem[]]) : undefined;
}

/**
 * The valibot schema of a custom kind's objects: metadata as for every kind, the rest by the
 * CRD's openAPIV3Schema (pruned, defaulted, validated). Unknown fields come out as valibot's
 * strict-object issues, so fieldValidation (Strict, Warn, Ignore) treats them as for built-in kinds.
 * `apiVersion` may be any of `apiVersions` (the served versions); the output has the storage version's
 * (conversion None: the fields are the same, only apiVersion changes).
 */
export function customResourceSchema(
  openAPIV3Schema: SchemaNode,
  apiVersions: readonly string[],
  kind: string,
  storedApiVersion: string,
): v.GenericSchema<unknown, KubeObject> {
  const head = rootSchema(apiVersions, kind);
  const base = v.custom<KubeObject>(() => true);
  return {
    ...base,
    '~run'(dataset: v.UnknownDataset, config: v.Config<v.BaseIssue<unknown>>) {
      const input = dataset.value;
      const headed = head['~run']({ value: input } as v.UnknownDataset, config) as { value: Record<string, unknown>; issues?: v.BaseIssue<unknown>[] };
      const issues: v.BaseIssue<unknown>[] = [...(headed.issues ?? [])];
      if (!isObject(input)) return { ...dataset, typed: false, issues } as never;
      const body = structuredClone(input) as Record<string, unknown>;
      const unknown = pruneUnknown(openAPIV3Schema, body, [], ['apiVersion', 'kind', 'metadata']);
      for (const path of unknown) {
        const items = issuePath(input, path)!;
        const last = items[items.length - 1]!;
        items[items.length - 1] = { ...last, origin: 'key' } as v.IssuePathItem;
        issues.push({
          kind: 'schema',
          type: 'strict_object',
          input: last.value,
          expected: 'never',
          received: JSON.stringify(last.key),
          message: `unknown field "${dottedPath(path)}"`,
          path: items,
        });
      }
      if (unknown.length === 0) {
        applyDefaults(openAPIV3Schema, body);
        for (const p of schemaProblems(openAPIV3Schema, body)) {
          // A Required field is absent: its path's parent exists, the field itself does not.
          const items = issuePath(body, p.path);
          issues.push({
            kind: 'validation',
            type: 'raw_check',
            input: p.value,
            expected: p.reason,
            received: '',
            message: p.detail ?? '',
            ...(items ? { path: items } : {}),
          });
        }
      }
      if (issues.length) return { ...dataset, typed: false, issues } as never;
      delete body.apiVersion;
      delete body.kind;
      delete body.metadata;
      const out = { apiVersion: storedApiVersion, kind: headed.value.kind, metadata: headed.value.metadata, ...body };
      return { ...dataset, typed: true, value: out } as never;
    },
  } as v.GenericSchema<unknown, KubeObject>;
}
