// Streams watch events as JSON lines, with BOOKMARKs on idle streams and Status errors in-band.
import type { Context } from 'hono';
import { apiVersionOf, type KindDefinition } from '../../core/api/kind.js';
import { ApiError, toApiError } from '../../core/errors.js';
import type { ObjectWatchEvent } from './object-service.js';

export interface WatchResponseOptions {
  events: (signal: AbortSignal) => AsyncIterable<ObjectWatchEvent>;
  def: KindDefinition;
  bookmarkIntervalMs: number;
  /** Ends the stream after this long (the client's timeoutSeconds). */
  timeoutMs?: number;
  /** The revision the client asked to resume from, used by BOOKMARKs until an event arrives. */
  initialRevision: number;
}

/**
 * How long to wait for the first event before sending headers. A watch from a compacted
 * revision fails at once; waiting this long lets that failure be a plain HTTP 410 rather
 * than an ERROR event inside a 200 stream.
 */
const FIRST_EVENT_GRACE_MS = 100;

const encoder = new TextEncoder();

function line(value: unknown): Uint8Array {
  return encoder.encode(`${JSON.stringify(value)}\n`);
}

export async function watchResponse(c: Context, options: WatchResponseOptions): Promise<Response> {
  const abort = new AbortController();
  const onClientGone = () => abort.abort();
  c.req.raw.signal?.addEventListener('abort', onClientGone, { once: true });
  const iterator = options.events(abort.signal)[Symbol.asyncIterator]();

  // Start pulling; an immediate failure (410, bad selector) becomes the HTTP status.
  const firstPull = iterator.next();
  let timer: NodeJS.Timeout | undefined;
  const grace = new Promise<'pending'>((resolve) => {
    timer = setTimeout(() => resolve('pending'), FIRST_EVENT_GRACE_MS);
  });
  let first: IteratorResult<ObjectWatchEvent> | 'pending';
  try {
    first = await Promise.race([firstPull, grace]);
  } catch (err) {
    abort.abort();
    throw toApiError(err);
  } finally {
    clearTimeout(timer);
  }

  let lastRevision = options.initialRevision;
  let bookmarkTimer: NodeJS.Timeout | undefined;
  let timeoutTimer: NodeJS.Timeout | undefined;
  const cleanup = () => {
    clearInterval(bookmarkTimer);
    clearTimeout(timeoutTimer);
    c.req.raw.signal?.removeEventListener('abort', onClientGone);
    abort.abort();
    void iterator.return?.(undefined).catch(() => {});
  };

  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      let closed = false;
      const close = () => {
        if (closed) return;
        closed = true;
        cleanup();
        try {
          controller.close();
        } catch {
          /* already closed by a cancel */
        }
      };
      const send = (event: ObjectWatchEvent) => {
        lastRevision = Math.max(lastRevision, event.revision);
        controller.enqueue(line({ type: event.type, object: event.object }));
      };
      bookmarkTimer = setInterval(() => {
        if (closed) return;
        controller.enqueue(
          line({
            type: 'BOOKMARK',
            object: { kind: options.def.kind, apiVersion: apiVersionOf(options.def), metadata: { resourceVersion: String(lastRevision) } },
          }),
        );
      }, options.bookmarkIntervalMs);
      if (options.timeoutMs) timeoutTimer = setTimeout(close, options.timeoutMs);
      abort.signal.addEventListener('abort', close, { once: true });

      const pump = async () => {
        try {
          let result = first === 'pending' ? await firstPull : first;
          while (!result.done && !closed) {
            send(result.value);
            result = await iterator.next();
          }
        } catch (err) {
          if (!closed && !abort.signal.aborted) {
            const status = (err instanceof ApiError ? err : toApiError(err)).toStatus();
            controller.enqueue(line({ type: 'ERROR', object: status }));
          }
        }
        close();
      };
      void pump();
    },
    cancel() {
      cleanup();
    },
  });

  return new Response(stream, {
    status: 200,
    headers: { 'content-type': 'application/json', 'cache-control': 'no-cache', 'x-content-type-options': 'nosniff' },
  });
}
