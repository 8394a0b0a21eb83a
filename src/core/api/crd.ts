// CustomResourceDefinition (apiextensions.k8s.io/v1): a kind users add to the API, with its names, versions, schemas and subresources.
import * as v from 'valibot';
import type { KindDefinition } from './kind.js';
import { conditionSchema, DNS1123_LABEL, DNS1123_SUBDOMAIN, kindSchema, type Condition } from './meta.js';
import { duplicates, type FieldProblem, withChecks } from './validate.js';

export const CRD_GROUP = 'apiextensions.k8s.io';
/** Held by every CRD until its objects are gone (Kubernetes' name for it). */
export const CRD_CLEANUP_FINALIZER = 'customresourcecleanup.apiextensions.k8s.io';

/** A schema node: kept as written (JSON schema is open-ended); crd-schema.ts reads it. */
const jsonSchemaNode = v.record(v.string(), v.unknown());

const namesSchema = v.strictObject({
  plural: v.string(),
  singular: v.optional(v.string()),
  kind: v.string(),
  listKind: v.optional(v.string()),
  shortNames: v.optional(v.array(v.string())),
  categories: v.optional(v.array(v.string())),
});
export type CrdNames = v.InferOutput<typeof namesSchema>;

const printerColumnSchema = v.strictObject({
  name: v.string(),
  type: v.picklist(['integer', 'number', 'string', 'boolean', 'date']),
  format: v.optional(v.string()),
  description: v.optional(v.string()),
  priority: v.optional(v.pipe(v.number(), v.integer('must be an integer'), v.minValue(0, 'must be greater than or equal to 0'))),
  jsonPath: v.string(),
});
export type PrinterColumn = v.InferOutput<typeof printerColumnSchema>;

const scaleSubresourceSchema = v.strictObject({
  specReplicasPath: v.string(),
  statusReplicasPath: v.string(),
  labelSelectorPath: v.optional(v.string()),
});
export type ScaleSubresource = v.InferOutput<typeof scaleSubresourceSchema>;

const versionSchema = v.strictObject({
  name: v.string(),
  served: v.boolean(),
  storage: v.boolean(),
  deprecated: v.optional(v.boolean()),
  deprecationWarning: v.optional(v.string()),
  schema: v.optional(v.strictObject({ openAPIV3Schema: v.optional(jsonSchemaNode) })),
  subresources: v.optional(
    v.strictObject({
      status: v.optional(v.record(v.string(), v.unknown())),
      scale: v.optional(scaleSubresourceSchema),
    }),
  ),
  additionalPrinterColumns: v.optional(v.array(printerColumnSchema)),
  selectableFields: v.optional(v.array(v.strictObject({ jsonPath: v.string() }))),
});
export type CrdVersion = v.InferOutput<typeof versionSchema>;

const specSchema = v.strictObject({
  group: v.string(),
  names: namesSchema,
  scope: v.picklist(['Namespaced', 'Cluster']),
  versions: v.array(versionSchema),
  conversion: v.optional(
    v.strictObject({
      strategy: v.picklist(['None', 'Webhook']),
      webhook: v.optional(v.record(v.string(), v.unknown())),
    }),
    { strategy: 'None' },
  ),
  preserveUnknownFields: v.optional(v.boolean()),
});
export type CrdSpec = v.InferOutput<typeof specSchema>;

const statusSchema = v.strictObject({
  conditions: v.optional(v.array(conditionSchema)),
  acceptedNames: v.optional(v.looseObject({ plural: v.optional(v.string()), kind: v.optional(v.string()) })),
  storedVersions: v.optional(v.array(v.string())),
});

