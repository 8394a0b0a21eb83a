// The ClusterRoles every cluster starts with, as Kubernetes bootstraps them: cluster-admin, and admin, edit and view built by aggregation from the system:aggregate-to-* roles.
import { matches, selectorFromLabelSelector } from '../../core/api/selector.js';
import { type ClusterRole, type ClusterRoleBinding, type PolicyRule, RBAC_GROUP } from '../../core/api/rbac.js';
import { MASTERS_GROUP } from '../api-server/authorization.js';

const API_VERSION = `${RBAC_GROUP}/v1`;
/** Marks what the master made and keeps (Kubernetes' label for its bootstrap policy). */
export const BOOTSTRAP_LABEL = 'kubernetes.io/bootstrapping';
export const AGGREGATE_TO = (role: 'admin' | 'edit' | 'view') => `rbac.authorization.k8s.io/aggregate-to-${role}`;

const READ = ['get', 'list', 'watch'];
const WRITE = ['create', 'delete', 'deletecollection', 'patch', 'update'];

/** What a namespace's readers may see: every namespaced kind but Secrets (reading those would let one act as their owners). */
const VIEWABLE: readonly PolicyRule[] = [
  {
    apiGroups: [''],
    resources: ['pods', 'pods/log', 'pods/status', 'services', 'services/status', 'endpoints', 'events', 'namespaces', 'namespaces/status'],
    verbs: READ,
  },
  {
    apiGroups: ['apps'],
    resources: ['deployments', 'deployments/scale', 'deployments/status', 'replicasets', 'replicasets/scale', 'replicasets/status'],
    verbs: READ,
  },
  { apiGroups: ['autoscaling'], resources: ['horizontalpodautoscalers', 'horizontalpodautoscalers/status'], verbs: READ },
  { apiGroups: ['discovery.k8s.io'], resources: ['endpointslices'], verbs: READ },
  {
    apiGroups: ['minik8s.io'],
    resources: ['functions', 'functions/status', 'functionversions', 'workflows', 'workflows/status', 'gpujobs', 'gpujobs/status', 'dnses'],
    verbs: READ,
  },
];

/** What editors may change besides: the same kinds, Secrets (read and write), exec, attach, port-forward and eviction. */
const EDITABLE: readonly PolicyRule[] = [
  { apiGroups: [''], resources: ['pods/exec', 'pods/attach', 'pods/portforward', 'pods/proxy'], verbs: ['create', 'get'] },
  { apiGroups: [''], resources: ['pods/eviction'], verbs: ['create'] },
  { apiGroups: [''], resources: ['secrets'], verbs: [...READ, ...WRITE] },
  { apiGroups: [''], resources: ['pods', 'services', 'endpoints', 'events'], verbs: WRITE },
  { apiGroups: ['apps'], resources: ['deployments', 'deployments/scale', 'replicasets', 'replicasets/scale'], verbs: WRITE },
  { apiGroups: ['autoscaling'], resources: ['horizontalpodautoscalers'], verbs: WRITE },
  { apiGroups: ['discovery.k8s.io'], resources: ['endpointslices'], verbs: WRITE },
  { apiGroups: ['minik8s.io'], resources: ['functions', 'functionversions', 'workflows', 'gpujobs', 'dnses'], verbs: WRITE },
];

/** What a namespace's admins may do besides: its Roles and RoleBindings (within what they hold themselves). */
const ADMINISTRABLE: readonly PolicyRule[] = [
  { apiGroups: [RBAC_GROUP], resources: ['roles', 'rolebindings'], verbs: [...READ, ...WRITE] },
  { apiGroups: ['authorization.k8s.io'], resources: ['localsubjectaccessreviews'], verbs: ['create'] },
];

function clusterRole(name: string, labels: Record<string, string>, rules: readonly PolicyRule[], aggregateFrom?: string): ClusterRole {
  return {
    apiVersion: API_VERSION,
    kind: 'ClusterRole',
    metadata: { name, labels: { [BOOTSTRAP_LABEL]: 'rbac-defaults', ...labels } },
    rules: [...rules],
    ...(aggregateFrom ? { aggregationRule: { clusterRoleSelectors: [{ matchLabels: { [aggregateFrom]: 'true' } }] } } : {}),
  } as ClusterRole;
}

/** The default ClusterRoles; admin, edit and view list no rules of their own: aggregation fills them. */
export function defaultClusterRoles(): ClusterRole[] {
  return [
    clusterRole('cluster-admin', {}, [
      { apiGroups: ['*'], resources: ['*'], verbs: ['*'] },
      { nonResourceURLs: ['*'], verbs: ['*'] },
    ]),
    clusterRole('admin', {}, [], AGGREGATE_TO('admin')),
    clusterRole('edit', { [AGGREGATE_TO('admin')]: 'true' }, [], AGGREGATE_TO('edit')),
    clusterRole('view', { [AGGREGATE_TO('admin')]: 'true', [AGGREGATE_TO('edit')]: 'true' }, [], AGGREGATE_TO('view')),
    clusterRole('system:aggregate-to-admin', { [AGGREGATE_TO('admin')]: 'true' }, ADMINISTRABLE),
    clusterRole('system:aggregate-to-edit', { [AGGREGATE_TO('admin')]: 'true', [AGGREGATE_TO('edit')]: 'true' }, EDITABLE),
    clusterRole('system:aggregate-to-view', { [AGGREGATE_TO('admin')]: 'true', [AGGREGATE_TO('edit')]: 'true', [AGGREGATE_TO('view')]: 'true' }, VIEWABLE),
  ];
}

/** cluster-admin for the masters group, as Kubernetes binds it. */
export function defaultClusterRoleBindings(): ClusterRoleBinding[] {
  return [
    {
      apiVersion: API_VERSION,
      kind: 'ClusterRoleBinding',
      metadata: { name: 'cluster-admin', labels: { [BOOTSTRAP_LABEL]: 'rbac-defaults' } },
      subjects: [{ kind: 'Group', apiGroup: RBAC_GROUP, name: MASTERS_GROUP }],
      roleRef: { apiGroup: RBAC_GROUP, kind: 'ClusterRole', name: 'cluster-admin' },
    } as ClusterRoleBinding,
  ];
}

/**
 * The rules of an aggregated ClusterRole: those of every other ClusterRole one of its selectors
 * matches, each rule once, in the order of the roles' names (so the result is stable and a
 * controller writes only when it changes). Undefined for a role without an aggregationRule.
 */
export function aggregatedRules(role: ClusterRole, all: readonly ClusterRole[]): PolicyRule[] | undefined {
  const selectors = role.aggregationRule?.clusterRoleSelectors;
  if (!selectors) return undefined;
  const parsed = selectors.map(selectorFromLabelSelector);
  const seen = new Set<string>();
  const rules: PolicyRule[] = [];
  const sources = all.filter((r) => r.metadata.name !== role.metadata.name && parsed.some((s) => matches(s, r.metadata.labels ?? {})));
  for (const source of [...sources].sort((a, b) => (a.metadata.name ?? '').localeCompare(b.metadata.name ?? ''))) {
    for (const rule of source.rules ?? []) {
      const key = JSON.stringify(rule);
      if (seen.has(key)) continue;
      seen.add(key);
      rules.push(rule);
    }
  }
  return rules;
}
