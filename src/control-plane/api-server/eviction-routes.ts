// POST /api/v1/namespaces/NS/pods/NAME/eviction: a policy/v1 Eviction, which deletes the pod gracefully if its PodDisruptionBudget allows.
import type { Context, Hono } from 'hono';
import { podDisruptionBudgetKind, type PodDisruptionBudget } from '../../core/api/poddisruptionbudget.js';
import { podKind, type Pod } from '../../core/api/pod.js';
import { BadRequestError, ConflictError, InternalError, MethodNotAllowedError } from '../../core/errors.js';
import { evictionVerdict, podsOfBudget } from '../reconcilers/disruption-plan.js';
import type { UserInfo } from './auth.js';
import { parseJsonObject, readRequestText, requestContentType } from './body.js';
import type { DeleteOptions, ObjectService } from './object-service.js';

export const EVICTION_PATH = '/api/v1/namespaces/:namespace/pods/:name/eviction';
/** policy/v1beta1 is what older clients (kubectl before 1.22) send. */
export const EVICTION_API_VERSIONS = ['policy/v1', 'policy/v1beta1'] as const;

/** What Kubernetes answers an eviction that went through with. */
export const EVICTION_SUCCESS = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 } as const;

export interface EvictionRoutesOptions {
  service: ObjectService;
  now?: () => Date;
}

/** How often taking a disruption is retried when the budget changed under it (kube-apiserver retries on conflict too). */
const BUDGET_ATTEMPTS = 5;

/**
 * Checks the pod against the PodDisruptionBudget covering it and, when one disruption may be
 * taken, takes it: a status write guarded by the budget's resourceVersion, so two evictions
 * can never both spend the last one. Throws the 429 a refusal answers with.
 */
async function takeDisruption(options: EvictionRoutesOptions, pod: Pod): Promise<void> {
  const namespace = pod.metadata.namespace!;
  for (let attempt = 1; ; attempt++) {
    const budgets = (await options.service.list(podDisruptionBudgetKind, namespace)).items as PodDisruptionBudget[];
    const covering = budgets.filter((b) => podsOfBudget(b, [pod]).length > 0);
    if (covering.length === 0) return;
    if (covering.length > 1) throw new InternalError('This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.');
    const budget = covering[0]!;
    const verdict = evictionVerdict(budget, pod, options.now?.() ?? new Date());
    if (!verdict.allow) throw verdict.error;
    if (!verdict.status) return;
    try {
      await options.service.replace(
        podDisruptionBudgetKind,
        namespace,
        budget.metadata.name!,
        { ...budget, status: verdict.status },
        { subresource: 'status' },
      );
      return;
    } catch (err) {
      if (!(err instanceof ConflictError) || attempt >= BUDGET_ATTEMPTS) throw err;
    }
  }
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The Eviction's deleteOptions, as the delete they ask for: a grace period and preconditions. */
export function evictionDeleteOptions(raw: unknown): DeleteOptions {
  if (raw === undefined || raw === null) return {};
  if (!isObject(raw)) throw new BadRequestError('deleteOptions must be an object');
  const options: DeleteOptions = {};
  const grace = raw.gracePeriodSeconds;
  if (grace !== undefined && grace !== null) {
    if (typeof grace !== 'number' || !Number.isSafeInteger(grace) || grace < 0) {
      throw new BadRequestError(`deleteOptions.gracePeriodSeconds must be a non-negative integer, not ${JSON.stringify(grace).slice(0, 64)}`);
    }
    options.gracePeriodSeconds = grace;
  }
  const pre = raw.preconditions;
  if (pre !== undefined && pre !== null) {
    if (!isObject(pre)) throw new BadRequestError('deleteOptions.preconditions must be an object');
    options.preconditions = {
      uid: typeof pre.uid === 'string' ? pre.uid : undefined,
      resourceVersion: typeof pre.resourceVersion === 'string' ? pre.resourceVersion : undefined,
    };
  }
  return options;
}

async function evict(c: Context, options: EvictionRoutesOptions): Promise<Response> {
  const namespace = c.req.param('namespace')!;
  const name = c.req.param('name')!;
  const body = parseJsonObject(await readRequestText(c), requestContentType(c));
  if (body.apiVersion !== undefined && !(EVICTION_API_VERSIONS as readonly unknown[]).includes(body.apiVersion)) {
    throw new BadRequestError(`the API version in the data (${String(body.apiVersion).slice(0, 64)}) does not match the expected API version (policy/v1)`);
  }
  if (body.kind !== undefined && body.kind !== 'Eviction') {
    throw new BadRequestError(`the kind in the data (${String(body.kind).slice(0, 64)}) does not match the expected kind (Eviction)`);
  }
  if (body.metadata !== undefined && !isObject(body.metadata)) throw new BadRequestError('metadata must be an object');
  const meta = (body.metadata ?? {}) as { name?: unknown; namespace?: unknown };
  if (meta.name !== undefined && meta.name !== '' && meta.name !== name) {
    throw new BadRequestError(`name in URL does not match name in Eviction object`);
  }
  if (meta.namespace !== undefined && meta.namespace !== '' && meta.namespace !== namespace) {
    throw new BadRequestError('the namespace of the provided object does not match the namespace sent on the request');
  }
  const deleteOptions = evictionDeleteOptions(body.deleteOptions);
  const pod = (await options.service.get(podKind, namespace, name)) as Pod;
  await takeDisruption(options, pod);
  // A pod already terminating is evicted already: delete() leaves it as it is (or shortens its grace period).
  await options.service.delete(podKind, namespace, name, deleteOptions);
  return c.body(JSON.stringify(EVICTION_SUCCESS), 201, { 'content-type': 'application/json' });
}

/** Registered after authentication and authorization (nodes are refused there: they may only delete their own pods), ahead of the generic resource routes. */
export function registerEvictionRoutes<E extends { Variables: { user: UserInfo } }>(app: Hono<E>, options: EvictionRoutesOptions): void {
  app.post(EVICTION_PATH, (c) => evict(c, options));
  app.all(EVICTION_PATH, () => {
    throw new MethodNotAllowedError('the server does not allow this method on the requested resource');
  });
}