/** What Kubernetes checks of a CRD's spec, path relative to the whole object. */
export function crdProblems(crd: { metadata: { name?: string }; spec: CrdSpec }): FieldProblem[] {
  const { spec } = crd;
  const problems: FieldProblem[] = [];
  const lower = (s: string) => DNS1123_LABEL.test(s);
  if (crd.metadata.name !== `${spec.names.plural}.${spec.group}`) {
    problems.push({ path: ['metadata', 'name'], reason: 'FieldValueInvalid', detail: 'must be spec.names.plural+"."+spec.group' });
  }
  if (!DNS1123_SUBDOMAIN.test(spec.group)) {
    problems.push({
      path: ['spec', 'group'],
      reason: 'FieldValueInvalid',
      detail: "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.'",
    });
  } else if (!spec.group.includes('.')) {
    problems.push({ path: ['spec', 'group'], reason: 'FieldValueInvalid', detail: 'should be a domain with at least one dot' });
  }
  if (!lower(spec.names.plural))
    problems.push({
      path: ['spec', 'names', 'plural'],
      reason: 'FieldValueInvalid',
      detail: "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-'",
    });
  if (spec.names.singular !== undefined && !lower(spec.names.singular)) {
    problems.push({
      path: ['spec', 'names', 'singular'],
      reason: 'FieldValueInvalid',
      detail: "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-'",
    });
  }
  if (!/^[A-Za-z][A-Za-z0-9]*$/.test(spec.names.kind))
    problems.push({
      path: ['spec', 'names', 'kind'],
      reason: 'FieldValueInvalid',
      detail: 'may have mixed case, but should otherwise match: ^[a-z]([-a-z0-9]*[a-z0-9])?$',
    });
  (spec.names.shortNames ?? []).forEach((s, i) => {
    if (!lower(s))
      problems.push({
        path: ['spec', 'names', 'shortNames', i],
        reason: 'FieldValueInvalid',
        detail: "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-'",
      });
  });
  if (spec.versions.length === 0)
    problems.push({ path: ['spec', 'versions'], reason: 'FieldValueInvalid', value: '', detail: 'must have exactly one version marked as storage version' });
  else if (spec.versions.filter((ver) => ver.storage).length !== 1) {
    problems.push({
      path: ['spec', 'versions'],
      reason: 'FieldValueInvalid',
      value: spec.versions.map((ver) => ver.name).join(','),
      detail: 'must have exactly one version marked as storage version',
    });
  }
  problems.push(
    ...duplicates(
      spec.versions,
      (ver) => ver.name,
      (i) => ['spec', 'versions', i, 'name'],
    ),
  );
  spec.versions.forEach((ver, i) => {
    if (!lower(ver.name))
      problems.push({
        path: ['spec', 'versions', i, 'name'],
        reason: 'FieldValueInvalid',
        detail: "a DNS-1035 label must consist of lower case alphanumeric characters or '-'",
      });
    const root = ver.schema?.openAPIV3Schema;
    if (!root) problems.push({ path: ['spec', 'versions', i, 'schema', 'openAPIV3Schema'], reason: 'FieldValueRequired', detail: 'schemas are required' });
    else if (root.type !== 'object') {
      problems.push({
        path: ['spec', 'versions', i, 'schema', 'openAPIV3Schema', 'type'],
        reason: 'FieldValueInvalid',
        value: root.type ?? '',
        detail: 'must be object at the root',
      });
    }
    (ver.additionalPrinterColumns ?? []).forEach((c, j) => {
      if (!c.jsonPath.startsWith('.'))
        problems.push({
          path: ['spec', 'versions', i, 'additionalPrinterColumns', j, 'jsonPath'],
          reason: 'FieldValueInvalid',
          detail: 'must be a simple json path starting with .',
        });
    });
  });
  if (!spec.versions.some((ver) => ver.served) && spec.versions.length)
    problems.push({ path: ['spec', 'versions'], reason: 'FieldValueInvalid', value: '', detail: 'must have at least one served version' });
  if (spec.conversion?.strategy === 'Webhook')
    problems.push({ path: ['spec', 'conversion', 'strategy'], reason: 'FieldValueNotSupported', value: 'Webhook', detail: 'supported values: "None"' });
  return problems;
}

export const crdSchema = withChecks(
  kindSchema(`${CRD_GROUP}/v1`, 'CustomResourceDefinition', {
    spec: v.pipe(
      specSchema,
      v.transform((s) => ({
        ...s,
        names: { ...s.names, singular: s.names.singular ?? s.names.kind.toLowerCase(), listKind: s.names.listKind ?? `${s.names.kind}List` },
      })),
    ),
    status: v.optional(statusSchema, {}),
  }),
  crdProblems,
);
export type CustomResourceDefinition = v.InferOutput<typeof crdSchema>;

/** The condition of `type`, if set. */
export function crdCondition(crd: CustomResourceDefinition, type: string): Condition | undefined {
  return crd.status?.conditions?.find((c) => c.type === type);
}

/** True once the CRD's kind is served: Established=True. */
export function crdEstablished(crd: CustomResourceDefinition): boolean {
  return crdCondition(crd, 'Established')?.status === 'True';
}

export const crdKind: KindDefinition = {
  kind: 'CustomResourceDefinition',
  group: CRD_GROUP,
  version: 'v1',
  resource: 'customresourcedefinitions',
  singular: 'customresourcedefinition',
  shortNames: ['crd', 'crds'],
  namespaced: false,
  schema: crdSchema,
  statusSubresource: true,
  validateUpdate(existing, next) {
    const before = existing as CustomResourceDefinition;
    const after = next as CustomResourceDefinition;
    const problems: FieldProblem[] = [];
    if (before.spec.scope !== after.spec.scope)
      problems.push({ path: ['spec', 'scope'], reason: 'FieldValueInvalid', value: after.spec.scope, detail: 'field is immutable' });
    // A stored version may not vanish from the spec while objects may still be stored in it.
    for (const stored of before.status?.storedVersions ?? []) {
      if (!after.spec.versions.some((ver) => ver.name === stored)) {
        problems.push({ path: ['status', 'storedVersions'], reason: 'FieldValueInvalid', value: stored, detail: 'must appear in spec.versions' });
      }
    }
    return problems;
  },
  columns: [{ name: 'CREATED AT', value: (o) => o.metadata.creationTimestamp ?? '' }],
};
