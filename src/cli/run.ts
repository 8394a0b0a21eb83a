// `minik8s run NAME --image=IMG`: creates one pod from flags, as kubectl run does (label run=NAME, one container named NAME).
import { podKind } from '../core/api/pod.js';
import { CliError } from './cli-error.js';
import type { CliContext } from './context.js';
import { objectRef } from './printers.js';

export interface RunArgs {
  name?: string;
  image?: string;
  /** Words after `--`: the container's args, or its command with --command. */
  args: string[];
  command?: boolean;
  restart?: string;
  labels?: string;
  env: string[];
  port?: string;
  imagePullPolicy?: string;
}

const RESTART_POLICIES = ['Always', 'OnFailure', 'Never'];

/** The pod `run` creates. */
export function runPod(args: RunArgs, namespace: string): Record<string, unknown> {
  if (!args.name) throw new CliError('NAME is required for run');
  if (!args.image) throw new CliError('--image is required');
  const restartPolicy = args.restart ?? 'Always';
  if (!RESTART_POLICIES.includes(restartPolicy)) throw new CliError(`invalid restart policy: ${restartPolicy}`);
  if (args.command && args.args.length === 0) throw new CliError('--command requires a command after --');
  const labels: Record<string, string> = {};
  for (const pair of args.labels ? args.labels.split(',') : [`run=${args.name}`]) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw new CliError(`invalid label spec: ${pair}`);
    labels[pair.slice(0, eq)] = pair.slice(eq + 1);
  }
  const env = args.env.map((pair) => {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw new CliError(`invalid env: ${pair}`);
    return { name: pair.slice(0, eq), value: pair.slice(eq + 1) };
  });
  let port: number | undefined;
  if (args.port !== undefined) {
    port = Number(args.port);
    if (!/^\d+$/.test(args.port) || port < 1 || port > 65535) throw new CliError(`invalid port: ${args.port}`);
  }
  const container: Record<string, unknown> = { name: args.name, image: args.image };
  if (args.args.length) container[args.command ? 'command' : 'args'] = args.args;
  if (env.length) container.env = env;
  if (port !== undefined) container.ports = [{ containerPort: port }];
  if (args.imagePullPolicy) container.imagePullPolicy = args.imagePullPolicy;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: args.name, namespace, labels },
    spec: { containers: [container], restartPolicy },
  };
}

export async function runRun(ctx: CliContext, args: RunArgs): Promise<number> {
  const pod = runPod(args, ctx.namespace);
  const created = await ctx.client().create(podKind, pod, { namespace: ctx.namespace });
  ctx.out(`${objectRef(podKind, created)} created\n`);
  return 0;
}
