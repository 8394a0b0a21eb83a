// Streams watch events as JSON lines, with BOOKMARKs on idle streams and Status errors in-band.
import type { IncomingMessage } from 'node:http';
import type { Context } from 'hono';
import { apiVersionOf, type KindDefinition } from '../../core/api/kind.js';
import { ApiError, toApiError } from '../../core/errors.js';
import { type ObjectWatchEvent, stampJson } from './object-service.js';

export interface WatchResponseOptions {
  events: (signal: AbortSignal) => AsyncIterable<ObjectWatchEvent>;
  def: KindDefinition;
  bookmarkIntervalMs: number;
  /** Ends the stream after this long (the client's timeoutSeconds). */
  timeoutMs?: number;
  /** The revision the client asked to resume from, used by BOOKMARKs until an event arrives. */
  initialRevision: number;
  /** Bytes the stream holds for a client that does not read (default 1 MiB); beyond them it waits. */
  maxBufferedBytes?: number;
  /** How long it waits for the client to read before it ends the watch (default 10 s): the client re-lists and watches again. */
  slowWatcherTimeoutMs?: number;
  /** How an object event is written (default: eventLine, the object as JSON); a Table watch writes one-row Tables. */
  encodeEvent?: (event: ObjectWatchEvent) => Uint8Array;
}

/** Counters of every watch stream of the process, for /metrics and tests: memory held for watchers is bounded and visible. */
export const watchStats = {
  /** Bytes queued in all open watch streams now. */
  bufferedBytes: 0,
  /** The most one stream has held at once. */
  maxBufferedBytes: 0,
  /** Watches ended because their client did not read. */
  slowWatchersClosed: 0,
  /** Object events written to watch streams (one per watcher per event). */
  eventsSent: 0,
  /** Object events serialised for watch streams: fewer than sent when watchers share an event's bytes. */
  eventsEncoded: 0,
};

export const DEFAULT_WATCH_BUFFER_BYTES = 1024 * 1024;
export const DEFAULT_SLOW_WATCHER_TIMEOUT_MS = 10_000;

/**
 * How long to wait for the first event before sending headers. A watch from a compacted
 * revision fails at once; waiting this long lets that failure be a plain HTTP 410 rather
 * than an ERROR event inside a 200 stream.
 */
const FIRST_EVENT_GRACE_MS = 100;

const encoder = new TextEncoder();

export function line(value: unknown): Uint8Array {
  return encoder.encode(`${JSON.stringify(value)}\n`);
}

/**
 * An object event as one JSON line. Watchers of an event from the watch cache share its bytes:
 * the first to send it encodes it (from the stored JSON, with its resourceVersion stamped in,
 * as lists are written) and the rest send the same bytes, so N watchers cost one encoding
 * and, while they queue it, one copy of memory.
 */
export function eventLine(event: ObjectWatchEvent): Uint8Array {
  const shared = event.shared;
  if (!shared) {
    watchStats.eventsEncoded++;
    return line({ type: event.type, object: event.object });
  }
  // One form per event type: a selector can turn a store's MODIFIED into ADDED or DELETED.
  const form = `json:${event.type}`;
  shared.encoded ??= new Map();
  let bytes = shared.encoded.get(form);
  if (!bytes) {
    watchStats.eventsEncoded++;
    bytes = encoder.encode(`{"type":"${event.type}","object":${stampJson(shared.json, event.revision)}}\n`);
    shared.encoded.set(form, bytes);
  }
  return bytes;
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

  /**
   * Ends a watcher that stopped reading by closing its connection. Closing only the stream would
   * leave the bytes queued for it (up to the bound) and the socket's own buffers held until the
   * client read them, which one that never reads never does: over many such clients the master's
   * memory was not given back. Destroying the socket drops all of it at once (the HTTP layer then
   * cancels the stream); the client sees its watch end and watches again.
   */
  const dropConnection = () => {
    const socket = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming?.socket;
    socket?.destroy();
  };

  const maxBuffered = options.maxBufferedBytes ?? DEFAULT_WATCH_BUFFER_BYTES;
  const slowTimeoutMs = options.slowWatcherTimeoutMs ?? DEFAULT_SLOW_WATCHER_TIMEOUT_MS;
  /** Bytes enqueued and not yet taken by the HTTP layer (which takes only as fast as the socket drains). */
  let queued = 0;
  /** Wakes the pump when the HTTP layer has taken what was queued. */
  let onPull: (() => void) | undefined;

  const stream = new ReadableStream<Uint8Array>(
    {
      start(controller) {
        let closed = false;
        const enqueue = (chunk: Uint8Array) => {
          // Counted first: enqueue may call pull at once, which recounts from the stream's own queue.
          queued += chunk.byteLength;
          watchStats.bufferedBytes += chunk.byteLength;
          controller.enqueue(chunk);
          if (queued > watchStats.maxBufferedBytes) watchStats.maxBufferedBytes = queued;
        };
        const close = () => {
          if (closed) return;
          closed = true;
          watchStats.bufferedBytes -= queued;
          queued = 0;
          onPull?.();
          cleanup();
          try {
            controller.close();
          } catch {
            /* already closed by a cancel */
          }
        };
        const send = (event: ObjectWatchEvent) => {
          lastRevision = Math.max(lastRevision, event.revision);
          watchStats.eventsSent++;
          enqueue((options.encodeEvent ?? eventLine)(event));
        };
        bookmarkTimer = setInterval(() => {
          // A client that is not reading has no use for a BOOKMARK either.
          if (closed || queued >= maxBuffered) return;
          enqueue(
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
              // Events wait in the shared watch cache, not here: a watcher that does not read gets
              // no more than maxBuffered bytes queued, and is ended if it does not read for a while
              // (as kube-apiserver ends unresponsive watchers).
              if (queued >= maxBuffered && !(await drained())) {
                watchStats.slowWatchersClosed++;
                dropConnection();
                break;
              }
              send(result.value);
              result = await iterator.next();
            }
          } catch (err) {
            if (!closed && !abort.signal.aborted) {
              const status = (err instanceof ApiError ? err : toApiError(err)).toStatus();
              enqueue(line({ type: 'ERROR', object: status }));
            }
          }
          close();
        };
        /** Resolves true once the queue is below the bound again, false after slowTimeoutMs or when the stream ends. */
        const drained = () =>
          new Promise<boolean>((resolve) => {
            const timer = setTimeout(() => {
              onPull = undefined;
              resolve(false);
            }, slowTimeoutMs);
            onPull = () => {
              if (queued >= maxBuffered && !closed) return;
              clearTimeout(timer);
              onPull = undefined;
              resolve(!closed);
            };
          });
        void pump();
      },
      pull(controller) {
        // The HTTP layer reads when the socket has drained: what it took has left our queue.
        const held = Math.max(0, controller.desiredSize === null ? 0 : maxBuffered - controller.desiredSize);
        watchStats.bufferedBytes -= queued - held;
        queued = held;
        onPull?.();
      },
      cancel() {
        watchStats.bufferedBytes -= queued;
        queued = 0;
        cleanup();
      },
    },
    new ByteLengthQueuingStrategy({ highWaterMark: maxBuffered }),
  );

  return new Response(stream, {
    status: 200,
    headers: { 'content-type': 'application/json', 'cache-control': 'no-cache', 'x-content-type-options': 'nosniff' },
  });
}
