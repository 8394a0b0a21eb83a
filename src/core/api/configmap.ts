// ConfigMap (v1): non-secret settings as text (`data`) or bytes (`binaryData`, base64) that pods read as env or files.
import * as v from 'valibot';
import type { KindDefinition } from './kind.js';
import { kindSchema, mapSchema } from './meta.js';
import { withChecks, type FieldProblem } from './validate.js';

/** Kubernetes' rule for data keys: each may name a file in a volume. */
const CONFIG_KEY = /^[-._a-zA-Z0-9]+$/;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
/** Kubernetes caps a ConfigMap's data and binaryData together at 1 MiB. */
export const MAX_CONFIGMAP_BYTES = 1024 * 1024;

const keySchema = v.pipe(
  v.string(),
  v.maxLength(253, 'must be no more than 253 characters'),
  v.regex(CONFIG_KEY, "a valid config key must consist of alphanumeric characters, '-', '_' or '.'"),
  v.check((k) => k !== '.' && k !== '..' && !k.startsWith('..'), "must not be '.' or '..' or start with '..'"),
);

export const configMapSchema = withChecks(
  kindSchema('v1', 'ConfigMap', {
    data: v.optional(mapSchema(keySchema, v.string())),
    binaryData: v.optional(mapSchema(keySchema, v.pipe(v.string(), v.regex(BASE64, 'must be base64 (standard alphabet, padded)')))),
    immutable: v.optional(v.boolean()),
  }),
  (cm): FieldProblem[] => {
    const problems: FieldProblem[] = [];
    for (const key of Object.keys(cm.binaryData ?? {})) {
      if (cm.data && key in cm.data)
        problems.push({ path: ['data'], reason: 'FieldValueInvalid', value: key, detail: 'duplicate of key present in binaryData' });
    }
    const bytes =
      Object.entries(cm.data ?? {}).reduce((n, [k, text]) => n + k.length + Buffer.byteLength(text), 0) +
      Object.entries(cm.binaryData ?? {}).reduce((n, [k, b64]) => n + k.length + Buffer.byteLength(b64, 'base64'), 0);
    if (bytes > MAX_CONFIGMAP_BYTES)
      problems.push({
        path: ['data'],
        reason: 'FieldValueInvalid',
        value: `${bytes} bytes`,
        detail: `Too long: must have at most ${MAX_CONFIGMAP_BYTES} bytes`,
      });
    return problems;
  },
);
export type ConfigMap = v.InferOutput<typeof configMapSchema>;

/** A key's bytes, whether it sits in `data` or `binaryData`; undefined when neither has it. */
export function configMapBytes(cm: Pick<ConfigMap, 'data' | 'binaryData'>, key: string): Buffer | undefined {
  const text = cm.data?.[key];
  if (text !== undefined) return Buffer.from(text, 'utf8');
  const b64 = cm.binaryData?.[key];
  return b64 === undefined ? undefined : Buffer.from(b64, 'base64');
}

export const configMapKind: KindDefinition = {
  kind: 'ConfigMap',
  group: '',
  version: 'v1',
  resource: 'configmaps',
  singular: 'configmap',
  shortNames: ['cm'],
  namespaced: true,
  schema: configMapSchema,
  statusSubresource: false,
  validateUpdate(existing, next) {
    // As Kubernetes: an immutable ConfigMap keeps its data and binaryData, and stays immutable.
    const old = existing as ConfigMap;
    if (old.immutable !== true) return [];
    const now = next as ConfigMap;
    const detail = 'field is immutable when `immutable` is set';
    const problems: FieldProblem[] = [];
    if (JSON.stringify(old.data ?? {}) !== JSON.stringify(now.data ?? {})) problems.push({ path: ['data'], reason: 'FieldValueForbidden', value: '', detail });
    if (JSON.stringify(old.binaryData ?? {}) !== JSON.stringify(now.binaryData ?? {}))
      problems.push({ path: ['binaryData'], reason: 'FieldValueForbidden', value: '', detail });
    if (now.immutable !== true) problems.push({ path: ['immutable'], reason: 'FieldValueForbidden', value: now.immutable ?? null, detail });
    return problems;
  },
  // kubectl's columns: NAME, DATA (the number of keys in data and binaryData), AGE.
  columns: [{ name: 'DATA', value: (o) => String(Object.keys((o as ConfigMap).data ?? {}).length + Object.keys((o as ConfigMap).binaryData ?? {}).length) }],
};
