// Runs a kind's schema and turns valibot issues into a Kubernetes-shaped 422 (field paths, cause reasons, one message).
import * as v from 'valibot';
import type { KindDefinition } from './kind.js';
import type { KubeObject } from './meta.js';
import { BadRequestError, InvalidError, type StatusCause } from '../errors.js';

export type CauseReason =
  | 'FieldValueRequired'
  | 'FieldValueInvalid'
  | 'FieldValueNotSupported'
  | 'FieldValueTypeInvalid'
  | 'FieldValueDuplicate'
  | 'FieldValueForbidden'
  | 'FieldValueNotFound';

const REASONS = new Set<string>([
  'FieldValueRequired',
  'FieldValueInvalid',
  'FieldValueNotSupported',
  'FieldValueTypeInvalid',
  'FieldValueDuplicate',
  'FieldValueForbidden',
  'FieldValueNotFound',
]);

/** A problem found by a cross-field check, at a path relative to the value being checked. */
export interface FieldProblem {
  path: readonly (string | number)[];
  reason: CauseReason;
  /** Shown after the value, e.g. "must be unique"; for NotSupported, the list of supported values. */
  detail?: string;
  /** The offending value (shown shortened); defaults to the value at `path`. */
  value?: unknown;
}

function pathItems(root: unknown, path: readonly (string | number)[]): [v.IssuePathItem, ...v.IssuePathItem[]] | undefined {
  const items: v.IssuePathItem[] = [];
  let cur: unknown = root;
  for (const key of path) {
    const value = cur !== null && typeof cur === 'object' ? (cur as Record<string | number, unknown>)[key] : undefined;
    items.push(
      typeof key === 'number'
        ? { type: 'array', origin: 'value', input: (Array.isArray(cur) ? cur : []) as unknown[], key, value }
        : { type: 'object', origin: 'value', input: (cur ?? {}) as Record<string, unknown>, key, value },
    );
    cur = value;
  }
  return items.length ? (items as [v.IssuePathItem, ...v.IssuePathItem[]]) : undefined;
}

/**
 * A cross-field check for a schema's pipe (unique names, selector versus labels, ...).
 * It runs only when the value is otherwise well-typed, and reports each problem with its own
 * path and Kubernetes reason (the reason travels in the issue's `expected`).
 */
function fieldChecks<T>(check: (value: T) => FieldProblem[]): v.RawCheckAction<T> {
  return v.rawCheck<T>(({ dataset, addIssue }) => {
    // Checks read the value as typed; after an earlier problem it may not be (a union may pass a failed string through).
    if (!dataset.typed || dataset.issues) return;
    for (const p of check(dataset.value)) {
      const path = pathItems(dataset.value, p.path);
      const value = p.value !== undefined ? p.value : path ? path[path.length - 1].value : dataset.value;
      addIssue({ message: p.detail ?? '', expected: p.reason, input: value, ...(path ? { path } : {}) });
    }
  });
}

/** `schema` followed by a cross-field check on its (typed) output; see fieldChecks. */
export function withChecks<const TSchema extends v.GenericSchema>(
  schema: TSchema,
  check: (value: v.InferOutput<TSchema>) => FieldProblem[],
): v.SchemaWithPipe<readonly [TSchema, v.RawCheckAction<v.InferOutput<TSchema>>]> {
  return v.pipe(schema, fieldChecks(check)) as unknown as v.SchemaWithPipe<readonly [TSchema, v.RawCheckAction<v.InferOutput<TSchema>>]>;
}

/** Reports values that occur more than once, at `[listPath..., index, key]`. */
export function duplicates<T>(items: readonly T[], keyOf: (item: T) => unknown, at: (index: number) => (string | number)[]): FieldProblem[] {
  const seen = new Set<unknown>();
  const problems: FieldProblem[] = [];
  items.forEach((item, i) => {
    const key = keyOf(item);
    if (key === undefined) return;
    if (seen.has(key)) problems.push({ path: at(i), reason: 'FieldValueDuplicate', value: key });
    seen.add(key);
  });
  return problems;
}

/**
 * Map-valued fields (valibot records): their entries print as `[key]`, and a bad key is reported
 * on the map itself. Valibot marks record entries like object fields, so we know them by name.
 */
const MAP_FIELDS = new Set(['labels', 'annotations', 'nodeSelector', 'matchLabels', 'requests', 'limits', 'capacity', 'allocatable', 'sizeLimit', 'files']);

/** `spec.containers[0].image`; map entries as `spec.nodeSelector[disk]`. */
export function fieldPath(path: readonly v.IssuePathItem[] | undefined): string {
  let out = '';
  let parentKey: unknown;
  for (const item of path ?? []) {
    const key = String(item.key);
    if (item.type === 'array' || item.type === 'set') out += `[${key}]`;
    else if (MAP_FIELDS.has(String(parentKey))) {
      if (item.origin === 'value') out += `[${key}]`;
    } else out += out ? `.${key}` : key;
    parentKey = item.key;
  }
  return out;
}

const MAX_VALUE_CHARS = 64;

