// `minik8s create token SA [--duration 1h] [--audience A]`: a bound token for a ServiceAccount from the TokenRequest API, printed alone, as kubectl create token.
import { CliError } from './cli-error.js';
import type { CliContext } from './context.js';

export interface CreateTokenArgs {
  names: string[];
  duration?: string;
  audience: string[];
  boundObjectKind?: string;
  boundObjectName?: string;
  boundObjectUid?: string;
}

const UNITS: Record<string, number> = { ns: 1e-9, us: 1e-6, µs: 1e-6, ms: 1e-3, s: 1, m: 60, h: 3600 };

/** A Go duration (`1h`, `90m`, `1h30m`, `600s`) in whole seconds, as kubectl reads --duration. */
export function parseGoDuration(text: string): number {
  const parts = [...text.matchAll(/(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)/g)];
  if (!text || parts.map((p) => p[0]).join('') !== text) {
    throw new CliError(`invalid argument "${text}" for "--duration" flag: time: invalid duration "${text}"`);
  }
  return Math.floor(parts.reduce((sum, p) => sum + Number(p[1]) * UNITS[p[2]!]!, 0));
}

export async function runCreateToken(ctx: CliContext, args: CreateTokenArgs): Promise<number> {
  if (args.names.length !== 1)
    throw new CliError(`exactly one NAME is required, got ${args.names.length}\nSee 'minik8s create token -h' for help and examples`);
  const name = args.names[0]!;
  const spec: Record<string, unknown> = {};
  if (args.audience.length) spec.audiences = args.audience;
  if (args.duration !== undefined) {
    const seconds = parseGoDuration(args.duration);
    if (seconds < 0) throw new CliError('--duration must be positive');
    if (seconds > 0) spec.expirationSeconds = seconds;
  }
  if (args.boundObjectName !== undefined || args.boundObjectKind !== undefined) {
    if (!args.boundObjectKind || !args.boundObjectName) throw new CliError('--bound-object-kind and --bound-object-name go together');
    spec.boundObjectRef = {
      kind: args.boundObjectKind,
      apiVersion: 'v1',
      name: args.boundObjectName,
      ...(args.boundObjectUid ? { uid: args.boundObjectUid } : {}),
    };
  }
  const path = `/api/v1/namespaces/${encodeURIComponent(ctx.namespace)}/serviceaccounts/${encodeURIComponent(name)}/token`;
  const answer = (await ctx.client().request('POST', path, {
    body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec },
  })) as { status?: { token?: string } };
  if (!answer.status?.token) throw new CliError('the server answered the TokenRequest without a token');
  ctx.out(`${answer.status.token}\n`);
  return 0;
}
