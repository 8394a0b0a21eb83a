// GET/PUT/PATCH .../NAME/scale for every kind declaring the scale subresource: reads and sets spec.replicas as an autoscaling/v1 Scale.
import type { Context, Hono, Next } from 'hono';
import type { KindDefinition } from '../../core/api/kind.js';
import { kindByResource } from '../../core/api/registry.js';
import { scaleOf as builtInScaleOf, scaleReplicasProblem, type Scale } from '../../core/api/scale.js';
import { customScaleOf, customScalePatch, isCustomKind } from '../../core/api/crd-kinds.js';
import type { KubeObject } from '../../core/api/meta.js';
import { BadRequestError, ConflictError, InvalidError, MethodNotAllowedError } from '../../core/errors.js';
import type { UserInfo } from './auth.js';
import { parseJsonObject, readRequestText, requestContentType } from './body.js';
import { applyMergePatch } from './merge-patch.js';
import type { ObjectService } from './object-service.js';

export const SCALE_PATH = '/apis/:group/:version/namespaces/:namespace/:resource/:name/scale';

export interface ScaleRoutesOptions {
  service: ObjectService;
}

function scalableKind(c: Context): KindDefinition | undefined {
  const def = kindByResource(c.req.param('group')!, c.req.param('version')!, c.req.param('resource')!);
  return def?.subresources?.some((s) => s.name === 'scale') ? def : undefined;
}

/** The Scale of an object: a custom kind's by its CRD's paths, a built-in kind's by spec.replicas. */
const scaleOf = (def: KindDefinition, obj: KubeObject): Scale => (isCustomKind(def) && def.scale ? customScaleOf(def, obj) : builtInScaleOf(obj));

function json(c: Context, body: unknown): Response {
  return c.body(JSON.stringify(body), 200, { 'content-type': 'application/json' });
}

/** How often a PATCH without a resourceVersion is tried again after losing to another write. */
const PATCH_RETRIES = 8;

/** Writes spec.replicas, guarded by the resourceVersion the client read (if it sent one). */
async function setReplicas(
  options: ScaleRoutesOptions,
  def: KindDefinition,
  namespace: string,
  name: string,
  replicas: unknown,
  resourceVersion: unknown,
): Promise<unknown> {
  const problem = scaleReplicasProblem(replicas);
  if (problem) throw new InvalidError(`Scale.autoscaling "${name}" is invalid: ${problem}`, { kind: 'Scale', name });
  const rv = typeof resourceVersion === 'string' && resourceVersion ? { resourceVersion } : {};
  const patch = isCustomKind(def) && def.scale ? customScalePatch(def, replicas as number, rv) : { metadata: rv, spec: { replicas } };
  const updated = await options.service.patch(def, namespace, name, patch);
  return scaleOf(def, updated);
}

async function handle(c: Context, options: ScaleRoutesOptions, def: KindDefinition): Promise<Response> {
  const namespace = c.req.param('namespace')!;
  const name = c.req.param('name')!;
  const { service } = options;
  if (c.req.method === 'GET') return json(c, scaleOf(def, await service.get(def, namespace, name)));
  const body = parseJsonObject(await readRequestText(c), requestContentType(c));
  if (c.req.method === 'PUT') {
    if (body.kind !== undefined && body.kind !== 'Scale')
      throw new BadRequestError(`the kind in the data (${String(body.kind).slice(0, 64)}) does not match the expected kind (Scale)`);
    const meta = (body.metadata ?? {}) as { name?: unknown; resourceVersion?: unknown };
    if (meta.name !== undefined && meta.name !== name) throw new BadRequestError('the name of the object does not match the name on the URL');
    return json(c, await setReplicas(options, def, namespace, name, (body.spec as { replicas?: unknown } | undefined)?.replicas, meta.resourceVersion));
  }
  // PATCH: a merge patch on the Scale as it is now, applied only if the object has not moved on meanwhile.
  // Without a resourceVersion from the client, a write that lost to another (a controller's status
  // update) is patched again on the new state, as the API does for any patch.
  const clientVersion = (body.metadata as { resourceVersion?: unknown } | undefined)?.resourceVersion;
  for (let attempt = 0; ; attempt++) {
    const current = scaleOf(def, await service.get(def, namespace, name));
    const patched = applyMergePatch(current, body) as { spec?: { replicas?: unknown }; metadata?: { resourceVersion?: unknown } };
    try {
      return json(c, await setReplicas(options, def, namespace, name, patched.spec?.replicas, clientVersion ?? current.metadata.resourceVersion));
    } catch (err) {
      if (clientVersion !== undefined || !(err instanceof ConflictError) || attempt >= PATCH_RETRIES) throw err;
    }
  }
}

/** Registered after authentication and authorization, ahead of the generic resource routes; kinds without a scale subresource fall through to them. */
export function registerScaleRoutes<E extends { Variables: { user: UserInfo } }>(app: Hono<E>, options: ScaleRoutesOptions): void {
  app.all(SCALE_PATH, async (c: Context, next: Next) => {
    const def = scalableKind(c);
    if (!def) return next();
    if (!['GET', 'PUT', 'PATCH'].includes(c.req.method)) throw new MethodNotAllowedError('the server does not allow this method on the requested resource');
    return handle(c, options, def);
  });
}
