// Secret (v1): small pieces of sensitive data (an SSH key for a Slurm login node), base64 in `data`; `stringData` is folded into it on write.
import * as v from 'valibot';
import type { KindDefinition } from './kind.js';
import { kindSchema, mapSchema } from './meta.js';
import { withChecks, type FieldProblem } from './validate.js';

/** Kubernetes' rule for data keys: what may name a file in a volume. */
const SECRET_KEY = /^[-._a-zA-Z0-9]+$/;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
/** Kubernetes caps a Secret's data at 1 MiB. */
export const MAX_SECRET_BYTES = 1024 * 1024;

const keySchema = v.pipe(
  v.string(),
  v.maxLength(253, 'must be no more than 253 characters'),
  v.regex(SECRET_KEY, "a valid config key must consist of alphanumeric characters, '-', '_' or '.'"),
);

const secretObjectSchema = withChecks(
  kindSchema('v1', 'Secret', {
    type: v.optional(v.pipe(v.string(), v.minLength(1, 'must not be empty')), 'Opaque'),
    data: v.optional(mapSchema(keySchema, v.pipe(v.string(), v.regex(BASE64, 'must be base64 (standard alphabet, padded)')))),
    /** Write-only convenience, as in Kubernetes: plain text, merged into `data` (winning over it) and never stored. */
    stringData: v.optional(mapSchema(keySchema, v.string())),
    immutable: v.optional(v.boolean()),
  }),
  (s): FieldProblem[] => {
    const bytes =
      Object.values(s.data ?? {}).reduce((n, b64) => n + Buffer.byteLength(b64, 'base64'), 0) +
      Object.values(s.stringData ?? {}).reduce((n, text) => n + Buffer.byteLength(text), 0);
    return bytes > MAX_SECRET_BYTES
      ? [{ path: ['data'], reason: 'FieldValueInvalid', value: `${bytes} bytes`, detail: `Too long: must have at most ${MAX_SECRET_BYTES} bytes` }]
      : [];
  },
);

export const secretSchema = v.pipe(
  secretObjectSchema,
  v.transform((s) => {
    if (s.stringData === undefined) return s;
    const { stringData, ...rest } = s;
    const data = { ...(rest.data ?? {}) };
    for (const [key, text] of Object.entries(stringData)) data[key] = Buffer.from(text, 'utf8').toString('base64');
    return { ...rest, data };
  }),
);
export type Secret = v.InferOutput<typeof secretSchema>;

/** The decoded value of one key, or undefined. */
export function secretValue(secret: Pick<Secret, 'data'>, key: string): string | undefined {
  const b64 = secret.data?.[key];
  return b64 === undefined ? undefined : Buffer.from(b64, 'base64').toString('utf8');
}

export const secretKind: KindDefinition = {
  kind: 'Secret',
  group: '',
  version: 'v1',
  resource: 'secrets',
  singular: 'secret',
  shortNames: [],
  namespaced: true,
  schema: secretSchema,
  statusSubresource: false,
  validateUpdate(existing, next) {
    // Kubernetes: an immutable Secret keeps its data and stays immutable.
    const old = existing as Secret;
    if (old.immutable !== true) return [];
    const now = next as Secret;
    const problems: FieldProblem[] = [];
    if (JSON.stringify(old.data ?? {}) !== JSON.stringify(now.data ?? {}))
      problems.push({ path: ['data'], reason: 'FieldValueForbidden', value: '', detail: 'field is immutable when `immutable` is set' });
    if (now.immutable !== true)
      problems.push({ path: ['immutable'], reason: 'FieldValueForbidden', value: now.immutable ?? null, detail: 'field is immutable when `immutable` is set' });
    return problems;
  },
  // Values are never printed in tables, as kubectl: only how many keys there are.
  columns: [
    { name: 'TYPE', value: (o) => (o as Secret).type },
    { name: 'DATA', value: (o) => String(Object.keys((o as Secret).data ?? {}).length) },
  ],
};
