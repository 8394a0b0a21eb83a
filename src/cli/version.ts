// `minik8s version`: the client's version, then the server's (or why it could not be asked).
import { VERSION } from '../core/version.js';
import type { VersionInfo } from '../core/client/api-client.js';
import { formatError } from './cli-error.js';
import type { CliContext } from './context.js';

export interface VersionArgs {
  /** Only the client version; no server needed. */
  client?: boolean;
  output?: string;
}

function clientInfo(): VersionInfo {
  const [major = '0', minor = '0'] = VERSION.split('.');
  return { major, minor, gitVersion: `v${VERSION}`, platform: `${process.platform}/${process.arch === 'x64' ? 'amd64' : process.arch}` };
}

export async function runVersion(ctx: CliContext, args: VersionArgs): Promise<number> {
  if (args.output !== undefined && args.output !== 'json') {
    // yaml would pull the YAML library into the one command that must start fastest.
    ctx.err(`error: --output must be 'json'\n`);
    return 1;
  }
  let server: VersionInfo | undefined;
  let failure: unknown;
  if (!args.client) {
    try {
      server = await ctx.client().version();
    } catch (err) {
      failure = err;
    }
  }
  if (args.output === 'json') {
    ctx.out(`${JSON.stringify({ clientVersion: clientInfo(), ...(server ? { serverVersion: server } : {}) }, null, 2)}\n`);
  } else {
    ctx.out(`Client Version: v${VERSION}\n`);
    if (server) ctx.out(`Server Version: ${server.gitVersion ?? 'unknown'}\n`);
  }
  if (failure !== undefined) {
    ctx.err(formatError(failure));
    return 1;
  }
  return 0;
}
