// The ClusterRoles every cluster starts with, as Kubernetes bootstraps them: cluster-admin, and admin, edit and view built by aggregation from the system:aggregate-to-* roles.
import { matches, selectorFromLabelSelector } from '../../core/api/selector.js';
import { type ClusterRole, type ClusterRoleBinding, type PolicyRule, RBAC_GROUP } from '../../core/api/rbac.js';
import { MASTERS_GROUP } from '../api-server/authorization.js';

const API_VERSION = `${RBAC_GROUP}/v1`;
/** Marks what the master made and keeps (Kubernetes' label for its bootstrap policy). */
export const BOOTSTRAP_LABEL = 'kubernetes.io/bootstrapping';
/** Roles and bindings so annotated get missing rules and subjects back at each master start (Kubernetes' reconciliation of its bootstrap policy). */
export const AUTOUPDATE_ANNOTATION = 'rbac.authorization.kubernetes.io/autoupdate';
export const AGGREGATE_TO = (role: 'admin' | 'edit' | 'view') => `rbac.authorization.k8s.io/aggregate-to-${role}`;

const READ = ['get', 'list', 'watch'];
const WRITE = ['create', 'delete', 'deletecollection', 'patch', 'update'];

/** What a namespace's readers may see: every namespaced kind but Secrets (reading those would let one act as their owners). */
const VIEWABLE: readonly PolicyRule[] = [
  {
    apiGroups: [''],
    resources: ['pods', 'pods/log', 'pods/status', 'services', 'services/status', 'endpoints', 'events', 'namespaces', 'namespaces/status', 'configmaps'],
    verbs: READ,
  },
  {
    apiGroups: ['apps'],
    resources: [
      'deployments',
      'deployments/scale',
      'deployments/status',
      'replicasets',
      'replicasets/scale',
      'replicasets/status',
      'daemonsets',
      'daemonsets/status',
    ],
    verbs: READ,
  },
  { apiGroups: ['batch'], resources: ['jobs', 'jobs/status', 'cronjobs', 'cronjobs/status'], verbs: READ },
  { apiGroups: ['policy'], resources: ['poddisruptionbudgets', 'poddisruptionbudgets/status'], verbs: READ },
  { apiGroups: ['autoscaling'], resources: ['horizontalpodautoscalers', 'horizontalpodautoscalers/status'], verbs: READ },
  { apiGroups: ['discovery.k8s.io'], resources: ['endpointslices'], verbs: READ },
  { apiGroups: ['networking.k8s.io'], resources: ['ingresses', 'ingresses/status'], verbs: READ },
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
  { apiGroups: [''], resources: ['pods', 'services', 'endpoints', 'events', 'configmaps'], verbs: WRITE },
  { apiGroups: ['apps'], resources: ['deployments', 'deployments/scale', 'replicasets', 'replicasets/scale', 'daemonsets'], verbs: WRITE },
  { apiGroups: ['batch'], resources: ['jobs', 'cronjobs'], verbs: WRITE },
  { apiGroups: ['policy'], resources: ['poddisruptionbudgets'], verbs: WRITE },
  { apiGroups: ['autoscaling'], resources: ['horizontalpodautoscalers'], verbs: WRITE },
  { apiGroups: ['discovery.k8s.io'], resources: ['endpointslices'], verbs: WRITE },
  { apiGroups: ['networking.k8s.io'], resources: ['ingresses'], verbs: WRITE },
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
    metadata: { name, labels: { [BOOTSTRAP_LABEL]: 'rbac-defaults', ...labels }, annotations: { [AUTOUPDATE_ANNOTATION]: 'true' } },
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
    ...systemClusterRoles(),
  ];
}

/** Paths anyone may read, signed in or not. */
const PUBLIC_INFO = ['/healthz', '/livez', '/readyz', '/version', '/version/'];

/**
 * Every user's rights (asking what it may do, discovery, health) and the roles of the cluster's
 * components, named as Kubernetes names them. Our scheduler, controllers and activator run inside
 * the master on its in-process client, so no request of theirs reaches the authorizer today; the
 * roles say what each needs, so a component moved out of the process gets no more than that.
 */
