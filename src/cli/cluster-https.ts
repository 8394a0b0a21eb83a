// One HTTP(S) request from the CLI to a cluster endpoint that is not the API (the activator, the registry), trusting the cluster CA from the CLI's config.
import http from 'node:http';
import https from 'node:https';
import type { CliContext } from './context.js';

/** What callers read of the answer. */
export interface HttpAnswer {
  status: number;
  header(name: string): string | null;
  text: string;
}

/**
 * One request over https trusting `ca` (the cluster CA) or plain http. node:http(s) rather than
 * fetch: Node 20's fetch takes no CA of its own.
 */
export function requestTrustingCa(
  url: string,
  o: { method: string; headers?: Record<string, string>; body?: string; ca?: string; signal?: AbortSignal },
): Promise<HttpAnswer> {
  const secure = new URL(url).protocol === 'https:';
  return new Promise((resolve, reject) => {
    const options: https.RequestOptions = { method: o.method, headers: o.headers ?? {}, signal: o.signal, agent: false };
    if (secure && o.ca) options.ca = o.ca;
    const req = (secure ? https : http).request(url, options, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (d: Buffer) => chunks.push(d));
      res.on('error', reject);
      res.on('end', () => {
        const header = (name: string) => {
          const v = res.headers[name.toLowerCase()];
          return v === undefined ? null : Array.isArray(v) ? v.join(', ') : v;
        };
        resolve({ status: res.statusCode ?? 0, header, text: Buffer.concat(chunks).toString('utf8') });
      });
    });
    req.on('error', reject);
    req.end(o.body);
  });
}

/** The CLI's cluster CA, when it has a config (a command aimed at an explicit plain-HTTP endpoint needs none). */
export function clusterCa(ctx: CliContext): string | undefined {
  try {
    return ctx.client().trustedCa;
  } catch {
    return undefined;
  }
}
