// Keeps the master's host routes to the Ready nodes' pod ranges (src/net/pod-routes.ts) in step with the Nodes, so the activator can reach pods on other machines.
import { isNodeReady, type Node, nodeKind } from '../../core/api/node.js';
import { runController, type ReconcileResult } from '../../core/controller/controller.js';
import type { InformerFactory } from '../../core/controller/informer-factory.js';
import type { Informer } from '../../core/controller/informer.js';
import { WorkQueue } from '../../core/controller/work-queue.js';
import { runNetCommand, type NetRunner } from '../../net/net-command.js';
import { removePodRoutes, syncPodRoutes, type NodeRouteFacts } from '../../net/pod-routes.js';

const KEY = 'pod-routes';
/** Looked at again this often even when no Node changes: someone may have flushed a route. */
export const POD_ROUTES_RESYNC_MS = 30_000;

export function nodeRouteFacts(node: Node): NodeRouteFacts {
  return {
    name: node.metadata.name!,
    podCIDR: node.spec?.podCIDR,
    internalIP: node.status?.addresses?.find((a) => a.type === 'InternalIP')?.address,
    ready: isNodeReady(node),
  };
}

function routeFieldsChanged(a: Node, b: Node): boolean {
  const x = nodeRouteFacts(a);
  const y = nodeRouteFacts(b);
  return x.podCIDR !== y.podCIDR || x.internalIP !== y.internalIP || x.ready !== y.ready;
}

export interface PodRouteSyncOptions {
  /** Where the Node informer comes from (the process starts it). */
  informers: InformerFactory;
  clusterCIDR: string;
  run?: NetRunner;
  resyncMs?: number;
  log?: (message: string) => void;
}

export class PodRouteSync {
  readonly informer: Informer<Node>;
  readonly queue = new WorkQueue({ baseDelayMs: 500, maxDelayMs: 30_000 });
  readonly #o: PodRouteSyncOptions;
  readonly #run: NetRunner;
  readonly #log: (message: string) => void;

  constructor(options: PodRouteSyncOptions) {
    this.#o = options;
    this.#run = options.run ?? runNetCommand;
    this.#log = options.log ?? (() => {});
    this.informer = options.informers.informer<Node>(nodeKind);
    const enqueue = () => this.queue.add(KEY);
    // Heartbeats change every Node every 10 s: only readiness, range and address matter here.
    this.informer.addHandlers({
      onAdd: enqueue,
      onUpdate: (old, node) => {
        if (routeFieldsChanged(old, node)) enqueue();
      },
      onDelete: enqueue,
    });
  }

  /** Runs until `signal`, then removes the routes it made. */
  async start(signal: AbortSignal): Promise<void> {
    this.queue.add(KEY);
    await runController({ name: 'pod-routes', queue: this.queue, informers: [this.informer], reconcile: () => this.reconcile(), log: this.#log }, signal);
    try {
      for (const c of await removePodRoutes({ clusterCIDR: this.#o.clusterCIDR, run: this.#run })) this.#log(`pod routes: ${c}`);
    } catch (err) {
      this.#log(`pod routes: cannot remove ours: ${err instanceof Error ? err.message : String(err)}`);
    }
  }

  async reconcile(): Promise<ReconcileResult> {
    const commands = await syncPodRoutes({ nodes: this.informer.list().map(nodeRouteFacts), clusterCIDR: this.#o.clusterCIDR, run: this.#run });
    for (const c of commands) this.#log(`pod routes: ${c}`);
    return { requeueAfterMs: this.#o.resyncMs ?? POD_ROUTES_RESYNC_MS };
  }
}
