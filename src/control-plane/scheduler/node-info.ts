// Per-node aggregates the filters and scores read in O(1): allocatable, requested resources, pod count, host ports, the pods themselves.
import type { Node, Taint } from '../../core/api/node.js';
import { parseQuantity, toMilli } from '../../core/api/quantity.js';
import { getOrCreate } from '../../core/get-or-create.js';
import type { HostPort, PodInfo } from './pod-info.js';
import { isNodeReady } from '../../core/api/node.js';

/** What a node offers to pods, in the units requests are counted in. */
export interface Allocatable {
  milliCPU: number;
  memory: number;
  pods: number;
  scalar: Readonly<Record<string, number>>;
}

const HOSTNAME_LABEL = 'kubernetes.io/hostname';

function quantity(q: string | number | undefined, milli: boolean): number {
  if (q === undefined) return 0;
  try {
    return milli ? toMilli(q) : parseQuantity(q);
  } catch {
    return 0;
  }
}

/** status.allocatable, or status.capacity where a node reports no allocatable. */
export function nodeAllocatable(node: Node): Allocatable {
  const list = node.status?.allocatable ?? node.status?.capacity ?? {};
  const scalar: Record<string, number> = {};
  for (const [name, q] of Object.entries(list)) {
    if (name !== 'cpu' && name !== 'memory' && name !== 'pods') scalar[name] = quantity(q, false);
  }
  return { milliCPU: quantity(list.cpu, true), memory: quantity(list.memory, false), pods: Math.floor(quantity(list.pods, false)), scalar };
}

const portKey = (protocol: string, port: number) => `${protocol}/${port}`;

/**
 * One node's view for the scheduler. Mutable on purpose: the scheduler adds and removes pods as
 * its informers (and its own bindings) tell it, so that each decision costs O(1) per node and
 * never sums a node's pods again. Pod and Node objects inside are never mutated.
 */
export class NodeInfo {
  readonly name: string;
  node: Node | undefined;
  allocatable: Allocatable = { milliCPU: 0, memory: 0, pods: 0, scalar: {} };
  labels: Readonly<Record<string, string>> = {};
  taints: readonly Taint[] = [];
  ready = false;
  unschedulable = false;
  readonly pods = new Map<string, PodInfo>();
  /** Sum of the requests of the pods here. */
  requestedMilliCPU = 0;
  requestedMemory = 0;
  readonly requestedScalar = new Map<string, number>();
  /** The same with Kubernetes' defaults for empty requests: what scores use. */
  nonZeroMilliCPU = 0;
  nonZeroMemory = 0;
  /** `protocol/port` -> host IP -> how many pods hold it. */
  readonly usedPorts = new Map<string, Map<string, number>>();
  /** Bumped on every change: lets callers cache per-node results. */
  generation = 0;

  constructor(name: string, node?: Node) {
    this.name = name;
    if (node) this.setNode(node);
  }

  setNode(node: Node | undefined): void {
    this.node = node;
    this.generation++;
    if (!node) {
      this.ready = false;
      return;
    }
    this.allocatable = nodeAllocatable(node);
    this.labels = node.metadata.labels ?? {};
    this.taints = node.spec?.taints ?? [];
    this.ready = isNodeReady(node);
    this.unschedulable = node.spec?.unschedulable === true;
  }

  /** The node's value for a topology key; kubernetes.io/hostname falls back to the node's name (nodes made by hand often lack the label). */
  topologyValue(key: string): string | undefined {
    const v = this.labels[key];
    if (v !== undefined) return v;
    return key === HOSTNAME_LABEL ? this.name : undefined;
  }

  get podCount(): number {
    return this.pods.size;
  }

  addPod(p: PodInfo): void {
    if (this.pods.has(p.key)) this.removePod(p.key);
    this.pods.set(p.key, p);
    this.#account(p, 1);
  }

  removePod(key: string): PodInfo | undefined {
    const p = this.pods.get(key);
    if (!p) return undefined;
    this.pods.delete(key);
    this.#account(p, -1);
    return p;
  }

  /** True when a wanted host port collides with one in use: same protocol and port, and the same address or a wildcard on either side. */
  portConflict(wanted: HostPort): boolean {
    const ips = this.usedPorts.get(portKey(wanted.protocol, wanted.port));
    if (!ips || ips.size === 0) return false;
    if (wanted.ip === '0.0.0.0') return true;
    return ips.has('0.0.0.0') || ips.has(wanted.ip);
  }

  #account(p: PodInfo, sign: 1 | -1): void {
    this.generation++;
    this.requestedMilliCPU += sign * p.requests.milliCPU;
    this.requestedMemory += sign * p.requests.memory;
    this.nonZeroMilliCPU += sign * p.nonZero.milliCPU;
    this.nonZeroMemory += sign * p.nonZero.memory;
    for (const [name, n] of Object.entries(p.requests.scalar ?? {})) {
      const next = (this.requestedScalar.get(name) ?? 0) + sign * n;
      if (next === 0) this.requestedScalar.delete(name);
      else this.requestedScalar.set(name, next);
    }
    for (const hp of p.hostPorts) {
      const key = portKey(hp.protocol, hp.port);
      const ips = getOrCreate(this.usedPorts, key, () => new Map());
      const next = (ips.get(hp.ip) ?? 0) + sign;
      if (next <= 0) ips.delete(hp.ip);
      else ips.set(hp.ip, next);
      if (ips.size === 0) this.usedPorts.delete(key);
    }
  }
}
