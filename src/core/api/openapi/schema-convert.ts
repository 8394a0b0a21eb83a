// Valibot schemas -> OpenAPI v3 schemas with Kubernetes' definition names, $refs and extensions (int-or-string, patch strategy, list types).
import type * as v from 'valibot';
import { labelSelectorSchema } from '../selector.js';
import { objectMetaSchema, ownerReferenceSchema } from '../meta.js';
import type { FieldPatchMeta, PatchMeta } from '../patch-meta.js';
import { podTemplateSpecSchema, probeSchema } from '../pod.js';
import { quantitySchema } from '../quantity.js';
import { objectReferenceSchema } from '../endpoints.js';
import { taintSchema } from '../node.js';
import { COMMON_FIELDS, TYPE_DESCRIPTIONS } from './descriptions.js';
import { INT_OR_STRING, LABEL_SELECTOR, META, NESTED_NAMES, OBJECT_META, QUANTITY } from './definition-names.js';

/** A JSON schema as OpenAPI v3 writes it (a plain object, serialised as is). */
export type JsonSchema = { [key: string]: unknown };

/** A valibot schema or action, read structurally: we only look at the fields valibot documents. */
interface Node {
  kind: string;
  type: string;
  pipe?: readonly Node[];
  wrapped?: Node;
  entries?: Readonly<Record<string, Node>>;
  item?: Node;
  options?: readonly unknown[];
  literal?: unknown;
  key?: Node;
  value?: Node;
  requirement?: unknown;
  description?: string;
}

/** Shared schemas known by identity, wherever a kind uses them. */
const KNOWN: ReadonlyMap<unknown, string> = new Map<unknown, string>([
  [objectMetaSchema, OBJECT_META],
  [ownerReferenceSchema, `${META}.OwnerReference`],
  [labelSelectorSchema, LABEL_SELECTOR],
  [podTemplateSpecSchema, 'io.k8s.api.core.v1.PodTemplateSpec'],
  [probeSchema, 'io.k8s.api.core.v1.Probe'],
  [objectReferenceSchema, 'io.k8s.api.core.v1.ObjectReference'],
  [taintSchema, 'io.k8s.api.core.v1.Taint'],
]);

const INT32_MAX = 2 ** 31 - 1;
const INT32_MIN = -(2 ** 31);

/** The schema a pipe starts from (pipes nest: withChecks inside v.pipe(..., transform)). */
function base(node: Node): Node {
  let n = node;
  while (n.pipe && n.pipe[0] !== n && n.pipe[0]?.kind === 'schema') n = n.pipe[0]!;
  // mapSchema: a custom "is a map" check piped into the record that says what the map holds.
  if (n.type === 'custom' && node.pipe) {
    const inner = node.pipe.slice(1).find((p) => p.kind === 'schema');
    if (inner) return base(inner);
  }
  return n;
}

/** Every action of a schema's pipes, outermost first. */
function actions(node: Node): Node[] {
  const out: Node[] = [];
  let n: Node | undefined = node;
  while (n?.pipe) {
    out.push(...n.pipe.slice(1).filter((p) => p.kind !== 'schema'));
    const next: Node | undefined = n.pipe[0];
    if (next === n || next?.kind !== 'schema') break;
    n = next;
  }
  return out;
}

function unwrapOptional(node: Node): { node: Node; optional: boolean; nullable: boolean } {
  let n = node;
  let optional = false;
  let nullable = false;
  for (;;) {
    if (n.type === 'optional' || n.type === 'exact_optional' || n.type === 'undefinedable') optional = true;
    else if (n.type === 'nullable') nullable = true;
    else if (n.type === 'nullish') {
      optional = true;
      nullable = true;
    } else break;
    n = n.wrapped!;
  }
  return { node: n, optional, nullable };
}

export interface ConvertContext {
  /** Definitions made so far, by Kubernetes name; conversion adds the named types it meets. */
  definitions: Map<string, JsonSchema>;
  /** Which definition name each schema (by identity) got, so shared schemas are defined once. */
  names: Map<unknown, string>;
  /** Top-level kinds' definition names: their `spec` and `status` are named `<Kind>Spec`, `<Kind>Status`. */
  kindNames: Set<string>;
}

export function newConvertContext(): ConvertContext {
  return { definitions: new Map(), names: new Map(KNOWN), kindNames: new Set() };
}

export const ref = (name: string) => `#/components/schemas/${name}`;

