// FunctionVersion (minik8s.io/v1): one immutable version of a Function (its code and settings) and the image built for it; kept for rollback.
import { isDeepStrictEqual } from 'node:util';
import * as v from 'valibot';
import type { KindDefinition } from './kind.js';
import { kindSchema, timestampSchema } from './meta.js';
import { functionSpecSchema, VERSION_FIELDS, type FunctionSpec } from './function.js';
import { intSchema } from './pod.js';
import type { FieldProblem } from './validate.js';

export const functionVersionSpecSchema = v.strictObject({
  /** The Function this version belongs to (also its controller owner). */
  function: v.pipe(v.string(), v.minLength(1, 'must not be empty')),
  version: intSchema({ min: 1 }),
  /** The Function's spec when the version was made; only its VERSION_FIELDS matter. */
  template: functionSpecSchema,
  /** SHA-256 of the build inputs (runtime, handler, code, requirements, runtime template): equal hashes share an image. */
  buildHash: v.pipe(v.string(), v.regex(/^[0-9a-f]{64}$/, 'must be a hex SHA-256')),
});
export type FunctionVersionSpec = v.InferOutput<typeof functionVersionSpecSchema>;

export const functionVersionStatusSchema = v.strictObject({
  phase: v.optional(v.picklist(['Building', 'Succeeded', 'Failed'])),
  /** What pods run: `functions/NS-NAME@sha256:...`, resolved by each kubelet against the master's registry. */
  image: v.optional(v.string()),
  /** The tag pushed for people: `functions/NS-NAME:vN`. */
  tag: v.optional(v.string()),
  /** The version whose image this one reuses (same build inputs), when no build was needed. */
  reusedFrom: v.optional(intSchema({ min: 1 })),
  step: v.optional(v.string()),
  message: v.optional(v.string()),
  /** The build request (Function annotation) the latest build answered. */
  request: v.optional(v.string()),
  startTime: v.optional(timestampSchema),
  completionTime: v.optional(timestampSchema),
});
export type FunctionVersionStatus = v.InferOutput<typeof functionVersionStatusSchema>;

export const functionVersionSchema = kindSchema('minik8s.io/v1', 'FunctionVersion', {
  spec: functionVersionSpecSchema,
  status: v.optional(functionVersionStatusSchema, {}),
});
export type FunctionVersion = v.InferOutput<typeof functionVersionSchema>;

/** `NAME-vN`: the FunctionVersion's and the ReplicaSet's name. */
export function versionObjectName(functionName: string, version: number): string {
  return `${functionName}-v${version}`;
}

/** The part of a spec that makes a version, with the schema's defaults, for comparing versions. */
export function versionTemplate(spec: FunctionSpec): Pick<FunctionSpec, (typeof VERSION_FIELDS)[number]> {
  const out: Record<string, unknown> = {};
  for (const field of VERSION_FIELDS) if (spec[field] !== undefined) out[field] = spec[field];
  return out as Pick<FunctionSpec, (typeof VERSION_FIELDS)[number]>;
}

/** True when the version was made from this spec (same code and settings; scaling and triggers aside). */
export function versionMatches(version: FunctionVersion, spec: FunctionSpec): boolean {
  return isDeepStrictEqual(versionTemplate(version.spec.template), versionTemplate(spec));
}

export const functionVersionKind: KindDefinition = {
  kind: 'FunctionVersion',
  group: 'minik8s.io',
  version: 'v1',
  resource: 'functionversions',
  singular: 'functionversion',
  shortNames: ['fnv'],
  namespaced: true,
  schema: functionVersionSchema,
  statusSubresource: true,
  // A version is a record of what was built: changing it afterwards would make rollback lie.
  validateUpdate(existing, next): FieldProblem[] {
    return isDeepStrictEqual(existing.spec, next.spec) ? [] : [{ path: ['spec'], reason: 'FieldValueForbidden', detail: 'a FunctionVersion is immutable' }];
  },
  columns: [
    { name: 'FUNCTION', value: (o) => (o as FunctionVersion).spec.function },
    { name: 'VERSION', value: (o) => String((o as FunctionVersion).spec.version) },
    { name: 'PHASE', value: (o) => (o as FunctionVersion).status?.phase ?? '<none>' },
    { name: 'IMAGE', value: (o) => (o as FunctionVersion).status?.tag ?? '<none>' },
    {
      name: 'REUSED-FROM',
      wide: true,
      value: (o) => {
        const r = (o as FunctionVersion).status?.reusedFrom;
        return r ? `v${r}` : '<none>';
      },
    },
  ],
};
