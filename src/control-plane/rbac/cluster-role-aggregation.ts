// The ClusterRole aggregation controller: fills each ClusterRole with an aggregationRule with the rules of the ClusterRoles its selectors pick, as Kubernetes' clusterrole-aggregation controller does.
import { type ClusterRole, clusterRoleKind } from '../../core/api/rbac.js';
import type { Client } from '../../core/client/client.js';
import { runController } from '../../core/controller/controller.js';
import type { InformerFactory } from '../../core/controller/informer-factory.js';
import { WorkQueue } from '../../core/controller/work-queue.js';
import { ConflictError, NotFoundError } from '../../core/errors.js';
import { aggregatedRules } from './default-roles.js';

export interface ClusterRoleAggregationOptions {
  client: Client;
  informers: InformerFactory;
  log?: (message: string) => void;
}

export class ClusterRoleAggregation {
  readonly #options: ClusterRoleAggregationOptions;

  constructor(options: ClusterRoleAggregationOptions) {
    this.#options = options;
  }

  async start(signal: AbortSignal): Promise<void> {
    const { client, informers, log } = this.#options;
    const roles = informers.informer<ClusterRole>(clusterRoleKind);
    const queue = new WorkQueue();
    // Any ClusterRole's change may change what an aggregated one selects: look at every aggregated role again (there are few).
    const enqueueAggregated = () => {
      for (const r of roles.list()) if (r.aggregationRule) queue.add(r.metadata.name ?? '');
    };
    roles.addHandlers({ onAdd: enqueueAggregated, onUpdate: enqueueAggregated, onDelete: enqueueAggregated });
    await runController(
      {
        name: 'clusterrole-aggregation',
        queue,
        informers: [roles],
        log,
        reconcile: async (name) => {
          const role = roles.get(name);
          if (!role) return;
          const rules = aggregatedRules(role, roles.list());
          if (rules === undefined || JSON.stringify(rules) === JSON.stringify(role.rules ?? [])) return;
          try {
            await client.replace(clusterRoleKind, { name }, { ...role, rules });
          } catch (err) {
            // Gone, or changed since the cache saw it: the informer's next event enqueues it again.
            if (err instanceof NotFoundError || err instanceof ConflictError) return;
            throw err;
          }
        },
      },
      signal,
    );
  }
}