/**
 * Defines `name` from `schema` (once: a name met again keeps its first definition) and returns
 * the name. `patch` is the patch metadata of the type's own fields.
 */
export function defineNamed(ctx: ConvertContext, name: string, schema: v.GenericSchema | Node, patch?: PatchMeta, extra: JsonSchema = {}): string {
  if (ctx.definitions.has(name)) return name;
  const root = base(schema as Node);
  if (!ctx.names.has(root)) ctx.names.set(root, name);
  // Reserved first, so a type reaching itself refers to the name instead of recursing.
  ctx.definitions.set(name, {});
  const converted = convertNode(ctx, schema as Node, { owner: name, rel: '', patch });
  const description = TYPE_DESCRIPTIONS[name];
  ctx.definitions.set(name, { ...(description && !converted.description ? { description } : {}), ...converted, ...extra });
  return name;
}

interface Where {
  /** The named type we are inside, and our path in it (`containers[]`), for NESTED_NAMES. */
  owner?: string;
  rel: string;
  /** Patch metadata of the fields of the object being converted. */
  patch?: PatchMeta;
}

function nestedName(ctx: ConvertContext, where: Where): string | undefined {
  if (!where.owner) return undefined;
  const listed = NESTED_NAMES[where.owner]?.[where.rel];
  if (listed) return listed;
  if (!ctx.kindNames.has(where.owner)) return undefined;
  // Some kinds narrow metadata (a Service's name is a DNS-1035 label): it is still ObjectMeta to clients.
  if (where.rel === 'metadata') return OBJECT_META;
  if (where.rel === 'spec' || where.rel === 'status') return `${where.owner}${where.rel === 'spec' ? 'Spec' : 'Status'}`;
  return undefined;
}

function describe(node: Node): string | undefined {
  return actions(node).find((a) => a.type === 'description')?.description;
}

function isIntegerNumber(node: Node): boolean {
  return base(node).type === 'number' && actions(node).some((a) => a.type === 'integer');
}

/** Converts one schema in place (named types become $refs). */
function convertNode(ctx: ConvertContext, node: Node, where: Where): JsonSchema {
  const { node: inner } = unwrapOptional(node);
  const b = base(inner);
  if (b === base(quantitySchema as unknown as Node)) return { $ref: ref(defineQuantity(ctx)) };
  const known = ctx.names.get(b) ?? nestedName(ctx, where);
  if (known && !(known === where.owner && where.rel === '')) {
    defineNamed(ctx, known, inner, where.patch);
    return { $ref: ref(known) };
  }
  const out = convertStructure(ctx, inner, b, where);
  const description = describe(inner);
  return description ? { description, ...out } : out;
}

function convertStructure(ctx: ConvertContext, node: Node, b: Node, where: Where): JsonSchema {
  const acts = actions(node);
  const req = (type: string) => acts.find((a) => a.type === type)?.requirement;
  switch (b.type) {
    case 'string': {
      const out: JsonSchema = { type: 'string' };
      if (acts.some((a) => a.type === 'iso_timestamp' || a.type === 'iso_date_time')) out.format = 'date-time';
      const min = req('min_length');
      const max = req('max_length');
      if (typeof min === 'number' && min > 0) out.minLength = min;
      if (typeof max === 'number') out.maxLength = max;
      return out;
    }
    case 'number': {
      if (!acts.some((a) => a.type === 'integer')) return { type: 'number', format: 'double' };
      const min = req('min_value');
      const max = req('max_value');
      const int32 = typeof max === 'number' && max <= INT32_MAX && (typeof min !== 'number' || min >= INT32_MIN);
      const out: JsonSchema = { type: 'integer', format: int32 ? 'int32' : 'int64' };
      if (typeof min === 'number' && min > Number.MIN_SAFE_INTEGER) out.minimum = min;
      if (typeof max === 'number' && max < Number.MAX_SAFE_INTEGER) out.maximum = max;
      return out;
    }
    case 'boolean':
      return { type: 'boolean' };
    case 'picklist':
    case 'enum': {
      const values = (b.options ?? []) as unknown[];
      const type = values.every((x) => typeof x === 'number') ? 'integer' : 'string';
      return { type, enum: values };
    }
    case 'literal':
      // apiVersion and kind: Kubernetes documents them as plain strings, and the server names the one value it takes.
      return { type: typeof b.literal === 'number' ? 'number' : typeof b.literal === 'boolean' ? 'boolean' : 'string' };
    case 'union':
      return convertUnion(ctx, b, where);
    case 'array': {
      return { type: 'array', items: convertNode(ctx, b.item!, { owner: where.owner, rel: `${where.rel}[]`, patch: where.patch }) };
    }
    case 'record':
      return {
        type: 'object',
        additionalProperties: convertNode(ctx, b.value!, { owner: where.owner, rel: `${where.rel}{}` }),
      };
    case 'object':
    case 'strict_object':
    case 'loose_object':
      return convertObject(ctx, b, where);
    default:
      // unknown, any, custom checks we cannot read: free-form, which the server still validates.
      return { 'x-kubernetes-preserve-unknown-fields': true };
  }
}

