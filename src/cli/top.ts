// `minik8s top pods|nodes [NAME]`: CPU and memory use from metrics.k8s.io, in kubectl's columns.
import { nodeKind, type Node } from '../core/api/node.js';
import { parseQuantity, toMilli } from '../core/api/quantity.js';
import { ApiError } from '../core/errors.js';
import { CliError } from './cli-error.js';
import type { CliContext } from './context.js';
import { alignColumns } from './printers.js';

export interface TopArgs {
  resource?: string;
  name?: string;
  allNamespaces?: boolean;
  noHeaders?: boolean;
}

const METRICS = '/apis/metrics.k8s.io/v1beta1';

interface Usage {
  cpu?: string;
  memory?: string;
}

export interface PodMetricsItem {
  metadata: { name: string; namespace?: string };
  containers?: { name: string; usage?: Usage }[];
}

export interface NodeMetricsItem {
  metadata: { name: string };
  usage?: Usage;
}

/** kubectl prints CPU in millicores and memory in whole MiB. */
export function formatCpu(milli: number): string {
  return `${Math.round(milli)}m`;
}

export function formatMemory(bytes: number): string {
  return `${Math.floor(bytes / (1024 * 1024))}Mi`;
}

function cpuMilli(q: string | undefined): number {
  return q ? toMilli(q) : 0;
}

function memoryBytes(q: string | undefined): number {
  return q ? parseQuantity(q) : 0;
}

/** Rows for `top pods`: containers summed per pod, sorted by namespace and name. */
export function podTopRows(items: readonly PodMetricsItem[], options: { allNamespaces?: boolean; noHeaders?: boolean }): string[][] {
  const sorted = [...items].sort((a, b) => `${a.metadata.namespace}/${a.metadata.name}`.localeCompare(`${b.metadata.namespace}/${b.metadata.name}`));
  const rows = sorted.map((p) => {
    const containers = p.containers ?? [];
    const cpu = containers.reduce((sum, c) => sum + cpuMilli(c.usage?.cpu), 0);
    const memory = containers.reduce((sum, c) => sum + memoryBytes(c.usage?.memory), 0);
    const row = [p.metadata.name, formatCpu(cpu), formatMemory(memory)];
    return options.allNamespaces ? [p.metadata.namespace ?? '', ...row] : row;
  });
  const header = ['NAME', 'CPU(cores)', 'MEMORY(bytes)'];
  return options.noHeaders ? rows : [options.allNamespaces ? ['NAMESPACE', ...header] : header, ...rows];
}

/** Rows for `top nodes`, percentages of allocatable (capacity when unset); `<unknown>` for nodes without metrics. */
export function nodeTopRows(nodes: readonly Node[], metrics: readonly NodeMetricsItem[], options: { noHeaders?: boolean } = {}): string[][] {
  const byName = new Map(metrics.map((m) => [m.metadata.name, m]));
  const percent = (used: number, available: number | undefined) => (available && available > 0 ? `${Math.trunc((used / available) * 100)}%` : '<unknown>');
  const rows = [...nodes]
    .sort((a, b) => (a.metadata.name ?? '').localeCompare(b.metadata.name ?? ''))
    .map((node) => {
      const name = node.metadata.name ?? '';
      const m = byName.get(name);
      if (!m) return [name, '<unknown>', '<unknown>', '<unknown>', '<unknown>'];
      const available = { ...node.status?.capacity, ...node.status?.allocatable } as Record<string, string | number | undefined>;
      const cpu = cpuMilli(m.usage?.cpu);
      const memory = memoryBytes(m.usage?.memory);
      const cpuAvailable = available.cpu !== undefined ? toMilli(available.cpu) : undefined;
      const memoryAvailable = available.memory !== undefined ? parseQuantity(available.memory) : undefined;
      return [name, formatCpu(cpu), percent(cpu, cpuAvailable), formatMemory(memory), percent(memory, memoryAvailable)];
    });
  const header = ['NAME', 'CPU(cores)', 'CPU%', 'MEMORY(bytes)', 'MEMORY%'];
  return options.noHeaders ? rows : [header, ...rows];
}

/** `pods`, `pod`, `po` -> pods; `nodes`, `node`, `no` -> nodes. */
export function topResource(value: string | undefined): 'pods' | 'nodes' {
  const v = (value ?? '').toLowerCase();
  if (['pod', 'pods', 'po'].includes(v)) return 'pods';
  if (['node', 'nodes', 'no'].includes(v)) return 'nodes';
  throw new CliError(value ? `unknown resource "${value}" for "minik8s top": use pods or nodes` : 'minik8s top needs a resource: pods or nodes');
}

const GENERIC_NOT_FOUND = 'the server could not find the requested resource';

/** A cluster without the metrics API answers 404 for its paths: kubectl's message for that. A named object's own 404 passes through. */
async function metricsCall<T>(ctx: CliContext, path: string, named: boolean): Promise<T> {
  try {
    return (await ctx.client().request('GET', path)) as T;
  } catch (err) {
    if (err instanceof ApiError && err.code === 404 && (!named || err.message === GENERIC_NOT_FOUND)) throw new CliError('Metrics API not available');
    throw err;
  }
}

export async function runTop(ctx: CliContext, args: TopArgs): Promise<number> {
  const resource = topResource(args.resource);
  if (resource === 'pods') {
    let items: PodMetricsItem[];
    if (args.name) {
      items = [
        await metricsCall<PodMetricsItem>(ctx, `${METRICS}/namespaces/${encodeURIComponent(ctx.namespace)}/pods/${encodeURIComponent(args.name)}`, true),
      ];
    } else {
      const path = args.allNamespaces ? `${METRICS}/pods` : `${METRICS}/namespaces/${encodeURIComponent(ctx.namespace)}/pods`;
      items = (await metricsCall<{ items?: PodMetricsItem[] }>(ctx, path, false)).items ?? [];
    }
    if (items.length === 0) {
      ctx.err(args.allNamespaces ? 'No resources found\n' : `No resources found in ${ctx.namespace} namespace.\n`);
      return 0;
    }
    ctx.out(alignColumns(podTopRows(items, { allNamespaces: args.allNamespaces, noHeaders: args.noHeaders })));
    return 0;
  }
  let nodes: Node[];
  let metrics: NodeMetricsItem[];
  if (args.name) {
    nodes = [(await ctx.client().get(nodeKind, { name: args.name })) as Node];
    metrics = [await metricsCall<NodeMetricsItem>(ctx, `${METRICS}/nodes/${encodeURIComponent(args.name)}`, true)];
  } else {
    const [list, m] = await Promise.all([ctx.client().list(nodeKind), metricsCall<{ items?: NodeMetricsItem[] }>(ctx, `${METRICS}/nodes`, false)]);
    nodes = list.items as Node[];
    metrics = m.items ?? [];
  }
  if (nodes.length === 0) {
    ctx.err('No resources found\n');
    return 0;
  }
  if (metrics.length === 0) throw new CliError('metrics not available yet');
  ctx.out(alignColumns(nodeTopRows(nodes, metrics, { noHeaders: args.noHeaders })));
  return 0;
}
