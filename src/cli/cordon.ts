// `minik8s cordon NODE...`: marks nodes unschedulable (spec.unschedulable), as kubectl cordon does; uncordon and drain share it.
import { kindCollectionPath, kindObjectPath, type ApiClient } from '../core/client/api-client.js';
import { CliError } from './cli-error.js';
import type { CliContext } from './context.js';

/** Nodes' place in the API, without loading the Node schema (the CLI starts faster without valibot). */
export const NODES = { group: '', version: 'v1', resource: 'nodes', namespaced: false } as const;

export interface CordonArgs {
  nodes: string[];
  /** -l: every node matching this label selector. */
  selector?: string;
}

interface NodeLike {
  metadata: { name?: string };
  spec?: { unschedulable?: boolean };
}

/**
 * Sets or clears spec.unschedulable; returns false when the node was already so (nothing written).
 * Clearing removes the field, as kubectl's patch to `false` does (it is omitted when false).
 */
export async function setUnschedulable(client: ApiClient, name: string, unschedulable: boolean): Promise<boolean> {
  const node = (await client.request('GET', kindObjectPath(NODES, name))) as NodeLike;
  if (Boolean(node.spec?.unschedulable) === unschedulable) return false;
  await client.request('PATCH', kindObjectPath(NODES, name), {
    body: { spec: { unschedulable: unschedulable ? true : null } },
    contentType: 'application/merge-patch+json',
  });
  return true;
}

/** The names the arguments select: given names, or the nodes a selector matches. */
export async function selectNodes(ctx: CliContext, args: CordonArgs, command: string): Promise<string[]> {
  if (args.nodes.length > 0 && args.selector) throw new CliError('cannot specify both a node name and a --selector option');
  if (args.selector !== undefined) {
    const list = (await ctx.client().request('GET', kindCollectionPath(NODES), { query: { labelSelector: args.selector } })) as { items?: NodeLike[] };
    const names = (list.items ?? []).map((n) => n.metadata.name ?? '');
    if (names.length === 0) throw new CliError('No resources found');
    return names;
  }
  if (args.nodes.length === 0) throw new CliError(`USAGE: ${command} NODE [flags]\nSee 'minik8s ${command} --help' for help and examples`);
  return args.nodes;
}

async function run(ctx: CliContext, args: CordonArgs, unschedulable: boolean): Promise<number> {
  const command = unschedulable ? 'cordon' : 'uncordon';
  const names = await selectNodes(ctx, args, command);
  for (const name of names) {
    const changed = await setUnschedulable(ctx.client(), name, unschedulable);
    ctx.out(`node/${name} ${changed ? '' : 'already '}${command}ed\n`);
  }
  return 0;
}

export function runCordon(ctx: CliContext, args: CordonArgs): Promise<number> {
  return run(ctx, args, true);
}

/** Used by uncordon.ts, which is the command's own entry point. */
export function runUncordonNodes(ctx: CliContext, args: CordonArgs): Promise<number> {
  return run(ctx, args, false);
}
