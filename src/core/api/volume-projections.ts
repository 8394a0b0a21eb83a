// The PodSpec's file-projecting volume sources beyond configMap/secret: downwardAPI and projected (configMap, secret, downwardAPI, serviceAccountToken).
import * as v from 'valibot';
import { quantitySchema } from './quantity.js';
import { withChecks, type FieldProblem } from './validate.js';

/** A file mode: Kubernetes takes 0 to 0777 (decimal 511) for modes and defaultMode. */
export const fileModeSchema = v.pipe(
  v.number(),
  v.integer('must be an integer'),
  v.minValue(0, 'must be a number between 0 and 0777 (octal), both inclusive'),
  v.maxValue(0o777, 'must be a number between 0 and 0777 (octal), both inclusive'),
);

/** A relative file path inside a volume: no absolute path, no `..` element, as Kubernetes checks items' paths. */
export const volumeFilePathSchema = v.pipe(
  v.string(),
  v.minLength(1, 'must not be empty'),
  v.check((p) => !p.startsWith('/'), 'must be a relative path'),
  v.check((p) => !p.split('/').includes('..'), "must not contain '..'"),
  v.check((p) => !p.startsWith('..'), "must not start with '..'"),
);

export const keyToPathSchema = v.strictObject({ key: v.string(), path: volumeFilePathSchema, mode: v.optional(fileModeSchema) });

const downwardAPIFileSchema = withChecks(
  v.strictObject({
    path: volumeFilePathSchema,
    fieldRef: v.optional(v.strictObject({ fieldPath: v.string(), apiVersion: v.optional(v.string()) })),
    resourceFieldRef: v.optional(v.strictObject({ containerName: v.optional(v.string()), resource: v.string(), divisor: v.optional(quantitySchema) })),
    mode: v.optional(fileModeSchema),
  }),
  (f): FieldProblem[] =>
    (f.fieldRef ? 1 : 0) + (f.resourceFieldRef ? 1 : 0) === 1
      ? []
      : [{ path: ['fieldRef'], reason: 'FieldValueInvalid', value: '', detail: 'fieldRef and resourceFieldRef can not be specified simultaneously' }],
);
export type DownwardAPIFile = v.InferOutput<typeof downwardAPIFileSchema>;

export const downwardAPIVolumeSchema = v.strictObject({
  items: v.optional(v.array(downwardAPIFileSchema)),
  defaultMode: v.optional(fileModeSchema),
});

const projectedObjectSchema = v.strictObject({ name: v.string(), items: v.optional(v.array(keyToPathSchema)), optional: v.optional(v.boolean()) });

const projectionSchema = withChecks(
  v.strictObject({
    configMap: v.optional(projectedObjectSchema),
    secret: v.optional(projectedObjectSchema),
    downwardAPI: v.optional(v.strictObject({ items: v.optional(v.array(downwardAPIFileSchema)) })),
    /** Written by the kubelet's service-account token support (service-account-volume.ts), not by the ConfigMap/Secret projection. */
    serviceAccountToken: v.optional(
      v.strictObject({
        audience: v.optional(v.string()),
        expirationSeconds: v.optional(v.pipe(v.number(), v.integer('must be an integer'), v.minValue(600, 'may not specify a duration less than 10 minutes'))),
        path: volumeFilePathSchema,
      }),
    ),
  }),
  (p): FieldProblem[] => {
    const set = (['configMap', 'secret', 'downwardAPI', 'serviceAccountToken'] as const).filter((k) => p[k] !== undefined);
    return set.length === 1 ? [] : [{ path: [], reason: 'FieldValueForbidden', detail: 'may not specify more than 1 volume type per source' }];
  },
);
export type VolumeProjection = v.InferOutput<typeof projectionSchema>;

export const projectedVolumeSchema = v.strictObject({
  sources: v.optional(v.array(projectionSchema)),
  defaultMode: v.optional(fileModeSchema),
});
