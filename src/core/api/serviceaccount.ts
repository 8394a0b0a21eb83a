// ServiceAccount (v1): an identity for processes in pods; its bound tokens (TokenRequest) authenticate as system:serviceaccount:NS:NAME.
import * as v from 'valibot';
import type { KindDefinition } from './kind.js';
import { kindSchema } from './meta.js';
import { objectMetaPatchMeta } from './patch-meta.js';

/** Every namespace has one, made by the service account controller; pods that name none run as it. */
export const DEFAULT_SERVICE_ACCOUNT = 'default';
/** A service account's user name is this prefix, then `NAMESPACE:NAME` (Kubernetes' serviceaccount.MakeUsername). */
export const SERVICE_ACCOUNT_USER_PREFIX = 'system:serviceaccount:';
/** Every service account is in this group, and in this group plus `:NAMESPACE`. */
export const SERVICE_ACCOUNTS_GROUP = 'system:serviceaccounts';
export const AUTHENTICATED_GROUP = 'system:authenticated';

const objectReferenceSchema = v.strictObject({
  apiVersion: v.optional(v.string()),
  kind: v.optional(v.string()),
  name: v.optional(v.string()),
  namespace: v.optional(v.string()),
  uid: v.optional(v.string()),
  resourceVersion: v.optional(v.string()),
  fieldPath: v.optional(v.string()),
});

export const serviceAccountSchema = kindSchema('v1', 'ServiceAccount', {
  secrets: v.optional(v.array(objectReferenceSchema)),
  imagePullSecrets: v.optional(v.array(v.strictObject({ name: v.optional(v.string()) }))),
  automountServiceAccountToken: v.optional(v.boolean()),
});
export type ServiceAccount = v.InferOutput<typeof serviceAccountSchema>;

export const serviceAccountKind: KindDefinition = {
  kind: 'ServiceAccount',
  group: '',
  version: 'v1',
  resource: 'serviceaccounts',
  singular: 'serviceaccount',
  shortNames: ['sa'],
  namespaced: true,
  schema: serviceAccountSchema,
  statusSubresource: false,
  // Served by serviceaccounts/token-request-routes.ts in the control plane.
  subresources: [{ name: 'token', kind: 'TokenRequest', group: 'authentication.k8s.io', version: 'v1', verbs: ['create'] }],
  patchMeta: { metadata: { fields: objectMetaPatchMeta }, secrets: { merge: true, mergeKey: 'name' } },
  columns: [{ name: 'SECRETS', value: (o) => String((o as ServiceAccount).secrets?.length ?? 0) }],
};

/** The user a service account's token authenticates as. */
export function serviceAccountUser(namespace: string, name: string): { name: string; groups: string[] } {
  return {
    name: `${SERVICE_ACCOUNT_USER_PREFIX}${namespace}:${name}`,
    groups: [SERVICE_ACCOUNTS_GROUP, `${SERVICE_ACCOUNTS_GROUP}:${namespace}`, AUTHENTICATED_GROUP],
  };
}
