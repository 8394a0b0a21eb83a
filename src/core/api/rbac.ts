// RBAC kinds (rbac.authorization.k8s.io/v1): Role, ClusterRole, RoleBinding, ClusterRoleBinding, with Kubernetes' fields, names and columns.
import * as v from 'valibot';
import type { KindDefinition } from './kind.js';
import { objectMetaSchema } from './meta.js';
import { labelSelectorSchema } from './selector.js';
import type { FieldProblem } from './validate.js';

export const RBAC_GROUP = 'rbac.authorization.k8s.io';
const API_VERSION = `${RBAC_GROUP}/v1`;

/**
 * RBAC objects are named by path segments, not DNS names (`system:controller:replicaset-controller`):
 * anything but '.' and '..' without '/' or '%', as Kubernetes' ValidatePathSegmentName.
 */
const pathSegmentName = v.pipe(
  v.string(),
  v.minLength(1, 'name or generateName is required'),
  v.check((s) => s !== '.' && s !== '..', "may not be '.' or '..'"),
  v.check((s) => !s.includes('/') && !s.includes('%'), "may not contain '/' or '%'"),
);

const rbacMetaSchema = v.strictObject({ ...objectMetaSchema.entries, name: v.optional(pathSegmentName) });

const nonEmptyStrings = v.array(v.pipe(v.string(), v.minLength(1, 'must not be empty')));

/** One grant: verbs on resources of API groups (optionally by name), or on non-resource URLs. */
export const policyRuleSchema = v.pipe(
  v.strictObject({
    verbs: v.pipe(nonEmptyStrings, v.minLength(1, 'verbs must contain at least one value')),
    apiGroups: v.optional(v.array(v.string())),
    resources: v.optional(nonEmptyStrings),
    resourceNames: v.optional(nonEmptyStrings),
    nonResourceURLs: v.optional(nonEmptyStrings),
  }),
  v.check(
    (r) => (r.nonResourceURLs?.length ?? 0) === 0 || ((r.resources?.length ?? 0) === 0 && (r.apiGroups?.length ?? 0) === 0),
    'rules cannot apply to both regular resources and non-resource URLs',
  ),
);
export type PolicyRule = v.InferOutput<typeof policyRuleSchema>;

export const subjectSchema = v.strictObject({
  kind: v.picklist(['User', 'Group', 'ServiceAccount'], 'supported values: "User", "Group", "ServiceAccount"'),
  apiGroup: v.optional(v.string()),
  name: v.pipe(v.string(), v.minLength(1, 'must not be empty')),
  namespace: v.optional(v.string()),
});
export type Subject = v.InferOutput<typeof subjectSchema>;

export const roleRefSchema = v.strictObject({
  apiGroup: v.literal(RBAC_GROUP, `supported values: "${RBAC_GROUP}"`),
  kind: v.picklist(['Role', 'ClusterRole'], 'supported values: "Role", "ClusterRole"'),
  name: pathSegmentName,
});
export type RoleRef = v.InferOutput<typeof roleRefSchema>;

export const roleSchema = v.strictObject({
  apiVersion: v.literal(API_VERSION, `must be "${API_VERSION}"`),
  kind: v.literal('Role', 'must be "Role"'),
  metadata: rbacMetaSchema,
  rules: v.optional(v.array(policyRuleSchema), []),
});
export type Role = v.InferOutput<typeof roleSchema>;

export const clusterRoleSchema = v.strictObject({
  apiVersion: v.literal(API_VERSION, `must be "${API_VERSION}"`),
  kind: v.literal('ClusterRole', 'must be "ClusterRole"'),
  metadata: rbacMetaSchema,
  rules: v.optional(v.array(policyRuleSchema), []),
  /** The role's rules are those of every ClusterRole a selector matches (kept by the aggregation controller). */
  aggregationRule: v.optional(v.strictObject({ clusterRoleSelectors: v.optional(v.array(labelSelectorSchema)) })),
});
export type ClusterRole = v.InferOutput<typeof clusterRoleSchema>;

export const roleBindingSchema = v.strictObject({
  apiVersion: v.literal(API_VERSION, `must be "${API_VERSION}"`),
  kind: v.literal('RoleBinding', 'must be "RoleBinding"'),
  metadata: rbacMetaSchema,
  subjects: v.optional(v.array(subjectSchema)),
  roleRef: roleRefSchema,
});
export type RoleBinding = v.InferOutput<typeof roleBindingSchema>;

