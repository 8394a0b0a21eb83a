// Keeps an RbacIndex current from the master's shared informers of Roles, ClusterRoles, RoleBindings and ClusterRoleBindings.
import {
  type ClusterRole,
  type ClusterRoleBinding,
  clusterRoleBindingKind,
  clusterRoleKind,
  type Role,
  type RoleBinding,
  roleBindingKind,
  roleKind,
} from '../../core/api/rbac.js';
import type { InformerFactory } from '../../core/controller/informer-factory.js';
import { RbacIndex } from './rbac-authorizer.js';

export interface RbacIndexFeed {
  index: RbacIndex;
  /** Resolves once all four informers have listed (until then RBAC allows nothing a binding would grant). */
  whenSynced(): Promise<void>;
}

/** Files every role and binding into a new index as the informers see them; handlers only touch maps, so they are cheap and never throw. */
export function feedRbacIndex(informers: InformerFactory): RbacIndexFeed {
  const index = new RbacIndex();
  const roles = informers.informer<Role>(roleKind);
  const clusterRoles = informers.informer<ClusterRole>(clusterRoleKind);
  const roleBindings = informers.informer<RoleBinding>(roleBindingKind);
  const clusterRoleBindings = informers.informer<ClusterRoleBinding>(clusterRoleBindingKind);
  roles.addHandlers({ onAdd: (r) => index.setRole(r), onUpdate: (_, r) => index.setRole(r), onDelete: (r) => index.deleteRole(r) });
  clusterRoles.addHandlers({
    onAdd: (r) => index.setClusterRole(r),
    onUpdate: (_, r) => index.setClusterRole(r),
    onDelete: (r) => index.deleteClusterRole(r),
  });
  for (const bindings of [roleBindings, clusterRoleBindings]) {
    bindings.addHandlers({ onAdd: (b) => index.setBinding(b), onUpdate: (_, b) => index.setBinding(b), onDelete: (b) => index.deleteBinding(b) });
  }
  return {
    index,
    whenSynced: async () => {
      await Promise.all([roles, clusterRoles, roleBindings, clusterRoleBindings].map((i) => i.whenSynced()));
    },
  };
}