function systemClusterRoles(): ClusterRole[] {
  return [
    clusterRole('system:basic-user', {}, [
      { apiGroups: ['authorization.k8s.io'], resources: ['selfsubjectaccessreviews', 'selfsubjectrulesreviews'], verbs: ['create'] },
    ]),
    clusterRole('system:discovery', {}, [
      { nonResourceURLs: ['/api', '/api/*', '/apis', '/apis/*', '/openapi', '/openapi/*', ...PUBLIC_INFO], verbs: ['get'] },
    ]),
    clusterRole('system:public-info-viewer', {}, [{ nonResourceURLs: PUBLIC_INFO, verbs: ['get'] }]),
    clusterRole('system:kube-scheduler', {}, [
      { apiGroups: [''], resources: ['pods', 'nodes', 'namespaces', 'services', 'persistentvolumeclaims'], verbs: READ },
      { apiGroups: [''], resources: ['pods/binding', 'bindings'], verbs: ['create'] },
      { apiGroups: [''], resources: ['pods/status'], verbs: ['patch', 'update'] },
      { apiGroups: [''], resources: ['events'], verbs: ['create', 'patch', 'update'] },
      { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['create', 'get', 'update'] },
    ]),
    clusterRole('system:kube-controller-manager', {}, [
      { apiGroups: ['*'], resources: ['*'], verbs: READ },
      { apiGroups: ['', 'apps', 'autoscaling', 'batch', 'policy', 'discovery.k8s.io', 'networking.k8s.io', 'minik8s.io'], resources: ['*'], verbs: WRITE },
      { apiGroups: [RBAC_GROUP], resources: ['clusterroles'], verbs: ['update', 'escalate'] },
      { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['create', 'get', 'update'] },
    ]),
    clusterRole('system:node-proxier', {}, [
      { apiGroups: [''], resources: ['services', 'endpoints', 'nodes'], verbs: READ },
      { apiGroups: ['discovery.k8s.io'], resources: ['endpointslices'], verbs: READ },
      { apiGroups: [''], resources: ['events'], verbs: ['create', 'patch', 'update'] },
    ]),
    clusterRole('minik8s:activator', {}, [
      { apiGroups: ['minik8s.io'], resources: ['functions', 'functionversions', 'workflows'], verbs: READ },
      { apiGroups: ['apps'], resources: ['replicasets', 'replicasets/scale'], verbs: [...READ, 'patch', 'update'] },
      { apiGroups: [''], resources: ['pods', 'endpoints', 'services'], verbs: READ },
    ]),
  ];
}

function clusterRoleBinding(name: string, role: string, subjects: { kind: 'User' | 'Group'; name: string }[]): ClusterRoleBinding {
  return {
    apiVersion: API_VERSION,
    kind: 'ClusterRoleBinding',
    metadata: { name, labels: { [BOOTSTRAP_LABEL]: 'rbac-defaults' }, annotations: { [AUTOUPDATE_ANNOTATION]: 'true' } },
    subjects: subjects.map((s) => ({ ...s, apiGroup: RBAC_GROUP })),
    roleRef: { apiGroup: RBAC_GROUP, kind: 'ClusterRole', name: role },
  } as ClusterRoleBinding;
}

/** cluster-admin for the masters group, every user's basics, and each component's role for its user, as Kubernetes binds them. */
export function defaultClusterRoleBindings(): ClusterRoleBinding[] {
  return [
    clusterRoleBinding('cluster-admin', 'cluster-admin', [{ kind: 'Group', name: MASTERS_GROUP }]),
    clusterRoleBinding('system:basic-user', 'system:basic-user', [{ kind: 'Group', name: 'system:authenticated' }]),
    clusterRoleBinding('system:discovery', 'system:discovery', [{ kind: 'Group', name: 'system:authenticated' }]),
    clusterRoleBinding('system:public-info-viewer', 'system:public-info-viewer', [
      { kind: 'Group', name: 'system:authenticated' },
      { kind: 'Group', name: 'system:unauthenticated' },
    ]),
    clusterRoleBinding('system:kube-scheduler', 'system:kube-scheduler', [{ kind: 'User', name: 'system:kube-scheduler' }]),
    clusterRoleBinding('system:kube-controller-manager', 'system:kube-controller-manager', [{ kind: 'User', name: 'system:kube-controller-manager' }]),
    clusterRoleBinding('system:node-proxier', 'system:node-proxier', [{ kind: 'User', name: 'system:kube-proxy' }]),
    clusterRoleBinding('minik8s:activator', 'minik8s:activator', [{ kind: 'User', name: 'system:minik8s-activator' }]),
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
