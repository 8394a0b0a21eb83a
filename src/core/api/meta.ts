// ObjectMeta, owner references, names and the generic object shape every kind shares.
import * as v from 'valibot';

/** DNS-1123 subdomain: what Kubernetes requires of most object names. */
export const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
/** DNS-1123 label: namespaces, services, container names. */
export const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/** DNS-1035 label: Service names, which become DNS labels that may not start with a digit. */
export const DNS1035_LABEL = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;

/** A Service's name, refused with Kubernetes' own message (kubectl users recognise it). */
export const dns1035LabelName = v.pipe(
  v.string(),
  v.minLength(1, 'must not be empty'),
  v.maxLength(63, 'must be no more than 63 characters'),
  v.regex(
    DNS1035_LABEL,
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
  ),
);

export const subdomainName = v.pipe(
  v.string(),
  v.minLength(1, 'must not be empty'),
  v.maxLength(253, 'must be no more than 253 characters'),
  v.regex(
    DNS1123_SUBDOMAIN,
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character",
  ),
);

export const labelName = v.pipe(
  v.string(),
  v.minLength(1, 'must not be empty'),
  v.maxLength(63, 'must be no more than 63 characters'),
  v.regex(
    DNS1123_LABEL,
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character",
  ),
);

/** Label keys: optional DNS prefix and a name of at most 63 characters. */
const LABEL_KEY = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]{0,61})?[A-Za-z0-9])?$/;

/**
 * A record that refuses lists: valibot's record alone accepts arrays (their indexes read as
 * keys), but a map in a manifest written as a list is a mistake the user must hear about.
 */
export function mapSchema<K extends v.GenericSchema<string, string | number | symbol>, V extends v.GenericSchema>(key: K, value: V) {
  return v.pipe(
    v.custom<Record<string, unknown>>((x) => typeof x === 'object' && x !== null && !Array.isArray(x), 'Invalid type: expected a map of keys to values'),
    v.record(key, value),
  );
}

export const labelsSchema = mapSchema(
  v.pipe(
    v.string(),
    v.maxLength(317),
    v.regex(LABEL_KEY, 'invalid label key: a qualified name must consist of alphanumeric characters, -, _ or ., with an optional DNS subdomain prefix and /'),
  ),
  v.pipe(
    v.string(),
    v.maxLength(63, 'must be no more than 63 characters'),
    v.regex(
      LABEL_VALUE,
      "a valid label value must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character",
    ),
  ),
);

/** Kubernetes caps the total size of an object's annotations at 256 KiB. */
/** ObjectMeta fields the server sets: a manifest exported with `get -o yaml` carries them, and no client owns or sends them. */
export const SERVER_SET_METADATA: readonly string[] = [
  'uid',
  'resourceVersion',
  'generation',
  'creationTimestamp',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
  'managedFields',
  'selfLink',
];

export const MAX_ANNOTATIONS_BYTES = 256 * 1024;

export const annotationsSchema = v.pipe(
  mapSchema(v.pipe(v.string(), v.maxLength(317), v.regex(LABEL_KEY, 'invalid annotation key')), v.string()),
  v.check(
    (a) => Object.entries(a).reduce((n, [k, val]) => n + k.length + val.length, 0) <= MAX_ANNOTATIONS_BYTES,
    `may not be more than ${MAX_ANNOTATIONS_BYTES} bytes in total`,
  ),
);

export const ownerReferenceSchema = v.strictObject({
  apiVersion: v.string(),
  kind: v.string(),
  name: v.string(),
  uid: v.string(),
  controller: v.optional(v.boolean()),
  blockOwnerDeletion: v.optional(v.boolean()),
});
export type OwnerReference = v.InferOutput<typeof ownerReferenceSchema>;

/** An RFC 3339 time, as every timestampSchema field of the API is written. */
export const timestampSchema = v.pipe(v.string(), v.isoTimestamp('must be an RFC 3339 timestamp'));

/** One entry of metadata.managedFields (server-side apply's record of who owns which fields); `[{}]` in an update clears them, as in Kubernetes. */
export const managedFieldsEntrySchema = v.object({
  manager: v.optional(v.pipe(v.string(), v.maxLength(128))),
  operation: v.optional(v.picklist(['Apply', 'Update'], 'must be "Apply" or "Update"')),
  apiVersion: v.optional(v.string()),
  time: v.optional(timestampSchema),
  fieldsType: v.optional(v.literal('FieldsV1', 'must be "FieldsV1"')),
  fieldsV1: v.optional(mapSchema(v.string(), v.unknown())),
  subresource: v.optional(v.string()),
});

export const objectMetaSchema = v.strictObject({
  name: v.optional(subdomainName),
  generateName: v.optional(v.pipe(v.string(), v.maxLength(243))),
  namespace: v.optional(labelName),
  uid: v.optional(v.string()),
  resourceVersion: v.optional(v.string()),
  generation: v.optional(v.pipe(v.number(), v.integer())),
  creationTimestamp: v.optional(v.nullable(timestampSchema)),
  deletionTimestamp: v.optional(v.nullable(timestampSchema)),
  deletionGracePeriodSeconds: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0))),
  labels: v.optional(labelsSchema),
  annotations: v.optional(annotationsSchema),
  ownerReferences: v.optional(v.array(ownerReferenceSchema)),
  finalizers: v.optional(v.array(v.pipe(v.string(), v.minLength(1)))),
  managedFields: v.optional(v.array(managedFieldsEntrySchema)),
});
export type ObjectMeta = v.InferOutput<typeof objectMetaSchema>;

/** The generic shape of every stored object. */
export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta;
  spec?: unknown;
  status?: unknown;
  [extra: string]: unknown;
}

/** Kubernetes-style condition (used in many kinds' status). */
export const conditionSchema = v.object({
  type: v.string(),
  status: v.picklist(['True', 'False', 'Unknown']),
  reason: v.optional(v.string()),
  message: v.optional(v.string()),
  lastTransitionTime: v.optional(v.string()),
  lastHeartbeatTime: v.optional(v.string()),
  lastProbeTime: v.optional(v.nullable(v.string())),
  lastUpdateTime: v.optional(v.string()),
  observedGeneration: v.optional(v.number()),
});
export type Condition = v.InferOutput<typeof conditionSchema>;

/**
 * Builds the full-object schema of a kind: fixed apiVersion/kind, shared metadata,
 * and the kind's own top-level fields (spec, status, or others such as Endpoints' subsets).
 */
export function kindSchema<const TEntries extends v.ObjectEntries>(apiVersion: string, kind: string, entries: TEntries) {
  return v.strictObject({
    apiVersion: v.literal(apiVersion, `must be "${apiVersion}"`),
    kind: v.literal(kind, `must be "${kind}"`),
    metadata: objectMetaSchema,
    ...entries,
  });
}

/** ObjectMeta whose name is a DNS-1035 label (Service), for kinds stricter than the subdomain rule. */
export const dns1035ObjectMetaSchema = v.strictObject({ ...objectMetaSchema.entries, name: v.optional(dns1035LabelName) });
