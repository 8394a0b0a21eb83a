// The scheduler's picture of the cluster: nodes with their pods' aggregates, kept current by informer events and by its own assumed bindings.
import type { Node } from '../../core/api/node.js';
import type { Pod } from '../../core/api/pod.js';
import { getOrCreate } from '../../core/get-or-create.js';
import { NodeInfo } from './node-info.js';
import { podInfo, type PodInfo } from './pod-info.js';

/** Pods that have finished hold no resources on their node. */
export function podIsTerminated(pod: Pod): boolean {
  const phase = pod.status?.phase;
  return phase === 'Succeeded' || phase === 'Failed';
}

export function podKey(pod: Pod): string {
  return `${pod.metadata.namespace ?? 'default'}/${pod.metadata.name ?? ''}`;
}

/** What schedule() reads: nodes in name order and the cluster-wide facts inter-pod affinity needs. */
export interface ClusterView {
  /** Nodes that exist (a pod may name a node the informer has not shown yet), sorted by name. */
  nodes(): readonly NodeInfo[];
  /** Bound pods that carry required anti-affinity terms (they repel incoming pods). */
  podsWithAntiAffinity(): Iterable<PodInfo>;
  /** Where a bound pod is. */
  nodeOf(nodeName: string): NodeInfo | undefined;
  namespaceLabels(namespace: string): Readonly<Record<string, string>> | undefined;
}

/**
 * Incremental by design: every event costs O(1) (plus the pod's own ports and terms), so that
 * 10,000 pods over 1,000 nodes are placed without ever summing a node's pods again.
 */
export class SchedulerCache implements ClusterView {
  readonly #infos = new Map<string, NodeInfo>();
  readonly #podNode = new Map<string, string>();
  readonly #antiAffinity = new Map<string, PodInfo>();
  readonly #assumed = new Set<string>();
  readonly #namespaces = new Map<string, Readonly<Record<string, string>>>();
  #sorted: NodeInfo[] | undefined;

  nodes(): readonly NodeInfo[] {
    if (!this.#sorted) {
      this.#sorted = [...this.#infos.values()].filter((i) => i.node !== undefined).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    }
    return this.#sorted;
  }

  podsWithAntiAffinity(): Iterable<PodInfo> {
    return this.#antiAffinity.values();
  }

  nodeOf(nodeName: string): NodeInfo | undefined {
    return this.#infos.get(nodeName);
  }

  namespaceLabels(namespace: string): Readonly<Record<string, string>> | undefined {
    return this.#namespaces.get(namespace);
  }

  setNamespace(name: string, labels: Readonly<Record<string, string>> | undefined): void {
    if (labels === undefined) this.#namespaces.delete(name);
    else this.#namespaces.set(name, labels);
  }

  setNode(node: Node): void {
    const name = node.metadata.name!;
    const info = this.#infos.get(name);
    if (info) {
      if (!info.node) this.#sorted = undefined;
      info.setNode(node);
    } else {
      this.#infos.set(name, new NodeInfo(name, node));
      this.#sorted = undefined;
    }
  }

  deleteNode(name: string): void {
    const info = this.#infos.get(name);
    if (!info) return;
    this.#sorted = undefined;
    // Its pods stay accounted until their own deletions arrive, as in Kubernetes' cache.
    if (info.pods.size > 0) info.setNode(undefined);
    else this.#infos.delete(name);
  }

  /** An informer's view of a pod (added or updated). */
  updatePod(pod: Pod): void {
    const key = podKey(pod);
    const nodeName = pod.spec.nodeName ?? '';
    if (!nodeName) {
      // Our binding may simply not have reached the informer yet: keep the assumption.
      if (!this.#assumed.has(key)) this.#remove(key);
      return;
    }
    this.#assumed.delete(key);
    if (podIsTerminated(pod)) {
      this.#remove(key);
      return;
    }
    this.#place(podInfo(pod));
  }

  deletePod(pod: Pod): void {
    const key = podKey(pod);
    this.#assumed.delete(key);
    this.#remove(key);
  }

  /** Counts a pod on the node chosen for it before the binding is written, so the next decision sees it. */
  assume(info: PodInfo, nodeName: string): void {
    this.#assumed.add(info.key);
    this.#place({ ...info, nodeName });
  }

  /** Undoes assume() after a failed binding; a pod the informer has since seen bound stays. */
  forget(key: string): void {
    if (!this.#assumed.delete(key)) return;
    this.#remove(key);
  }

  isAssumed(key: string): boolean {
    return this.#assumed.has(key);
  }

  get assumedCount(): number {
    return this.#assumed.size;
  }

  #place(info: PodInfo): void {
    const previous = this.#podNode.get(info.key);
    if (previous !== undefined && previous !== info.nodeName) this.#remove(info.key);
    getOrCreate(this.#infos, info.nodeName, () => new NodeInfo(info.nodeName)).addPod(info);
    this.#podNode.set(info.key, info.nodeName);
    if (info.antiAffinity.length) this.#antiAffinity.set(info.key, info);
    else this.#antiAffinity.delete(info.key);
  }

  #remove(key: string): void {
    const nodeName = this.#podNode.get(key);
    if (nodeName === undefined) return;
    this.#podNode.delete(key);
    this.#antiAffinity.delete(key);
    const node = this.#infos.get(nodeName);
    if (!node) return;
    node.removePod(key);
    if (!node.node && node.pods.size === 0) this.#infos.delete(nodeName);
  }
}
