// `minik8s uncordon NODE...`: makes nodes schedulable again (clears spec.unschedulable), as kubectl uncordon does.
import type { CliContext } from './context.js';
import { runUncordonNodes, type CordonArgs } from './cordon.js';

export type UncordonArgs = CordonArgs;

export function runUncordon(ctx: CliContext, args: UncordonArgs): Promise<number> {
  return runUncordonNodes(ctx, args);
}
