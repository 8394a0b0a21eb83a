// POST /api/v1/namespaces/NS/serviceaccounts/NAME/token: Kubernetes' TokenRequest, answered with a bound token; a node may ask only for its own pods' service accounts.
import type { Context, Hono } from 'hono';
import type { KubeObject } from '../../core/api/meta.js';
import { type Pod, podKind } from '../../core/api/pod.js';
import { serviceAccountKind } from '../../core/api/serviceaccount.js';
import { BadRequestError, ConflictError, ForbiddenError, InvalidError, MethodNotAllowedError, NotFoundError, type StatusCause } from '../../core/errors.js';
import type { UserInfo } from '../api-server/auth.js';
import { MASTERS_GROUP, nodeNameOf } from '../api-server/authorization.js';
import { parseJsonObject, readRequestText, requestContentType } from '../api-server/body.js';
import type { ObjectService } from '../api-server/object-service.js';
import { DEFAULT_EXPIRATION_SECONDS, MAX_EXPIRATION_SECONDS, MIN_EXPIRATION_SECONDS, type ServiceAccountTokens } from './tokens.js';

export const TOKEN_REQUEST_PATH = '/api/v1/namespaces/:namespace/serviceaccounts/:name/token';
export const TOKEN_REQUEST_API_VERSION = 'authentication.k8s.io/v1';

