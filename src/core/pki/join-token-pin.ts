// Pinned join tokens (k3s' form): K10<sha256 of the CA's DER, hex>::<id>.<secret>, so a worker can check the master before sending the secret.
import { request } from 'node:https';
import { caHash } from './pki.js';

const PINNED = /^K10([0-9a-f]{64})::(.+)$/;

export interface JoinTokenParts {
  /** The CA hash the token pins; undefined for a bare `id.secret`. */
  caHash?: string;
  /** `id.secret`: what the master authenticates. */
  token: string;
}

export function pinnedJoinToken(hash: string, token: string): string {
  return `K10${hash}::${token}`;
}

export function parsePinnedJoinToken(text: string): JoinTokenParts {
  const m = PINNED.exec(text.trim());
  return m ? { caHash: m[1]!, token: m[2]! } : { token: text.trim() };
}

/** Thrown when the server's CA is not the one the token pins: nothing secret was sent. */
export class CaPinMismatchError extends Error {
  constructor(
    readonly expected: string,
    readonly actual: string,
    server: string,
  ) {
    super(
      `the master at ${server} serves a CA whose hash (${actual}) is not the one the join token pins (${expected}); ` +
        'the join token was not sent: check --server, or take the token the master printed (DATA_DIR/join-token)',
    );
    this.name = 'CaPinMismatchError';
  }
}

/**
 * Fetches the master's CA from its public GET /cacerts without sending any credential (the
 * server's certificate cannot be checked yet: that is what the pin is for), and returns it when
 * its hash matches `expectedHash`; otherwise throws CaPinMismatchError.
 */
export async function fetchPinnedCa(server: string, expectedHash: string, timeoutMs = 15_000): Promise<string> {
  const url = new URL('/cacerts', server);
  if (url.protocol !== 'https:') throw new Error(`a pinned join token needs an https server, not ${server}`);
  const pem = await new Promise<string>((resolve, reject) => {
    const req = request(url, { method: 'GET', rejectUnauthorized: false, timeout: timeoutMs, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => {
        body += d;
        if (body.length > 64 * 1024) req.destroy(new Error('the CA bundle is too large'));
      });
      res.on('end', () => (res.statusCode === 200 ? resolve(body) : reject(new Error(`GET /cacerts answered HTTP ${res.statusCode}`))));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`GET ${url.href} timed out`)));
    req.on('error', reject);
    req.end();
  });
  let actual: string;
  try {
    actual = caHash(pem);
  } catch {
    throw new CaPinMismatchError(expectedHash, 'no certificate', server);
  }
  if (actual !== expectedHash) throw new CaPinMismatchError(expectedHash, actual, server);
  return pem;
}