/** A short rendering of a value: strings quoted and truncated, structures by their type only. */
export function shortValue(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value.length > MAX_VALUE_CHARS ? `${value.slice(0, MAX_VALUE_CHARS)}...` : value);
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  if (value === null) return 'null';
  if (value === undefined) return '"undefined"';
  return Array.isArray(value) ? '"array"' : `"${typeof value}"`;
}

/** Valibot's built-in messages start like this; ours do not, so ours are shown as they are. */
const DEFAULT_MESSAGE = /^Invalid (type|key|length|format|value|entry|input|size|\w+):/;

function customMessage(issue: v.BaseIssue<unknown>): string | undefined {
  return issue.message && !DEFAULT_MESSAGE.test(issue.message) ? issue.message : undefined;
}

/** `("A" | "B")` -> `"A", "B"` */
function supportedValues(expected: string | null): string {
  if (!expected) return '';
  return expected
    .replace(/^\((.*)\)$/, '$1')
    .split(' | ')
    .join(', ');
}

function typeName(expected: string | null): string {
  if (!expected) return 'the expected type';
  return expected
    .replace(/^\((.*)\)$/, '$1')
    .split(' | ')
    .map((t) => (t === 'Object' ? 'object' : t === 'Array' ? 'array' : t))
    .join(' or ');
}

function defaultDetail(issue: v.BaseIssue<unknown>): string {
  const req = (issue as { requirement?: unknown }).requirement;
  const isList = Array.isArray(issue.input);
  switch (issue.type) {
    case 'min_value':
      return `must be greater than or equal to ${String(req)}`;
    case 'max_value':
      return `must be less than or equal to ${String(req)}`;
    case 'integer':
      return 'must be an integer';
    case 'finite':
      return 'must be a finite number';
    case 'min_length':
      return isList ? `must have at least ${String(req)} items` : `must be at least ${String(req)} characters`;
    case 'max_length':
      return isList ? `must have at most ${String(req)} items` : `must be no more than ${String(req)} characters`;
    case 'regex':
      return `must match the regular expression '${req instanceof RegExp ? req.source : String(req)}'`;
    default:
      return issue.message;
  }
}

interface Cause extends StatusCause {
  field: string;
}

/** One valibot issue -> one Kubernetes cause: `{field, reason, message}`, the message without the field. */
export function causeFromIssue(issue: v.BaseIssue<unknown>): Cause {
  const field = fieldPath(issue.path);
  const last = issue.path?.[issue.path.length - 1];
  const custom = customMessage(issue);

  if (issue.type === 'raw_check' && issue.expected && REASONS.has(issue.expected)) {
    return causeFor(field, issue.expected as CauseReason, issue.input, issue.message);
  }
  if (issue.kind === 'schema' && last?.origin === 'key' && (issue.type === 'object' || issue.type === 'strict_object' || issue.type === 'loose_object')) {
    if (issue.expected === 'never') return { field, reason: 'FieldValueNotSupported', message: `unknown field "${field}"` };
    return { field, reason: 'FieldValueRequired', message: 'Required value' };
  }
  if (issue.kind === 'schema' && (issue.type === 'picklist' || issue.type === 'literal' || issue.type === 'enum')) {
    return causeFor(field, 'FieldValueNotSupported', issue.input, `supported values: ${supportedValues(issue.expected)}`);
  }
  if (issue.kind === 'schema') {
    return causeFor(field, 'FieldValueTypeInvalid', issue.input, custom ?? `must be of type ${typeName(issue.expected)}`);
  }
  return causeFor(field, 'FieldValueInvalid', issue.input, custom ?? defaultDetail(issue));
}

function causeFor(field: string, reason: CauseReason, value: unknown, detail: string): Cause {
  const tail = detail ? `: ${detail}` : '';
  switch (reason) {
    case 'FieldValueRequired':
      return { field, reason, message: `Required value${tail}` };
    case 'FieldValueDuplicate':
      return { field, reason, message: `Duplicate value: ${shortValue(value)}${tail}` };
    case 'FieldValueNotSupported':
      return { field, reason, message: `Unsupported value: ${shortValue(value)}${tail}` };
    case 'FieldValueForbidden':
      return { field, reason, message: `Forbidden${tail}` };
    case 'FieldValueNotFound':
      return { field, reason, message: `Not found: ${shortValue(value)}${tail}` };
    case 'FieldValueTypeInvalid':
    case 'FieldValueInvalid':
      return { field, reason, message: `Invalid value: ${shortValue(value)}${tail}` };
  }
}

/** The aggregate message lists at most this many causes, so that a huge bad object gives a short message. */
const MAX_LISTED = 10;

function render(c: Cause): string {
  if (c.message.startsWith('unknown field')) return c.message;
  return c.field ? `${c.field}: ${c.message}` : c.message;
}

/** `Pod "web" is invalid: [a: ..., b: ...]`, or without brackets for a single cause. */
export function invalidMessage(kind: string, name: string, causes: readonly Cause[]): string {
  const listed = causes.slice(0, MAX_LISTED).map(render);
  if (causes.length > MAX_LISTED) listed.push(`and ${causes.length - MAX_LISTED} more`);
  const body = causes.length === 1 ? listed[0] : `[${listed.join(', ')}]`;
  return `${kind} "${name}" is invalid: ${body}`;
}

