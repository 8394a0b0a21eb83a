// HTTP verbs on resource paths: maps requests to ObjectService calls and results to Kubernetes bodies.
import type { Context } from 'hono';
import type { KubeObject } from '../../core/api/meta.js';
import { parseQueryBool } from '../../core/api/query-bool.js';
import { toTable } from '../../core/api/table.js';
import { BadRequestError, MethodNotAllowedError, toApiError } from '../../core/errors.js';
import { parseJsonObject, readRequestText, requestContentType } from './body.js';
import { parseFieldValidation } from '../../core/api/validate.js';
import { parseResourceVersion, type DeleteOptions, type FieldValidationOptions, type ObjectService, type ObjectWatchEvent } from './object-service.js';
import { parsePatchBody, patchTypeOf } from './patch.js';
import { applyObject, fieldManagerOf } from './server-side-apply.js';
import { acceptedTable, parseIncludeObject } from './table-negotiation.js';
import { parseResourcePath, type ResourceTarget } from './paths.js';
import { line, watchResponse, watchStats } from './watch-stream.js';

export interface ResourceRoutesOptions {
  service: ObjectService;
  /** How often an idle watch gets a BOOKMARK event. */
  bookmarkIntervalMs: number;
  /** Per-watch buffer bound and how long a non-reading watcher is waited for (watch-stream.ts' defaults when absent). */
  watchBufferBytes?: number;
  slowWatcherTimeoutMs?: number;
}

function json(c: Context, body: unknown, status = 200): Response {
  return c.body(JSON.stringify(body), status as 200, { 'content-type': 'application/json' });
}

function readText(c: Context): Promise<string> {
  return readRequestText(c);
}

async function readObject(c: Context): Promise<Record<string, unknown>> {
  const text = await readText(c);
  return parseJsonObject(text, requestContentType(c));
}

/** DeleteOptions.gracePeriodSeconds: a whole number of seconds, 0 meaning at once. */
function gracePeriod(value: unknown): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw new BadRequestError(`gracePeriodSeconds must be a non-negative integer, not ${JSON.stringify(value)}`);
  }
  return value;
}

/**
 * dryRun as Kubernetes reads it, from the query (`dryRun=All`, repeatable) or a DeleteOptions
 * body (`"dryRun": ["All"]`): All is the one value; an unknown one is a 400 rather than a write.
 */
export function parseDryRun(values: readonly unknown[]): boolean {
  for (const value of values) {
    if (value !== 'All') throw new BadRequestError(`dryRun: Unsupported value: ${JSON.stringify(value)}: supported values: "All"`);
  }
  return values.length > 0;
}

/** The field manager of a write: `fieldManager`, else the user agent's name (required for an apply). */
function queryFieldManager(c: Context, apply = false): string {
  return fieldManagerOf({ query: c.req.query('fieldManager'), userAgent: c.req.header('user-agent'), apply });
}

/** fieldValidation from the query, its warnings sent as Warning headers (code 299, each once, as kube-apiserver sends them: kubectl prints them). */
function queryFieldValidation(c: Context): FieldValidationOptions {
  const sent = new Set<string>();
  return {
    fieldValidation: parseFieldValidation(c.req.query('fieldValidation')),
    onWarning: (message) => {
      if (sent.has(message)) return;
      sent.add(message);
      c.header('Warning', `299 - ${JSON.stringify(message)}`, { append: true });
    },
  };
}

function queryDryRun(c: Context): boolean {
  return parseDryRun((c.req.queries('dryRun') ?? []).filter((v) => v !== ''));
}