function convertUnion(ctx: ConvertContext, b: Node, where: Where): JsonSchema {
  const options = (b.options ?? []) as Node[];
  const types = new Set(options.map((o) => base(unwrapOptional(o).node).type));
  if (types.size === 2 && types.has('string') && types.has('number') && options.some((o) => isIntegerNumber(o))) {
    return { $ref: ref(defineIntOrString(ctx)) };
  }
  const converted = options.map((o) => convertNode(ctx, o, where));
  if (converted.length === 1) return converted[0]!;
  const first = converted[0]?.type;
  if (first !== undefined && converted.every((c) => c.type === first && c.type !== 'object')) return { type: first };
  return { anyOf: converted };
}

function patchExtensions(meta: FieldPatchMeta | undefined, isList: boolean): JsonSchema {
  if (!meta) return {};
  const out: JsonSchema = {};
  const strategies = [meta.merge ? 'merge' : undefined, meta.retainKeys ? 'retainKeys' : undefined].filter((s) => s !== undefined);
  if (strategies.length > 0) out['x-kubernetes-patch-strategy'] = strategies.join(',');
  if (meta.mergeKey) out['x-kubernetes-patch-merge-key'] = meta.mergeKey;
  if (isList && meta.merge) {
    if (meta.mergeKey) {
      out['x-kubernetes-list-type'] = 'map';
      out['x-kubernetes-list-map-keys'] = [meta.mergeKey];
    } else out['x-kubernetes-list-type'] = 'set';
  }
  return out;
}

function convertObject(ctx: ConvertContext, b: Node, where: Where): JsonSchema {
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  const topLevel = where.rel === '' && where.owner !== undefined && ctx.kindNames.has(where.owner);
  for (const [field, entry] of Object.entries(b.entries ?? {})) {
    const { node, optional } = unwrapOptional(entry);
    if (!optional) required.push(field);
    const rel = where.rel === '' ? field : `${where.rel}.${field}`;
    const meta = where.patch?.[field];
    const isList = base(node).type === 'array';
    const converted = convertNode(ctx, node, { owner: where.owner, rel, patch: meta?.fields });
    const description = (where.owner ? TYPE_DESCRIPTIONS[`${where.owner}.${rel}`] : undefined) ?? (topLevel ? COMMON_FIELDS[field] : undefined);
    const extensions = patchExtensions(meta, isList);
    // A $ref takes no siblings in OpenAPI 3.0: Kubernetes wraps it in allOf to describe the field.
    if (converted.$ref && (description || Object.keys(extensions).length > 0)) {
      properties[field] = { allOf: [converted], ...(description ? { description } : {}), ...extensions };
    } else {
      properties[field] = { ...(description && !converted.description ? { description } : {}), ...converted, ...extensions };
    }
  }
  const out: JsonSchema = { type: 'object', properties };
  if (required.length > 0) out.required = required;
  if (b.type === 'loose_object') out['x-kubernetes-preserve-unknown-fields'] = true;
  return out;
}

function defineIntOrString(ctx: ConvertContext): string {
  if (!ctx.definitions.has(INT_OR_STRING)) {
    ctx.definitions.set(INT_OR_STRING, {
      description: TYPE_DESCRIPTIONS[INT_OR_STRING],
      type: 'string',
      format: 'int-or-string',
      'x-kubernetes-int-or-string': true,
    });
  }
  return INT_OR_STRING;
}

function defineQuantity(ctx: ConvertContext): string {
  if (!ctx.definitions.has(QUANTITY)) {
    ctx.definitions.set(QUANTITY, {
      description: TYPE_DESCRIPTIONS[QUANTITY],
      type: 'string',
      'x-kubernetes-int-or-string': true,
    });
  }
  return QUANTITY;
}