function metaOf(input: unknown): Record<string, unknown> | undefined {
  if (input === null || typeof input !== 'object') return undefined;
  const meta = (input as Record<string, unknown>).metadata;
  return meta !== null && typeof meta === 'object' && !Array.isArray(meta) ? (meta as Record<string, unknown>) : undefined;
}

/**
 * Validates and defaults a whole object against its kind. Returns the object to store,
 * or throws InvalidError (422) with one cause per problem. A stored object must have a name:
 * callers turn generateName into a name before validating.
 */
export function validateObject(def: KindDefinition, input: unknown): KubeObject {
  const result = v.safeParse(def.schema, input);
  const causes: Cause[] = result.success ? [] : result.issues.map((i) => causeFromIssue(i));
  const meta = metaOf(input);
  if (meta && (meta.name === undefined || meta.name === '') && !causes.some((c) => c.field === 'metadata.name')) {
    causes.unshift({ field: 'metadata.name', reason: 'FieldValueRequired', message: 'Required value: name or generateName is required' });
  }
  if (causes.length === 0 && result.success) return result.output;
  const name = typeof meta?.name === 'string' ? meta.name : typeof meta?.generateName === 'string' ? meta.generateName : '';
  // details.kind is the kind here (Kubernetes' NewInvalid), not the resource as in NotFound: kubectl prints `The Pod "x" is invalid`.
  throw new InvalidError(invalidMessage(def.kind, shortName(name), causes), {
    kind: def.kind,
    group: def.group,
    name: shortName(name),
    causes: causes.slice(0, 100),
  });
}

function shortName(name: string): string {
  return name.length > 253 ? `${name.slice(0, 253)}...` : name;
}

/** The 422 for problems found outside the schema (update rules, allocations), one cause per problem. */
export function invalidError(def: KindDefinition, objectName: string, problems: readonly FieldProblem[]): InvalidError {
  const causes = problems.map((p) =>
    causeFor(p.path.map((k, i) => (typeof k === 'number' ? `[${k}]` : i === 0 ? k : `.${k}`)).join(''), p.reason, p.value, p.detail ?? ''),
  );
  const name = shortName(objectName);
  return new InvalidError(invalidMessage(def.kind, name, causes), { kind: def.kind, group: def.group, name, causes });
}

/** Runs a kind's update rules; throws InvalidError (422) naming each field an update may not change. */
export function validateUpdate(def: KindDefinition, existing: KubeObject, next: KubeObject): void {
  const problems = def.validateUpdate?.(existing, next) ?? [];
  if (problems.length === 0) return;
  throw invalidError(def, next.metadata.name ?? '', problems);
}

/** kube-apiserver's fieldValidation: what becomes of fields the kind does not have. */
export type FieldValidation = 'Ignore' | 'Warn' | 'Strict';

/** Reads the `fieldValidation` query parameter; absent is Strict (stricter than Kubernetes' Warn: a typo is refused, not dropped). */
export function parseFieldValidation(value: string | undefined): FieldValidation {
  if (value === undefined || value === '') return 'Strict';
  if (value === 'Ignore' || value === 'Warn' || value === 'Strict') return value;
  throw new BadRequestError(`fieldValidation: Unsupported value: ${JSON.stringify(value)}: supported values: "Ignore", "Strict", "Warn"`);
}

/** True for the issue of a key the schema does not have (a strict object's extra key). */
function isUnknownKey(issue: v.BaseIssue<unknown>): boolean {
  const last = issue.path?.[issue.path.length - 1];
  return issue.kind === 'schema' && last?.origin === 'key' && issue.expected === 'never';
}

/**
 * validateObject with a fieldValidation directive. Strict refuses unknown fields as
 * validateObject does; Ignore and Warn drop them from (a copy of) the input and validate the rest,
 * returning their paths so that Warn can send each as a warning, as kube-apiserver does.
 */
export function validateObjectWith(def: KindDefinition, input: unknown, fieldValidation: FieldValidation): { object: KubeObject; unknownFields: string[] } {
  if (fieldValidation === 'Strict') return { object: validateObject(def, input), unknownFields: [] };
  const result = v.safeParse(def.schema, input);
  const unknown = result.success ? [] : result.issues.filter(isUnknownKey);
  if (unknown.length === 0) return { object: validateObject(def, input), unknownFields: [] };
  const stripped = structuredClone(input) as Record<string, unknown>;
  for (const issue of unknown) {
    const keys = issue.path!.map((p) => p.key as string | number);
    let parent: unknown = stripped;
    for (const key of keys.slice(0, -1)) parent = (parent as Record<string | number, unknown>)?.[key];
    if (parent !== null && typeof parent === 'object') delete (parent as Record<string | number, unknown>)[keys.at(-1)!];
  }
  return { object: validateObject(def, stripped), unknownFields: unknown.map((i) => fieldPath(i.path)) };
}
