// The OpenAPI documents kube-apiserver serves, built from a kind list: /openapi/v3 (an index and one document per group/version) and /openapi/v2.
import { createHash } from 'node:crypto';
import { apiVersionOf, type KindDefinition } from '../kind.js';
import { defaultPatchMeta } from '../patch-meta.js';
import { KIND_DESCRIPTIONS, COMMON_FIELDS } from './descriptions.js';
import { DELETE_OPTIONS, kindDefinitionName, LIST_META, PATCH, STATUS } from './definition-names.js';
import { defineNamed, newConvertContext, ref, type ConvertContext, type JsonSchema } from './schema-convert.js';

/** One served document: its JSON text and the hash that names this version of it (ETag, `?hash=`). */
export interface ServedDocument {
  json: string;
  hash: string;
}

export interface OpenApiDocuments {
  /** Group/version path (`api/v1`, `apis/apps/v1`) -> its v3 document. */
  v3: ReadonlyMap<string, ServedDocument>;
  /** The v3 index: `{"paths": {"api/v1": {"serverRelativeURL": "/openapi/v3/api/v1?hash=..."}}}`. */
  v3Index: ServedDocument;
  /** Swagger 2.0, every kind in one document. */
  v2: ServedDocument;
}

const GVK = 'x-kubernetes-group-version-kind';

function served(doc: unknown): ServedDocument {
  const json = JSON.stringify(doc);
  // kube-apiserver names versions by a SHA-512 of the document, upper-case hex; clients treat it as opaque.
  return { json, hash: createHash('sha512').update(json).digest('hex').toUpperCase().slice(0, 128) };
}

/** `api/v1` or `apis/apps/v1`: where a group/version's paths start, and its v3 document's name. */
export function groupVersionPath(def: Pick<KindDefinition, 'group' | 'version'>): string {
  return def.group ? `apis/${def.group}/${def.version}` : `api/${def.version}`;
}

/** The shared meta types the operations refer to, written once per document. */
function defineMetaTypes(ctx: ConvertContext): void {
  ctx.definitions.set(LIST_META, {
    description: 'ListMeta describes a list: the resourceVersion it was read at and the token to read on from.',
    type: 'object',
    properties: {
      resourceVersion: { type: 'string', description: 'The version of the store the list was read at.' },
      continue: { type: 'string', description: 'Set when the list was limited: pass it back to read the next chunk.' },
      remainingItemCount: { type: 'integer', format: 'int64', description: 'How many items are left after this chunk, when known.' },
    },
  });
  ctx.definitions.set(STATUS, {
    description: 'Status is the outcome of calls that return no object, and of every failure.',
    type: 'object',
    properties: {
      apiVersion: { type: 'string' },
      kind: { type: 'string' },
      metadata: { allOf: [{ $ref: ref(LIST_META) }] },
      status: { type: 'string', description: 'Success or Failure.' },
      message: { type: 'string' },
      reason: { type: 'string' },
      details: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
      code: { type: 'integer', format: 'int32' },
    },
    [GVK]: [{ group: '', kind: 'Status', version: 'v1' }],
  });
  ctx.definitions.set(PATCH, { description: 'A patch body: JSON patch, merge patch or strategic merge patch.', type: 'object' });
  ctx.definitions.set(DELETE_OPTIONS, {
    description: 'DeleteOptions may be given when deleting an object.',
    type: 'object',
    properties: {
      apiVersion: { type: 'string' },
      kind: { type: 'string' },
      gracePeriodSeconds: { type: 'integer', format: 'int64' },
      propagationPolicy: { type: 'string', enum: ['Orphan', 'Background', 'Foreground'] },
      dryRun: { type: 'array', items: { type: 'string' } },
      preconditions: { type: 'object', properties: { uid: { type: 'string' }, resourceVersion: { type: 'string' } } },
    },
  });
}

