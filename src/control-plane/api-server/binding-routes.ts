// POST /api/v1/namespaces/NS/pods/NAME/binding (and the older POST .../bindings): assigns a pod to a node, answering a Success Status.
import type { Context, Hono } from 'hono';
import { parseBinding } from '../../core/api/binding.js';
import { BadRequestError, MethodNotAllowedError } from '../../core/errors.js';
import type { UserInfo } from './auth.js';
import { parseJsonObject, readRequestText, requestContentType } from './body.js';
import type { ObjectService } from './object-service.js';
import { bindPod } from './pod-binding.js';

export const BINDING_SUBRESOURCE_PATH = '/api/v1/namespaces/:namespace/pods/:name/binding';
export const BINDINGS_PATH = '/api/v1/namespaces/:namespace/bindings';

export interface BindingRoutesOptions {
  service: ObjectService;
  now?: () => Date;
}

/** What Kubernetes answers a successful binding with. */
export const BINDING_SUCCESS = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 } as const;

function json(c: Context, body: unknown, status = 200): Response {
  return c.body(JSON.stringify(body), status as 200, { 'content-type': 'application/json' });
}

async function bind(c: Context, options: BindingRoutesOptions, namespace: string, pathName: string | undefined): Promise<Response> {
  const body = parseJsonObject(await readRequestText(c), requestContentType(c));
  if (body.apiVersion !== undefined && body.apiVersion !== 'v1') {
    throw new BadRequestError(`the API version in the data (${String(body.apiVersion).slice(0, 64)}) does not match the expected API version (v1)`);
  }
  if (body.kind !== undefined && body.kind !== 'Binding') {
    throw new BadRequestError(`the kind in the data (${String(body.kind).slice(0, 64)}) does not match the expected kind (Binding)`);
  }
  const bodyName = (body.metadata as { name?: unknown } | undefined)?.name;
  const name = pathName ?? (typeof bodyName === 'string' ? bodyName : '');
  const binding = parseBinding(body, name);
  if (pathName !== undefined && binding.metadata.name !== undefined && binding.metadata.name !== '' && binding.metadata.name !== pathName) {
    throw new BadRequestError(`the name of the binding (${binding.metadata.name}) does not match the name on the URL (${pathName})`);
  }
  if (binding.metadata.namespace !== undefined && binding.metadata.namespace !== '' && binding.metadata.namespace !== namespace) {
    throw new BadRequestError('the namespace of the provided object does not match the namespace sent on the request');
  }
  if (!name) throw new BadRequestError('the binding must name the pod in metadata.name');
  await bindPod(options.service.store, { namespace, name, nodeName: binding.target.name, uid: binding.metadata.uid || undefined }, options.now);
  return json(c, BINDING_SUCCESS, 201);
}

/** Registered after authentication and authorization (only admins may bind: nodes are refused there), ahead of the generic resource routes. */
export function registerBindingRoutes<E extends { Variables: { user: UserInfo } }>(app: Hono<E>, options: BindingRoutesOptions): void {
  const notAllowed = () => {
    throw new MethodNotAllowedError('the server does not allow this method on the requested resource');
  };
  app.post(BINDING_SUBRESOURCE_PATH, (c) => bind(c, options, c.req.param('namespace'), c.req.param('name')));
  app.all(BINDING_SUBRESOURCE_PATH, notAllowed);
  app.post(BINDINGS_PATH, (c) => bind(c, options, c.req.param('namespace'), undefined));
  app.all(BINDINGS_PATH, notAllowed);
}
