// The projected volume source (v1 ProjectedVolumeSource) as pods carry it: service account token, configMap, secret and downwardAPI projections into one directory.
import * as v from 'valibot';

const keyToPath = v.strictObject({ key: v.string(), path: v.string(), mode: v.optional(v.number()) });

const downwardItem = v.strictObject({
  path: v.string(),
  fieldRef: v.optional(v.strictObject({ apiVersion: v.optional(v.string()), fieldPath: v.string() })),
  resourceFieldRef: v.optional(v.strictObject({ containerName: v.optional(v.string()), resource: v.string(), divisor: v.optional(v.unknown()) })),
  mode: v.optional(v.number()),
});

export const projectedVolumeSchema = v.strictObject({
  defaultMode: v.optional(v.number()),
  sources: v.optional(
    v.array(
      v.strictObject({
        serviceAccountToken: v.optional(
          v.strictObject({
            audience: v.optional(v.string()),
            expirationSeconds: v.optional(
              v.pipe(v.number(), v.integer('must be an integer'), v.minValue(600, 'may not specify a duration less than 10 minutes')),
            ),
            path: v.pipe(v.string(), v.minLength(1, 'must not be empty')),
          }),
        ),
        configMap: v.optional(v.strictObject({ name: v.optional(v.string()), items: v.optional(v.array(keyToPath)), optional: v.optional(v.boolean()) })),
        secret: v.optional(v.strictObject({ name: v.optional(v.string()), items: v.optional(v.array(keyToPath)), optional: v.optional(v.boolean()) })),
        downwardAPI: v.optional(v.strictObject({ items: v.optional(v.array(downwardItem)) })),
      }),
    ),
  ),
});
export type ProjectedVolumeSource = v.InferOutput<typeof projectedVolumeSchema>;
