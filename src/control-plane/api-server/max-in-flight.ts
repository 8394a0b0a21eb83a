// Caps the requests the API server works on at once, mutating and not, as kube-apiserver's max-in-flight filter: the excess is answered 429 at once.
import type { Context, MiddlewareHandler } from 'hono';
import { ApiError, type ApiErrorOptions } from '../../core/errors.js';
import { requestAttributes } from './authorization.js';

/** kube-apiserver's defaults (--max-requests-inflight, --max-mutating-requests-inflight). */
export const DEFAULT_MAX_REQUESTS_IN_FLIGHT = 400;
export const DEFAULT_MAX_MUTATING_REQUESTS_IN_FLIGHT = 200;

/** 429 TooManyRequests, as kube-apiserver words it when a max-in-flight limit is reached. */
export class TooManyRequestsError extends ApiError {
  constructor(message = 'Too many requests, please try again later.', options: ApiErrorOptions = { retryAfterSeconds: 1 }) {
    super(429, 'TooManyRequests', message, options);
  }
}

export interface MaxInFlightOptions {
  /** Non-mutating requests (get, list) at once; 0 for no limit. */
  maxRequestsInFlight: number;
  /** Mutating requests (create, update, patch, delete) at once; 0 for no limit. */
  maxMutatingRequestsInFlight: number;
}

export interface InFlightCounts {
  readOnly: number;
  mutating: number;
  /** Requests answered 429 since the start. */
  rejected: number;
}

const MUTATING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** Subresources whose requests last as long as the client wants (kube-apiserver's long-running set). */
const LONG_RUNNING_SUBRESOURCES = new Set(['log', 'exec', 'attach', 'portforward', 'proxy']);

/**
 * Requests that may run for minutes or hours and so hold no place: watches, followed logs, exec.
 * Counting them would let 400 informers lock everyone else out.
 */
export function isLongRunning(c: Context): boolean {
  const method = c.req.method;
  const attrs = requestAttributes(method, c.req.path, method === 'GET' ? { watch: c.req.query('watch') } : {});
  if (attrs.verb === 'watch') return true;
  const sub = attrs.resource?.subresource;
  return sub !== undefined && LONG_RUNNING_SUBRESOURCES.has(sub);
}

/**
 * The middleware, with its live counts for metrics and tests. A request holds its place until
 * its handler has produced the response; lists and gets are answered whole, so that is until
 * the body has been built.
 */
export function maxInFlightMiddleware(options: MaxInFlightOptions): MiddlewareHandler & { counts: InFlightCounts } {
  const counts: InFlightCounts = { readOnly: 0, mutating: 0, rejected: 0 };
  const middleware = async (c: Context, next: () => Promise<void>) => {
    if (isLongRunning(c)) return next();
    const mutating = MUTATING.has(c.req.method);
    const limit = mutating ? options.maxMutatingRequestsInFlight : options.maxRequestsInFlight;
    const slot = mutating ? 'mutating' : 'readOnly';
    if (limit > 0 && counts[slot] >= limit) {
      counts.rejected++;
      // Answered here rather than thrown, so that the header travels with the Status.
      const err = new TooManyRequestsError();
      return c.body(JSON.stringify(err.toStatus()), 429, { 'content-type': 'application/json', 'retry-after': '1' });
    }
    counts[slot]++;
    try {
      await next();
    } finally {
      counts[slot]--;
    }
  };
  return Object.assign(middleware, { counts });
}
