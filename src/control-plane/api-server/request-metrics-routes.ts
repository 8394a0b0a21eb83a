// Counts each authenticated HTTP request on a resource path by its user, and serves the counters at GET /metrics (cluster admins only).
import type { Context, MiddlewareHandler } from 'hono';
import { ForbiddenError } from '../../core/errors.js';
import type { UserInfo } from './auth.js';
import { MASTERS_GROUP, requestAttributes } from './authorization.js';
import { renderRequestMetrics, type RequestCounter } from './request-metrics.js';
import { watchStats } from './watch-stream.js';

export const METRICS_PATH = '/metrics';

/**
 * Runs after authentication (unauthenticated requests are not counted: they have no client) and
 * before authorization, so refused requests count too, as in Kubernetes, with the code they were
 * answered with (a watch's is its stream's: counted when it opens). Only resource requests are
 * counted; discovery, /version and /metrics itself are not.
 */
export function requestCountingMiddleware(counter: RequestCounter): MiddlewareHandler {
  return async (c: Context, next) => {
    await next();
    const user = c.get('user') as UserInfo | undefined;
    if (!user) return;
    const method = c.req.method;
    // The query is parsed only where it decides the verb (list or watch).
    const attrs = requestAttributes(method, c.req.path, method === 'GET' ? { watch: c.req.query('watch') } : {});
    const r = attrs.resource;
    // Errors thrown further in have been rendered by the app's onError by now, so the status is the one sent.
    if (r)
      counter.add({ verb: attrs.verb, group: r.group, resource: r.resource, subresource: r.subresource ?? '', client: user.name, code: String(c.res.status) });
  };
}

/**
 * The process's memory under the names Prometheus' Node.js clients use: the resident size beside
 * the JavaScript heap in use tells a leak (the heap grows) from memory the allocator has not given
 * back to the system yet (only the resident size stays up).
 */
function processMetrics(): string[] {
  const m = process.memoryUsage();
  return [
    '# HELP process_resident_memory_bytes Resident memory size in bytes.',
    '# TYPE process_resident_memory_bytes gauge',
    `process_resident_memory_bytes ${m.rss}`,
    '# HELP nodejs_heap_size_used_bytes JavaScript heap in use, in bytes.',
    '# TYPE nodejs_heap_size_used_bytes gauge',
    `nodejs_heap_size_used_bytes ${m.heapUsed}`,
    '# HELP nodejs_heap_size_total_bytes JavaScript heap reserved, in bytes.',
    '# TYPE nodejs_heap_size_total_bytes gauge',
    `nodejs_heap_size_total_bytes ${m.heapTotal}`,
    '# HELP nodejs_external_memory_bytes Memory of buffers and other objects outside the JavaScript heap, in bytes.',
    '# TYPE nodejs_external_memory_bytes gauge',
    `nodejs_external_memory_bytes ${m.external}`,
  ];
}

/** GET /metrics: Prometheus text. Nodes may read every other non-resource path, so admin rights are checked here. */
export function metricsResponse(c: Context, counter: RequestCounter): Response {
  const user = c.get('user') as UserInfo | undefined;
  if (!user?.groups.includes(MASTERS_GROUP)) {
    throw new ForbiddenError(
      `forbidden: User "${user?.name ?? 'system:anonymous'}" cannot get path "${METRICS_PATH}": only cluster admins may read the API server's metrics`,
    );
  }
  const watches = [
    '# HELP apiserver_watch_buffered_bytes Bytes queued in open watch streams for clients that have not read them yet.',
    '# TYPE apiserver_watch_buffered_bytes gauge',
    `apiserver_watch_buffered_bytes ${watchStats.bufferedBytes}`,
    '# HELP apiserver_watch_buffered_bytes_max The most bytes one watch stream has held at once.',
    '# TYPE apiserver_watch_buffered_bytes_max gauge',
    `apiserver_watch_buffered_bytes_max ${watchStats.maxBufferedBytes}`,
    '# HELP apiserver_terminated_watchers_total Watches ended because their client did not read.',
    '# TYPE apiserver_terminated_watchers_total counter',
    `apiserver_terminated_watchers_total ${watchStats.slowWatchersClosed}`,
    '# HELP apiserver_watch_events_sent_total Object events written to watch streams, one per watcher per event.',
    '# TYPE apiserver_watch_events_sent_total counter',
    `apiserver_watch_events_sent_total ${watchStats.eventsSent}`,
    '# HELP apiserver_watch_events_encoded_total Object events serialised for watch streams; watchers of one event share its bytes.',
    '# TYPE apiserver_watch_events_encoded_total counter',
    `apiserver_watch_events_encoded_total ${watchStats.eventsEncoded}`,
    ...processMetrics(),
    '',
  ].join('\n');
  return c.body(renderRequestMetrics(counter.snapshot()) + watches, 200, { 'content-type': 'text/plain; version=0.0.4; charset=utf-8' });
}