async function readDeleteOptions(c: Context): Promise<DeleteOptions> {
  const options: DeleteOptions = {};
  const text = await readText(c);
  if (text.trim() !== '') {
    const body = parseJsonObject(text, requestContentType(c));
    if (body.preconditions !== undefined && body.preconditions !== null) {
      // A precondition the server cannot read must refuse the delete, never let it through unguarded.
      const p = body.preconditions as Record<string, unknown>;
      if (typeof p !== 'object' || Array.isArray(p)) throw new BadRequestError(`preconditions must be an object, not ${JSON.stringify(p)}`);
      for (const field of ['uid', 'resourceVersion'] as const) {
        if (p[field] !== undefined && p[field] !== null && typeof p[field] !== 'string') {
          throw new BadRequestError(`preconditions.${field} must be a string, not ${JSON.stringify(p[field])}`);
        }
      }
      options.preconditions = {
        uid: typeof p.uid === 'string' ? p.uid : undefined,
        resourceVersion: typeof p.resourceVersion === 'string' ? p.resourceVersion : undefined,
      };
    }
    if (body.propagationPolicy !== undefined && body.propagationPolicy !== null) {
      options.propagationPolicy = body.propagationPolicy as DeleteOptions['propagationPolicy'];
    }
    if (body.orphanDependents !== undefined && body.orphanDependents !== null) {
      if (typeof body.orphanDependents !== 'boolean') throw new BadRequestError('orphanDependents must be a boolean');
      options.orphanDependents = body.orphanDependents;
    }
    if (body.gracePeriodSeconds !== undefined && body.gracePeriodSeconds !== null) options.gracePeriodSeconds = gracePeriod(body.gracePeriodSeconds);
    if (body.dryRun !== undefined && body.dryRun !== null) {
      if (!Array.isArray(body.dryRun)) throw new BadRequestError('dryRun must be a list of strings such as ["All"]');
      options.dryRun = parseDryRun(body.dryRun);
    }
  }
  if (queryDryRun(c)) options.dryRun = true;
  const grace = c.req.query('gracePeriodSeconds');
  if (grace !== undefined && grace !== '') options.gracePeriodSeconds = gracePeriod(/^-?\d+$/.test(grace) ? Number(grace) : grace);
  const policy = c.req.query('propagationPolicy') ?? options.propagationPolicy;
  if (policy !== undefined) {
    if (policy !== 'Background' && policy !== 'Foreground' && policy !== 'Orphan') {
      throw new BadRequestError(`propagationPolicy must be one of Background, Foreground, Orphan; got "${String(policy)}"`);
    }
    options.propagationPolicy = policy;
  }
  const orphan = c.req.query('orphanDependents');
  const orphanFlag = parseQueryBool(orphan, 'orphanDependents');
  if (orphanFlag !== undefined) options.orphanDependents = orphanFlag;
  if (options.orphanDependents !== undefined && options.propagationPolicy !== undefined) {
    throw new BadRequestError('orphanDependents and propagationPolicy may not both be set');
  }
  return options;
}

/** A list's `limit`: a non-negative integer, 0 or absent meaning no limit (as Kubernetes reads it). */
export function parseLimit(value: string | undefined): number | undefined {
  if (value === undefined || value === '') return undefined;
  if (!/^[0-9]+$/.test(value) || !Number.isSafeInteger(Number(value))) {
    throw new BadRequestError(`limit: Invalid value: ${JSON.stringify(value)}: must be a non-negative integer`);
  }
  const limit = Number(value);
  return limit === 0 ? undefined : limit;
}