/** Defines a kind and its list type; returns their names. */
function defineKind(ctx: ConvertContext, def: KindDefinition): { name: string; list: string } {
  const name = kindDefinitionName(def);
  const gvk = { group: def.group, kind: def.kind, version: def.version };
  ctx.kindNames.add(name);
  defineNamed(ctx, name, def.schema, def.patchMeta ?? defaultPatchMeta, {
    ...(KIND_DESCRIPTIONS[def.kind] ? { description: KIND_DESCRIPTIONS[def.kind] } : {}),
    [GVK]: [gvk],
  });
  // kubectl treats apiVersion and kind as optional in what users write (it fills them from the file's context).
  const kindSchema = ctx.definitions.get(name)!;
  if (Array.isArray(kindSchema.required)) {
    const required = kindSchema.required.filter((f) => f !== 'apiVersion' && f !== 'kind' && f !== 'metadata');
    if (required.length > 0) kindSchema.required = required;
    else delete kindSchema.required;
  }
  const list = `${name}List`;
  ctx.definitions.set(list, {
    description: `${def.kind}List is a list of ${def.kind} objects.`,
    type: 'object',
    required: ['items'],
    properties: {
      apiVersion: { type: 'string', description: COMMON_FIELDS.apiVersion },
      kind: { type: 'string', description: COMMON_FIELDS.kind },
      items: { type: 'array', description: COMMON_FIELDS.items, items: { $ref: ref(name) } },
      metadata: { allOf: [{ $ref: ref(LIST_META) }], description: 'Standard list metadata.' },
    },
    [GVK]: [{ ...gvk, kind: `${def.kind}List` }],
  });
  return { name, list };
}

const json = (schema: JsonSchema) => ({ 'application/json': { schema }, 'application/yaml': { schema } });

function queryParam(name: string, description: string, type = 'string'): JsonSchema {
  return { name, in: 'query', description, schema: { type }, ...(type === 'boolean' ? {} : { uniqueItems: true }) };
}

const PATH_PARAM = (name: string, description: string): JsonSchema => ({
  name,
  in: 'path',
  required: true,
  description,
  schema: { type: 'string' },
  uniqueItems: true,
});
const DRY_RUN = queryParam('dryRun', 'When present (All), the request is validated and admitted but nothing is stored.');
const FIELD_MANAGER = queryParam('fieldManager', 'The name of the actor making the change.');
/** Declared so that kubectl leaves validation to the server (it sends fieldValidation=Strict), as with kube-apiserver. */
const FIELD_VALIDATION = queryParam('fieldValidation', 'How the server treats unknown or duplicate fields: Ignore, Warn or Strict.');

/** The operations of one kind, as far as clients read them (kubectl: the PATCH operation's parameters and GVK). */
function kindPaths(def: KindDefinition, names: { name: string; list: string }): Record<string, JsonSchema> {
  const root = `/${groupVersionPath(def)}`;
  const gvk = { group: def.group, kind: def.kind, version: def.version };
  const object = { $ref: ref(names.name) };
  const op = (action: string, verb: string, scope: string, extra: JsonSchema): JsonSchema => ({
    description: `${verb} ${scope}`,
    operationId: `${action}${def.group ? def.group.split('.')[0] : 'Core'}${def.version}${def.namespaced ? 'Namespaced' : ''}${def.kind}`,
    tags: [def.group ? `${def.group.split('.')[0]}_${def.version}` : `core_${def.version}`],
    responses: { '200': { description: 'OK', content: json(object) }, '401': { description: 'Unauthorized' } },
    'x-kubernetes-action': action,
    [GVK]: gvk,
    ...extra,
  });
  const write = [DRY_RUN, FIELD_MANAGER, FIELD_VALIDATION];
  const body = { content: { '*/*': { schema: object } }, required: true };
  const namespaceParam = PATH_PARAM('namespace', 'object name and auth scope, such as for teams and projects');
  const nameParam = PATH_PARAM('name', `name of the ${def.kind}`);
  const collection = def.namespaced ? `${root}/namespaces/{namespace}/${def.resource}` : `${root}/${def.resource}`;
  const scopeParams = def.namespaced ? [namespaceParam] : [];
  const paths: Record<string, JsonSchema> = {
    [collection]: {
      get: op('list', 'list or watch objects of kind', def.kind, {
        operationId: `list${def.namespaced ? 'Namespaced' : ''}${def.kind}`,
        responses: { '200': { description: 'OK', content: json({ $ref: ref(names.list) }) } },
      }),
      post: op('post', 'create', `a ${def.kind}`, { parameters: write, requestBody: body }),
      parameters: scopeParams,
    },
    [`${collection}/{name}`]: {
      get: op('get', 'read the specified', def.kind, {}),
      put: op('put', 'replace the specified', def.kind, { parameters: write, requestBody: body }),
      patch: op('patch', 'partially update the specified', def.kind, {
        parameters: write,
        requestBody: {
          content: Object.fromEntries(
            ['application/json-patch+json', 'application/merge-patch+json', 'application/strategic-merge-patch+json'].map((t) => [
              t,
              { schema: { $ref: ref(PATCH) } },
            ]),
          ),
          required: true,
        },
      }),
      delete: op('delete', 'delete', `a ${def.kind}`, {
        parameters: [DRY_RUN],
        responses: { '200': { description: 'OK', content: json({ $ref: ref(STATUS) }) } },
      }),
      parameters: [...scopeParams, nameParam],
    },
  };
  if (def.namespaced) {
    paths[`${root}/${def.resource}`] = {
      get: op('list', 'list or watch objects of kind', `${def.kind} in all namespaces`, {
        operationId: `list${def.kind}ForAllNamespaces`,
        responses: { '200': { description: 'OK', content: json({ $ref: ref(names.list) }) } },
      }),
    };
  }
  if (def.statusSubresource) {
    paths[`${collection}/{name}/status`] = {
      get: op('get', 'read status of the specified', def.kind, {}),
      put: op('put', 'replace status of the specified', def.kind, { parameters: write, requestBody: body }),
      parameters: [...scopeParams, nameParam],
    };
  }
  return paths;
}