export interface TokenRequestRoutesOptions {
  service: ObjectService;
  tokens: ServiceAccountTokens;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

interface TokenRequestSpec {
  audiences: string[];
  expirationSeconds: number;
  boundObjectRef?: { kind: string; apiVersion?: string; name: string; uid?: string };
}

/** The spec with its defaults, or a 422 in Kubernetes' words for each bad field. */
export function tokenRequestSpec(raw: unknown, defaultAudiences: readonly string[], name: string): TokenRequestSpec {
  const spec = isObject(raw) ? raw : {};
  const causes: StatusCause[] = [];
  const audiences = spec.audiences ?? [];
  if (!Array.isArray(audiences) || audiences.some((a) => typeof a !== 'string')) {
    causes.push({ reason: 'FieldValueInvalid', field: 'spec.audiences', message: 'Invalid value: must be a list of strings' });
  }
  const seconds = spec.expirationSeconds ?? DEFAULT_EXPIRATION_SECONDS;
  if (typeof seconds !== 'number' || !Number.isSafeInteger(seconds)) {
    causes.push({ reason: 'FieldValueInvalid', field: 'spec.expirationSeconds', message: 'Invalid value: must be an integer' });
  } else if (seconds < MIN_EXPIRATION_SECONDS) {
    causes.push({
      reason: 'FieldValueInvalid',
      field: 'spec.expirationSeconds',
      message: `Invalid value: ${seconds}: may not specify a duration less than 10 minutes`,
    });
  } else if (seconds > MAX_EXPIRATION_SECONDS) {
    causes.push({
      reason: 'FieldValueTooLong',
      field: 'spec.expirationSeconds',
      message: `Invalid value: ${seconds}: may not specify a duration larger than 2^32 seconds`,
    });
  }
  let boundObjectRef: TokenRequestSpec['boundObjectRef'];
  const ref = spec.boundObjectRef;
  if (ref !== undefined && ref !== null) {
    if (!isObject(ref) || typeof ref.name !== 'string' || ref.name === '') {
      causes.push({ reason: 'FieldValueRequired', field: 'spec.boundObjectRef.name', message: 'Required value' });
    } else if (ref.kind !== 'Pod') {
      // Kubernetes also binds to Secrets and Nodes; pods are what this cluster's kubelets and admins need.
      causes.push({
        reason: 'FieldValueNotSupported',
        field: 'spec.boundObjectRef.kind',
        message: `Unsupported value: ${JSON.stringify(ref.kind)}: supported values: "Pod"`,
      });
    } else {
      boundObjectRef = {
        kind: 'Pod',
        apiVersion: typeof ref.apiVersion === 'string' ? ref.apiVersion : 'v1',
        name: ref.name,
        ...(typeof ref.uid === 'string' ? { uid: ref.uid } : {}),
      };
    }
  }
  if (causes.length) {
    const detail = causes.map((c) => `${c.field}: ${c.message}`).join(', ');
    throw new InvalidError(`TokenRequest.authentication.k8s.io "${name}" is invalid: ${detail}`, {
      kind: 'TokenRequest',
      group: 'authentication.k8s.io',
      name,
      causes,
    });
  }
  return {
    audiences: (audiences as string[]).length ? (audiences as string[]) : [...defaultAudiences],
    expirationSeconds: seconds as number,
    ...(boundObjectRef ? { boundObjectRef } : {}),
  };
}

async function getOrUndefined(service: ObjectService, def: typeof podKind, namespace: string, name: string): Promise<KubeObject | undefined> {
  try {
    return await service.get(def, namespace, name);
  } catch (err) {
    if (err instanceof NotFoundError) return undefined;
    throw err;
  }
}

async function requestToken(c: Context, options: TokenRequestRoutesOptions): Promise<Response> {
  const namespace = c.req.param('namespace')!;
  const name = c.req.param('name')!;
  const user = c.get('user') as UserInfo;
  const body = parseJsonObject(await readRequestText(c), requestContentType(c));
  if (body.apiVersion !== undefined && body.apiVersion !== TOKEN_REQUEST_API_VERSION) {
    throw new BadRequestError(
      `the API version in the data (${String(body.apiVersion).slice(0, 64)}) does not match the expected API version (${TOKEN_REQUEST_API_VERSION})`,
    );
  }
  if (body.kind !== undefined && body.kind !== 'TokenRequest') {
    throw new BadRequestError(`the kind in the data (${String(body.kind).slice(0, 64)}) does not match the expected kind (TokenRequest)`);
  }
  const spec = tokenRequestSpec(body.spec, options.tokens.apiAudiences, name);
  const sa = await options.service.get(serviceAccountKind, namespace, name);
  const nodeName = user.groups.includes(MASTERS_GROUP) ? undefined : nodeNameOf(user);
  let pod: Pod | undefined;
  if (spec.boundObjectRef) {
    pod = (await getOrUndefined(options.service, podKind, namespace, spec.boundObjectRef.name)) as Pod | undefined;
    if (!pod) throw new NotFoundError(`pods "${spec.boundObjectRef.name}" not found`, { kind: 'pods', name: spec.boundObjectRef.name });
    if (spec.boundObjectRef.uid !== undefined && spec.boundObjectRef.uid !== pod.metadata.uid) {
      // Kubernetes' words: the pod was replaced since the caller looked, and a token for the old one is refused.
      throw new ConflictError(
        `Operation cannot be fulfilled on pods "${pod.metadata.name}": the UID in the bound object reference (${spec.boundObjectRef.uid}) does not match the UID in record. The object might have been deleted and then recreated`,
        { kind: 'pods', name: pod.metadata.name },
      );
    }
    if ((pod.spec.serviceAccountName ?? 'default') !== name) {
      throw new BadRequestError(
        `cannot issue token for service account "${namespace}/${name}": pod "${pod.metadata.name}" runs as "${pod.spec.serviceAccountName ?? 'default'}"`,
      );
    }
  }
  // Node restriction, as Kubernetes' NodeRestriction admission: a kubelet asks only for tokens bound to pods on its node.
  if (nodeName !== undefined && (!pod || pod.spec.nodeName !== nodeName)) {
    throw new ForbiddenError(
      `serviceaccounts "${name}" is forbidden: node "${nodeName}" can only create tokens for pods bound to it, with boundObjectRef that pod`,
      { kind: 'serviceaccounts', name },
    );
  }
  const issued = await options.tokens.issue({
    namespace,
    serviceAccount: { name, uid: sa.metadata.uid ?? '' },
    ...(pod ? { pod: { name: pod.metadata.name!, uid: pod.metadata.uid ?? '' } } : {}),
    ...(pod?.spec.nodeName ? { node: { name: pod.spec.nodeName } } : {}),
    audiences: spec.audiences,
    expirationSeconds: spec.expirationSeconds,
  });
  const boundObjectRef = spec.boundObjectRef && pod ? { ...spec.boundObjectRef, uid: pod.metadata.uid } : undefined;
  const answer = {
    apiVersion: TOKEN_REQUEST_API_VERSION,
    kind: 'TokenRequest',
    metadata: { name, namespace, creationTimestamp: null },
    spec: { audiences: spec.audiences, expirationSeconds: spec.expirationSeconds, boundObjectRef: boundObjectRef ?? null },
    status: issued,
  };
  return c.body(JSON.stringify(answer), 201, { 'content-type': 'application/json' });
}

/** Registered after authentication and authorization (admins and nodes reach it), ahead of the generic resource routes. */
export function registerTokenRequestRoutes<E extends { Variables: { user: UserInfo } }>(app: Hono<E>, options: TokenRequestRoutesOptions): void {
  app.post(TOKEN_REQUEST_PATH, (c) => requestToken(c as unknown as Context, options));
  app.all(TOKEN_REQUEST_PATH, () => {
    throw new MethodNotAllowedError('the server does not allow this method on the requested resource');
  });
}
