// Namespace (v1): a scope for names; deleting it deletes everything inside.
import * as v from 'valibot';
import type { KindDefinition } from './kind.js';
import { kindSchema } from './meta.js';

export const namespaceSchema = kindSchema('v1', 'Namespace', {
  spec: v.optional(v.strictObject({
    finalizers: v.optional(v.array(v.string())),
  }), {}),
  status: v.optional(v.strictObject({
    phase: v.optional(v.picklist(['Active', 'Terminating'])),
  }), {}),
});
export type Namespace = v.InferOutput<typeof namespaceSchema>;

export const namespaceKind: KindDefinition = {
  kind: 'Namespace',
  group: '',
  version: 'v1',
  resource: 'namespaces',
  singular: 'namespace',
  shortNames: ['ns'],
  namespaced: false,
  schema: namespaceSchema,
  statusSubresource: true,
  fieldSelectors: ['status.phase'],
  columns: [{ name: 'STATUS', value: (o) => (o as Namespace).status?.phase ?? 'Active' }],
};
