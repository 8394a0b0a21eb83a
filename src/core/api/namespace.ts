// Namespace (v1): a scope for names; deleting it deletes everything inside.
import * as v from 'valibot';
import type { KindDefinition } from './kind.js';
import { DNS1123_LABEL, kindSchema } from './meta.js';
import { withChecks } from './validate.js';

export const namespaceSchema = withChecks(
  kindSchema('v1', 'Namespace', {
    spec: v.optional(
      v.strictObject({
        finalizers: v.optional(v.array(v.string())),
      }),
      {},
    ),
    status: v.optional(
      v.strictObject({
        phase: v.optional(v.picklist(['Active', 'Terminating'])),
      }),
      {},
    ),
  }),
  (ns) => {
    // Namespace names become DNS labels (svc.NAMESPACE.svc.cluster.local): no dots, at most 63 characters.
    const name = ns.metadata.name;
    if (name === undefined || (DNS1123_LABEL.test(name) && name.length <= 63)) return [];
    return [
      {
        path: ['metadata', 'name'],
        reason: 'FieldValueInvalid',
        detail: "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character",
      },
    ];
  },
);
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