export const clusterRoleBindingSchema = v.strictObject({
  apiVersion: v.literal(API_VERSION, `must be "${API_VERSION}"`),
  kind: v.literal('ClusterRoleBinding', 'must be "ClusterRoleBinding"'),
  metadata: rbacMetaSchema,
  subjects: v.optional(v.array(subjectSchema)),
  roleRef: v.strictObject({ ...roleRefSchema.entries, kind: v.literal('ClusterRole', 'supported values: "ClusterRole"') }),
});
export type ClusterRoleBinding = v.InferOutput<typeof clusterRoleBindingSchema>;

/** A binding's roleRef cannot change (Kubernetes: delete and recreate the binding instead). */
function roleRefImmutable(existing: RoleBinding | ClusterRoleBinding, next: RoleBinding | ClusterRoleBinding): FieldProblem[] {
  const a = existing.roleRef;
  const b = next.roleRef;
  if (a.apiGroup === b.apiGroup && a.kind === b.kind && a.name === b.name) return [];
  return [{ path: ['roleRef'], reason: 'FieldValueInvalid', value: b, detail: 'cannot change roleRef' }];
}

/** kubectl's CREATED AT: the creation time as RFC 3339. */
const createdAt = { name: 'CREATED AT', value: (o: { metadata: { creationTimestamp?: string | null } }) => o.metadata.creationTimestamp ?? '<unknown>' };

/** kubectl's ROLE column: Kind/name. */
const roleColumn = { name: 'ROLE', value: (o: unknown) => `${(o as RoleBinding).roleRef.kind}/${(o as RoleBinding).roleRef.name}` };

/** Subjects of one kind, comma-separated (ServiceAccounts as namespace/name), for -o wide. */
function subjectsOf(kind: Subject['kind']) {
  return (o: unknown): string => {
    const names = ((o as RoleBinding).subjects ?? [])
      .filter((s) => s.kind === kind)
      .map((s) => (kind === 'ServiceAccount' ? `${s.namespace ?? ''}/${s.name}` : s.name));
    return names.join(', ');
  };
}

const bindingWideColumns = [
  { name: 'USERS', wide: true, value: subjectsOf('User') },
  { name: 'GROUPS', wide: true, value: subjectsOf('Group') },
  { name: 'SERVICEACCOUNTS', wide: true, value: subjectsOf('ServiceAccount') },
];

export const roleKind: KindDefinition = {
  kind: 'Role',
  group: RBAC_GROUP,
  version: 'v1',
  resource: 'roles',
  singular: 'role',
  shortNames: [],
  namespaced: true,
  schema: roleSchema as unknown as KindDefinition['schema'],
  statusSubresource: false,
  columns: [createdAt],
};

export const clusterRoleKind: KindDefinition = {
  kind: 'ClusterRole',
  group: RBAC_GROUP,
  version: 'v1',
  resource: 'clusterroles',
  singular: 'clusterrole',
  shortNames: [],
  namespaced: false,
  schema: clusterRoleSchema as unknown as KindDefinition['schema'],
  statusSubresource: false,
  columns: [createdAt],
};

export const roleBindingKind: KindDefinition = {
  kind: 'RoleBinding',
  group: RBAC_GROUP,
  version: 'v1',
  resource: 'rolebindings',
  singular: 'rolebinding',
  shortNames: [],
  namespaced: true,
  schema: roleBindingSchema as unknown as KindDefinition['schema'],
  statusSubresource: false,
  validateUpdate: (existing, next) => roleRefImmutable(existing as unknown as RoleBinding, next as unknown as RoleBinding),
  columns: [roleColumn, ...bindingWideColumns],
};

export const clusterRoleBindingKind: KindDefinition = {
  kind: 'ClusterRoleBinding',
  group: RBAC_GROUP,
  version: 'v1',
  resource: 'clusterrolebindings',
  singular: 'clusterrolebinding',
  shortNames: [],
  namespaced: false,
  schema: clusterRoleBindingSchema as unknown as KindDefinition['schema'],
  statusSubresource: false,
  validateUpdate: (existing, next) => roleRefImmutable(existing as unknown as ClusterRoleBinding, next as unknown as ClusterRoleBinding),
  columns: [roleColumn, ...bindingWideColumns],
};