/** Handles one request on a resource path; the caller has authenticated it. */
export async function handleResource(c: Context, options: ResourceRoutesOptions): Promise<Response> {
  const target = parseResourcePath(c.req.path);
  if (!target) throw new BadRequestError('not a resource path');
  const { service } = options;
  const { def, namespace, name, subresource } = target;
  const method = c.req.method;
  const notAllowed = () => new MethodNotAllowedError(`the server does not allow this method on the requested resource`);

  if (name === undefined) {
    // Collection: list, watch, create.
    if (method === 'GET') {
      const query = { labelSelector: c.req.query('labelSelector'), fieldSelector: c.req.query('fieldSelector') };
      const page = { limit: parseLimit(c.req.query('limit')), continue: c.req.query('continue') || undefined, resourceVersion: c.req.query('resourceVersion') };
      const revision = parseResourceVersion(c.req.query('resourceVersion'));
      // A revision this store has not reached: wait briefly, then 504 rather than a watch that waits for ever.
      if (revision !== undefined && revision > 0) await service.waitForRevision(revision);
      const table = acceptedTable(c.req.header('accept'));
      const includeObject = parseIncludeObject(c.req.query('includeObject'));
      if (parseQueryBool(c.req.query('watch'), 'watch')) {
        const timeout = Number(c.req.query('timeoutSeconds') ?? '');
        // kubectl get -w: each event carries a one-row Table of its object (ERROR and BOOKMARK events stay as they are).
        const encodeEvent = table
          ? (event: ObjectWatchEvent) => {
              watchStats.eventsEncoded++;
              return line({ type: event.type, object: toTable(def, [event.object], { now: new Date(), apiVersion: table, includeObject }) });
            }
          : undefined;
        return watchResponse(c, {
          events: (signal) => service.watch(def, namespace, { ...query, resourceVersion: c.req.query('resourceVersion'), signal }),
          def,
          bookmarkIntervalMs: options.bookmarkIntervalMs,
          maxBufferedBytes: options.watchBufferBytes,
          slowWatcherTimeoutMs: options.slowWatcherTimeoutMs,
          timeoutMs: Number.isFinite(timeout) && timeout > 0 ? timeout * 1000 : undefined,
          initialRevision: revision ?? 0,
          encodeEvent,
        });
      }
      if (table) {
        const list = await service.list(def, namespace, { ...query, ...page });
        const listMeta = {
          resourceVersion: list.resourceVersion,
          ...(list.continue ? { continue: list.continue } : {}),
          ...(list.remainingItemCount !== undefined ? { remainingItemCount: list.remainingItemCount } : {}),
        };
        return json(c, toTable(def, list.items, { now: new Date(), apiVersion: table, includeObject, listMeta }));
      }
      return c.body(await service.listJson(def, namespace, { ...query, ...page }), 200, { 'content-type': 'application/json' });
    }
    if (method === 'POST') {
      if (def.namespaced && namespace === undefined) throw notAllowed();
      const created = await service.create(def, namespace, await readObject(c), {
        dryRun: queryDryRun(c),
        fieldManager: queryFieldManager(c),
        ...queryFieldValidation(c),
      });
      return json(c, created, 201);
    }
    throw notAllowed();
  }

  if (def.namespaced && namespace === undefined) throw new BadRequestError(`${def.resource} are namespaced: the path must name a namespace`);
  switch (method) {
    case 'GET': {
      const obj = await service.get(def, namespace, name);
      const table = acceptedTable(c.req.header('accept'));
      if (!table || subresource) return json(c, obj);
      return json(c, toTable(def, [obj], { now: new Date(), apiVersion: table, includeObject: parseIncludeObject(c.req.query('includeObject')) }));
    }
    case 'PUT':
      return json(
        c,
        await service.replace(def, namespace, name, await readObject(c), {
          subresource,
          dryRun: queryDryRun(c),
          fieldManager: queryFieldManager(c),
          ...queryFieldValidation(c),
        }),
      );
    case 'PATCH': {
      const patchType = patchTypeOf(c.req.header('content-type'));
      const fieldManager = queryFieldManager(c, patchType === 'apply');
      const patch = parsePatchBody(await readRequestText(c), patchType) as Record<string, unknown> | unknown[];
      if (patchType === 'apply') {
        const force = parseQueryBool(c.req.query('force'), 'force') === true;
        const applied = await applyObject(service, def, namespace, name, patch as Record<string, unknown>, {
          fieldManager,
          force,
          subresource,
          dryRun: queryDryRun(c),
        });
        return json(c, applied.object, applied.created ? 201 : 200);
      }
      if (parseQueryBool(c.req.query('force'), 'force') !== undefined) throw new BadRequestError('force: Forbidden: may not be specified for non-apply patch');
      return json(
        c,
        await service.patch(def, namespace, name, patch, { subresource, patchType, dryRun: queryDryRun(c), fieldManager, ...queryFieldValidation(c) }),
      );
    }
    case 'DELETE': {
      if (subresource) throw notAllowed();
      const deleted: KubeObject = await service.delete(def, namespace, name, await readDeleteOptions(c));
      return json(c, deleted);
    }
    default:
      throw notAllowed();
  }
}

/** Renders any thrown error as a Kubernetes Status body with its HTTP code. */
export function statusResponse(c: Context, err: unknown): Response {
  const apiError = toApiError(err);
  // Clients (client-go, ours) wait as long as Retry-After says before trying again: a 503 or 429 says when.
  const retryAfter = apiError.details.retryAfterSeconds;
  if (retryAfter !== undefined) c.header('retry-after', String(retryAfter));
  return json(c, apiError.toStatus(), apiError.code);
}

export type { ResourceTarget };
