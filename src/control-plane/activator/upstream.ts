// Sends one request to a function pod over a kept-alive connection of that pod's own pool, and reads the whole answer.
import http from 'node:http';

export interface UpstreamResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

export type UpstreamFailure = 'refused' | 'reset' | 'timeout' | 'too-large' | 'aborted' | 'other';

export class UpstreamError extends Error {
  readonly failure: UpstreamFailure;
  /** Nothing reached the pod's handler (refused, or a kept-alive connection closed under us): safe to send elsewhere. */
  readonly retryable: boolean;

  constructor(failure: UpstreamFailure, message: string, retryable: boolean, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = 'UpstreamError';
    this.failure = failure;
    this.retryable = retryable;
  }
}

/** Answers larger than this are cut off with a 502: invocation results are meant to be small. */
export const MAX_RESPONSE_BYTES = 32 * 1024 * 1024;

/**
 * One keep-alive Agent per pod. The hot path is plain node:http rather than fetch: undici's
 * fetch builds WHATWG streams and headers objects per request, which costs more than the
 * whole 2 ms budget for the activator's overhead on small calls on these machines; a pooled
 * node:http request reuses a warm socket and the buffers as they are.
 */
export class UpstreamPool {
  readonly #agents = new Map<string, http.Agent>();

  agent(podKey: string): http.Agent {
    let agent = this.#agents.get(podKey);
    if (!agent) {
      // No socket cap: the function's concurrency is the autoscaler's business, not the pool's.
      agent = new http.Agent({ keepAlive: true, keepAliveMsecs: 1000, maxFreeSockets: 256, scheduling: 'lifo' });
      this.#agents.set(podKey, agent);
    }
    return agent;
  }

  /** Closes a pod's idle connections once it is gone. */
  drop(podKey: string): void {
    this.#agents.get(podKey)?.destroy();
    this.#agents.delete(podKey);
  }

  close(): void {
    for (const agent of this.#agents.values()) agent.destroy();
    this.#agents.clear();
  }
}

export interface ForwardOptions {
  agent: http.Agent;
  ip: string;
  port: number;
  method: string;
  /** Path and query as the pod sees them. */
  path: string;
  headers: http.OutgoingHttpHeaders;
  body: Buffer;
  timeoutMs: number;
  signal?: AbortSignal;
}

/** Sends the request and collects the answer; rejects with an UpstreamError. */
export function forward(o: ForwardOptions): Promise<UpstreamResponse> {
  return new Promise<UpstreamResponse>((resolve, reject) => {
    let settled = false;
    const fail = (err: UpstreamError) => {
      if (settled) return;
      settled = true;
      cleanup();
      req.destroy();
      reject(err);
    };
    const onAbort = () => fail(new UpstreamError('aborted', 'the caller went away', false));
    const timer = setTimeout(() => fail(new UpstreamError('timeout', `no answer within ${o.timeoutMs / 1000} s`, false)), o.timeoutMs);
    const cleanup = () => {
      clearTimeout(timer);
      o.signal?.removeEventListener('abort', onAbort);
    };
    const req = http.request(
      {
        agent: o.agent,
        host: o.ip,
        port: o.port,
        method: o.method,
        path: o.path,
        headers: { ...o.headers, 'content-length': String(o.body.length) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > MAX_RESPONSE_BYTES) fail(new UpstreamError('too-large', `the function answered more than ${MAX_RESPONSE_BYTES} bytes`, false));
          else chunks.push(chunk);
        });
        res.on('end', () => {
          if (settled) return;
          settled = true;
          cleanup();
          resolve({ status: res.statusCode ?? 502, headers: res.headers, body: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks) });
        });
        res.on('error', (err) => fail(new UpstreamError('reset', `the answer broke off: ${err.message}`, false, err)));
      },
    );
    req.on('error', (err: NodeJS.ErrnoException) => {
      const code = err.code ?? '';
      if (code === 'ECONNREFUSED') fail(new UpstreamError('refused', `connection refused by ${o.ip}:${o.port}`, true, err));
      // A kept-alive socket the pod closed as we reused it: the request never reached the handler.
      else if (req.reusedSocket && (code === 'ECONNRESET' || code === 'EPIPE'))
        fail(new UpstreamError('reset', `connection to ${o.ip}:${o.port} closed`, true, err));
      else if (code === 'EHOSTUNREACH' || code === 'ENETUNREACH') fail(new UpstreamError('refused', `${o.ip} is unreachable (${code})`, true, err));
      else fail(new UpstreamError(code === 'ECONNRESET' ? 'reset' : 'other', `${o.ip}:${o.port}: ${err.message}`, false, err));
    });
    if (o.signal?.aborted) return onAbort();
    o.signal?.addEventListener('abort', onAbort, { once: true });
    req.end(o.body);
  });
}
