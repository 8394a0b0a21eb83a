// Scores: among the nodes that fit, which is best for this pod. Pure functions of the node's aggregates and the pod's requests; higher wins.
import type { NodeInfo } from './node-info.js';
import type { PodInfo } from './pod-info.js';

export const POLICIES = ['least-allocated', 'fewest-pods', 'balanced', 'round-robin'] as const;
export type SchedulerPolicy = (typeof POLICIES)[number];

export type Score = (pod: PodInfo, node: NodeInfo) => number;

const MIB = 1024 * 1024;

/**
 * The seeds' rule: free memory in MiB + 1000 x (1 - cpu use) x cores, where use is what the
 * node's pods request (this one included) over what it can allocate. 1000 x free cores is free
 * millicores, so a core free weighs as much as a GiB free. Requests count with Kubernetes'
 * defaults for containers that ask for nothing, so that such pods spread too.
 */
export function leastAllocatedScore(pod: PodInfo, node: NodeInfo): number {
  const a = node.allocatable;
  const freeMemoryMiB = (a.memory - node.nonZeroMemory - pod.nonZero.memory) / MIB;
  const cores = a.milliCPU / 1000;
  const cpuUse = a.milliCPU > 0 ? (node.nonZeroMilliCPU + pod.nonZero.milliCPU) / a.milliCPU : 1;
  return freeMemoryMiB + 1000 * (1 - cpuUse) * cores;
}

/** The seeds' second rule: the node running the fewest pods. */
export function fewestPodsScore(_pod: PodInfo, node: NodeInfo): number {
  return -node.podCount;
}

function fraction(requested: number, allocatable: number): number {
  if (allocatable <= 0) return 1;
  return Math.min(1, requested / allocatable);
}

/**
 * Kubernetes' BalancedAllocation: 100 x (1 - the standard deviation of the cpu and memory
 * fractions), so a node whose cpu and memory fill up together scores best. For two resources the
 * standard deviation is half their difference.
 */
export function balancedAllocationScore(pod: PodInfo, node: NodeInfo): number {
  const a = node.allocatable;
  const cpu = fraction(node.nonZeroMilliCPU + pod.nonZero.milliCPU, a.milliCPU);
  const memory = fraction(node.nonZeroMemory + pod.nonZero.memory, a.memory);
  return 100 * (1 - Math.abs(cpu - memory) / 2);
}

/** Kubernetes' LeastAllocated on a 0-100 scale: the mean free fraction of cpu and memory. */
export function leastAllocatedFractionScore(pod: PodInfo, node: NodeInfo): number {
  const a = node.allocatable;
  const cpu = 1 - fraction(node.nonZeroMilliCPU + pod.nonZero.milliCPU, a.milliCPU);
  const memory = 1 - fraction(node.nonZeroMemory + pod.nonZero.memory, a.memory);
  return (100 * (cpu + memory)) / 2;
}

/**
 * The `balanced` policy is what kube-scheduler does by default: BalancedAllocation plus
 * LeastAllocated with equal weights. Balance alone would pile pods onto one node as long as its
 * cpu and memory stayed in step.
 */
export function balancedScore(pod: PodInfo, node: NodeInfo): number {
  return balancedAllocationScore(pod, node) + leastAllocatedFractionScore(pod, node);
}

/** The score each policy ranks nodes by (round-robin ranks none: it rotates). */
export const POLICY_SCORES: Readonly<Record<Exclude<SchedulerPolicy, 'round-robin'>, Score>> = {
  'least-allocated': leastAllocatedScore,
  'fewest-pods': fewestPodsScore,
  balanced: balancedScore,
};
