// API routes of the activator's data: a function's invocation records, and where the activator is (for the CLI's `invoke`).
import type { Context, Hono } from 'hono';
import { kindByResource } from '../../core/api/registry.js';
import { BadRequestError, NotFoundError } from '../../core/errors.js';
import type { UserInfo } from '../api-server/auth.js';
import type { ObjectService } from '../api-server/object-service.js';
import { ACTIVATOR_INFO_PATH, INVOCATIONS_PATH } from '../../core/api/activator-paths.js';
import type { InvocationLog } from './invocation-records.js';

export interface InvocationRoutesOptions {
  service: ObjectService;
  records: InvocationLog;
  /** `https://HOST:PORT` (http under --insecure-http) as clients reach the activator; undefined until known. */
  activatorUrl(): string | undefined;
}

function json(c: Context, body: unknown): Response {
  return c.body(JSON.stringify(body), 200, { 'content-type': 'application/json' });
}

/** The Function must exist: records of a deleted one are not served (they are being removed). */
async function requireFunction(service: ObjectService, namespace: string, name: string): Promise<void> {
  const def = kindByResource('minik8s.io', 'v1', 'functions');
  if (!def) throw new NotFoundError(`functions.minik8s.io "${name}" not found`, { group: 'minik8s.io', kind: 'functions', name });
  await service.get(def, namespace, name);
}

/** Registered after authentication and authorization, ahead of the generic resource routes. */
export function registerInvocationRoutes<E extends { Variables: { user: UserInfo } }>(app: Hono<E>, options: InvocationRoutesOptions): void {
  app.get(INVOCATIONS_PATH, async (c) => {
    const namespace = c.req.param('namespace')!;
    const name = c.req.param('name')!;
    const limitText = c.req.query('limit');
    let limit: number | undefined;
    if (limitText !== undefined && limitText !== '') {
      if (!/^\d+$/.test(limitText)) throw new BadRequestError(`limit must be a whole number, not "${limitText}"`);
      limit = Number(limitText);
    }
    await requireFunction(options.service, namespace, name);
    return json(c, { apiVersion: 'minik8s.io/v1', kind: 'FunctionInvocationList', metadata: {}, items: options.records.list(namespace, name, limit) });
  });
  app.get(`${INVOCATIONS_PATH}/:id`, async (c) => {
    const namespace = c.req.param('namespace')!;
    const name = c.req.param('name')!;
    const id = c.req.param('id')!;
    await requireFunction(options.service, namespace, name);
    const record = options.records.get(namespace, name, id);
    if (!record) throw new NotFoundError(`invocation "${id}" of function ${name} not found (only the last ones are kept)`, { name: id });
    return json(c, { apiVersion: 'minik8s.io/v1', kind: 'FunctionInvocation', ...record });
  });
  app.get(ACTIVATOR_INFO_PATH, (c) => {
    const url = options.activatorUrl();
    if (!url) throw new NotFoundError('this master runs no activator');
    return json(c, { apiVersion: 'minik8s.io/v1', kind: 'ActivatorInfo', url });
  });
}