function v3Document(kinds: readonly KindDefinition[], title: string): unknown {
  const ctx = newConvertContext();
  defineMetaTypes(ctx);
  const paths: Record<string, JsonSchema> = {};
  for (const def of kinds) Object.assign(paths, kindPaths(def, defineKind(ctx, def)));
  return {
    openapi: '3.0.0',
    info: { title, version: 'v1' },
    paths,
    components: { schemas: Object.fromEntries([...ctx.definitions].sort(([a], [b]) => a.localeCompare(b))) },
  };
}

/** Rewrites a v3 schema for swagger 2.0: refs under #/definitions, a described $ref without allOf. */
function toV2(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(toV2);
  if (value === null || typeof value !== 'object') return value;
  const obj = value as Record<string, unknown>;
  if (Array.isArray(obj.allOf) && obj.allOf.length === 1) {
    const { allOf, ...rest } = obj;
    return { ...(toV2(allOf[0]) as object), ...(toV2(rest) as object) };
  }
  const out: Record<string, unknown> = {};
  for (const [k, val] of Object.entries(obj)) {
    out[k] = k === '$ref' && typeof val === 'string' ? val.replace('#/components/schemas/', '#/definitions/') : toV2(val);
  }
  return out;
}

function v2Document(kinds: readonly KindDefinition[]): unknown {
  const ctx = newConvertContext();
  defineMetaTypes(ctx);
  for (const def of kinds) defineKind(ctx, def);
  return {
    swagger: '2.0',
    info: { title: 'minik8s', version: 'v1' },
    paths: {},
    definitions: toV2(Object.fromEntries([...ctx.definitions].sort(([a], [b]) => a.localeCompare(b)))),
  };
}

/** Builds every document for a kind list (registry kinds now; CRDs join by passing a longer list). */
export function buildOpenApiDocuments(kinds: readonly KindDefinition[]): OpenApiDocuments {
  const byGroupVersion = new Map<string, KindDefinition[]>();
  for (const def of kinds) {
    const path = groupVersionPath(def);
    byGroupVersion.set(path, [...(byGroupVersion.get(path) ?? []), def]);
  }
  const v3 = new Map<string, ServedDocument>();
  for (const [path, defs] of byGroupVersion) v3.set(path, served(v3Document(defs, `minik8s ${apiVersionOf(defs[0]!)}`)));
  const index = {
    paths: Object.fromEntries([...v3].map(([path, doc]) => [path, { serverRelativeURL: `/openapi/v3/${path}?hash=${doc.hash}` }])),
  };
  return { v3, v3Index: served(index), v2: served(v2Document(kinds)) };
}

const cache = new WeakMap<readonly KindDefinition[], OpenApiDocuments>();

/** The documents of a kind list, built once per list: a changed kind list (CRDs) is a new array and gets new documents. */
export function openApiDocuments(kinds: readonly KindDefinition[]): OpenApiDocuments {
  let docs = cache.get(kinds);
  if (!docs) {
    docs = buildOpenApiDocuments(kinds);
    cache.set(kinds, docs);
  }
  return docs;
}
