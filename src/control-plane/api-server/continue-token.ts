// Kubernetes' list continue tokens: base64url of {"v","rv","start"}, the revision of the first page and the key to start the next one at.
import { BadRequestError } from '../../core/errors.js';

const TOKEN_VERSION = 'meta.k8s.io/v1';

/** What a continue token says: read from `fromKey` at `revision` (undefined: at the current revision, an inconsistent continuation). */
export interface Continuation {
  fromKey: string;
  revision: number | undefined;
}

/**
 * A token for the page after `lastKey`, read at `revision` (-1: whatever is current then).
 * The key is kept relative to the list's prefix, so a token never reaches outside it.
 */
export function encodeContinue(lastKey: string, prefix: string, revision: number): string {
  const start = `${lastKey.startsWith(prefix) ? lastKey.slice(prefix.length) : lastKey}\u0000`;
  return Buffer.from(JSON.stringify({ v: TOKEN_VERSION, rv: revision, start })).toString('base64url');
}

function invalid(why: string): BadRequestError {
  return new BadRequestError(`invalid continue token: continue key is not valid: ${why}`);
}

/** Reads a token from a request; 400 BadRequest for anything this server did not write. */
export function decodeContinue(token: string, prefix: string): Continuation {
  if (!/^[A-Za-z0-9_-]+={0,2}$/.test(token)) throw invalid('illegal base64 data');
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
  } catch {
    throw invalid('the decoded token is not JSON');
  }
  const c = parsed as { v?: unknown; rv?: unknown; start?: unknown } | null;
  if (typeof c !== 'object' || c === null || c.v !== TOKEN_VERSION) throw invalid('server does not recognize this encoded version');
  if (typeof c.rv !== 'number' || !Number.isSafeInteger(c.rv) || c.rv === 0 || c.rv < -1) {
    throw invalid(`incorrect encoded start resourceVersion (version ${TOKEN_VERSION})`);
  }
  if (typeof c.start !== 'string' || c.start === '') throw invalid('encoded start key empty');
  return { fromKey: prefix + c.start, revision: c.rv > 0 ? c.rv : undefined };
}
