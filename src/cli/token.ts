// `minik8s token create|list|delete`: the master's join tokens, as `kubeadm token` manages bootstrap tokens.
import { pinnedJoinToken } from '../core/pki/join-token-pin.js';
import { caHash } from '../core/pki/pki.js';
import { CliError } from './cli-error.js';
import type { CliContext } from './context.js';
import { alignColumns, formatAge } from './printers.js';

const TOKENS = '/apis/minik8s.io/v1/jointokens';

export interface TokenArgs {
  action: 'create' | 'list' | 'delete';
  /** create: how long the token works, e.g. 24h, 90m, 1h30m; 0 for ever. */
  ttl?: string;
  description?: string;
  /** delete: token IDs (or whole tokens, whose ID part is used). */
  ids?: string[];
  noHeaders?: boolean;
}

interface JoinTokenObject {
  metadata: { name: string; creationTimestamp?: string };
  spec?: { description?: string; expirationTimestamp?: string };
  token?: string;
}

const UNITS: Record<string, number> = { s: 1, m: 60, h: 3600 };

/** A Go-style duration (`24h`, `1h30m`, `90s`, `1.5h`) or `0`, in whole seconds. */
export function parseTtl(text: string): number {
  const t = text.trim();
  if (t === '0') return 0;
  const re = /(\d+(?:\.\d+)?)([hms])/gy;
  let total = 0;
  let at = 0;
  for (let m = re.exec(t); m; m = re.exec(t)) {
    total += Number(m[1]) * UNITS[m[2]!]!;
    at = re.lastIndex;
  }
  if (t === '' || at !== t.length) {
    throw new CliError(`invalid --ttl "${text}": use a duration such as 24h, 90m or 1h30m, or 0 for a token that never expires`);
  }
  const seconds = Math.round(total);
  if (seconds <= 0) throw new CliError(`invalid --ttl "${text}": must be at least 1s (or 0 for never)`);
  return seconds;
}

/** Rows of `token list`: ID, time left, expiry and description, as kubeadm shows them. */
export function tokenRows(items: readonly JoinTokenObject[], now: Date, options: { noHeaders?: boolean } = {}): string[][] {
  const rows = [...items]
    .sort((a, b) => a.metadata.name.localeCompare(b.metadata.name))
    .map((t) => {
      const expires = t.spec?.expirationTimestamp;
      const left = expires ? Date.parse(expires) - now.getTime() : undefined;
      const ttl = left === undefined ? '<forever>' : left <= 0 ? '<expired>' : formatAge(left);
      return [t.metadata.name, ttl, expires ?? '<never>', t.spec?.description || '<none>'];
    });
  return options.noHeaders ? rows : [['ID', 'TTL', 'EXPIRES', 'DESCRIPTION'], ...rows];
}

export async function runToken(ctx: CliContext, args: TokenArgs): Promise<number> {
  const client = ctx.client();
  switch (args.action) {
    case 'create': {
      const body: Record<string, unknown> = { apiVersion: 'minik8s.io/v1', kind: 'JoinToken' };
      if (args.ttl !== undefined) body.ttlSeconds = parseTtl(args.ttl);
      if (args.description !== undefined) body.description = args.description;
      const created = (await client.request('POST', TOKENS, { body })) as JoinTokenObject;
      if (!created?.token) throw new CliError('the server answered without a token');
      // Only the token, so that scripts can capture it: TOKEN=$(minik8s token create). Over TLS
      // it carries the hash of the CA this CLI trusts, so workers can check the master with it.
      const ca = client.server.protocol === 'https:' ? client.trustedCa : undefined;
      ctx.out(`${ca ? pinnedJoinToken(caHash(ca), created.token) : created.token}\n`);
      return 0;
    }
    case 'list': {
      const list = (await client.request('GET', TOKENS)) as { items?: JoinTokenObject[] };
      const items = list.items ?? [];
      if (items.length === 0) {
        ctx.err('No join tokens found.\n');
        return 0;
      }
      ctx.out(alignColumns(tokenRows(items, ctx.now(), { noHeaders: args.noHeaders })));
      return 0;
    }
    case 'delete': {
      const ids = (args.ids ?? []).map((id) => id.split('.')[0]!);
      if (ids.length === 0) throw new CliError('minik8s token delete needs at least one token ID (see "minik8s token list")');
      for (const id of ids) {
        await client.request('DELETE', `${TOKENS}/${encodeURIComponent(id)}`);
        ctx.out(`join token "${id}" deleted\n`);
      }
      return 0;
    }
    default:
      throw new CliError(`unknown token command "${String(args.action)}": use create, list or delete`);
  }
}
