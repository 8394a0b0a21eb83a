// POST /apis/minik8s.io/v1/join (a join token buys a node credential and a pod CIDR) and the admins' jointokens API.
import type { Context, Hono } from 'hono';
import { BadRequestError, InvalidError, MethodNotAllowedError, type StatusCause } from '../../core/errors.js';
import type { Taint } from '../../core/api/node.js';
import type { CreateJoinTokenOptions, JoinTokenInfo } from '../master/join-tokens.js';
import type { UserInfo } from './auth.js';
import { parseJsonObject, readRequestText, requestContentType } from './body.js';

export const JOIN_API_VERSION = 'minik8s.io/v1';
export const JOIN_PATH = `/apis/${JOIN_API_VERSION}/join`;
export const JOIN_TOKENS_PATH = `/apis/${JOIN_API_VERSION}/jointokens`;

/** Ten years: longer is "never", which is ttlSeconds 0. */
const MAX_TTL_SECONDS = 10 * 365 * 24 * 3600;
const MAX_DESCRIPTION = 256;

/** What a JoinRequest brings besides the node name (see NodeRegistrar's JoinDetails). */
export interface JoinRequestDetails {
  password: string;
  labels?: Record<string, string>;
  taints?: Taint[];
}

export interface JoinRoutesOptions {
  /** Joins (or re-joins) a node; validation errors are InvalidErrors. */
  join(nodeName: unknown, details: JoinRequestDetails): Promise<{ nodeName: string; token: string; podCIDR: string }>;
  tokens: {
    create(options: CreateJoinTokenOptions): Promise<{ token: string; info: JoinTokenInfo }>;
    list(): Promise<JoinTokenInfo[]>;
    get(id: string): Promise<JoinTokenInfo>;
    delete(id: string): Promise<JoinTokenInfo>;
  };
  /** Told to joining workers, which pull images from the master's registry; absent when it runs none. */
  registryPort?: number;
  /**
   * Signs the kubelet's serving certificate request sent with the join (`csr`, PEM), for the
   * joined node's name only; absent (plain HTTP masters) the field is ignored.
   */
  signKubeletCsr?(nodeName: string, csrPem: string): Promise<string>;
  /** All pods' range, told to joining workers: their overlay forwards it and masquerades only what leaves it. */
  clusterCIDR?: string;
}

/** A JoinToken as the API shows it: never its secret, except once in the answer to its creation. */
export function joinTokenObject(info: JoinTokenInfo, token?: string): Record<string, unknown> {
  return {
    apiVersion: JOIN_API_VERSION,
    kind: 'JoinToken',
    metadata: { name: info.id, creationTimestamp: info.createdAt },
    spec: {
      ...(info.description ? { description: info.description } : {}),
      ...(info.expiresAt ? { expirationTimestamp: info.expiresAt } : {}),
    },
    ...(token ? { token } : {}),
  };
}

function json(c: Context, body: unknown, status = 200): Response {
  return c.body(JSON.stringify(body), status as 200, { 'content-type': 'application/json' });
}

/** Refuses fields the kind does not have and a wrong apiVersion or kind, as a strict decoder does (400). */
function checkShape(body: Record<string, unknown>, kind: string, apiVersion: string, fields: readonly string[]): void {
  for (const key of Object.keys(body)) {
    if (!['apiVersion', 'kind', ...fields].includes(key)) throw new BadRequestError(`strict decoding error: unknown field "${key}" in ${kind}`);
  }
  if (body.apiVersion !== undefined && body.apiVersion !== apiVersion) {
    throw new BadRequestError(`${kind} must have apiVersion "${apiVersion}", not ${JSON.stringify(body.apiVersion).slice(0, 64)}`);
  }
  if (body.kind !== undefined && body.kind !== kind) {
    throw new BadRequestError(`the body must be a ${kind}, not ${JSON.stringify(body.kind).slice(0, 64)}`);
  }
}

/** `{ttlSeconds?, description?}` of a token creation, checked field by field (422 with causes). */
export function parseCreateJoinToken(body: Record<string, unknown>): CreateJoinTokenOptions {
  checkShape(body, 'JoinToken', JOIN_API_VERSION, ['ttlSeconds', 'description']);
  const causes: StatusCause[] = [];
  const options: CreateJoinTokenOptions = {};
  const ttl = body.ttlSeconds;
  if (ttl !== undefined) {
    if (typeof ttl !== 'number' || !Number.isInteger(ttl) || ttl < 0 || ttl > MAX_TTL_SECONDS) {
      causes.push({
        field: 'ttlSeconds',
        reason: 'FieldValueInvalid',
        message: `Invalid value: ${JSON.stringify(ttl).slice(0, 64)}: must be a whole number of seconds from 0 (never expires) to ${MAX_TTL_SECONDS}`,
      });
    } else {
      options.ttlSeconds = ttl;
    }
  }
  const description = body.description;
  if (description !== undefined) {
    // biome-ignore lint/suspicious/noControlCharactersInRegex: the check refuses control characters, so the class must name them
    if (typeof description !== 'string' || description.length > MAX_DESCRIPTION || /[\u0000-\u001f]/.test(description)) {
      causes.push({
        field: 'description',
        reason: 'FieldValueInvalid',
        message: `Invalid value: must be a single line of at most ${MAX_DESCRIPTION} characters`,
      });
    } else if (description) {
      options.description = description;
    }
  }
  if (causes.length) {
    throw new InvalidError(`JoinToken is invalid: ${causes.map((c) => `${c.field}: ${c.message}`).join(', ')}`, {
      kind: 'jointokens',
      group: 'minik8s.io',
      causes,
    });
  }
  return options;
}

/** A node password: what the worker makes (64 hex characters) or any other long enough secret. */
const NODE_PASSWORD = /^[\x21-\x7e]{16,256}$/;

/** nodePassword, labels and taints of a JoinRequest, checked for shape (422 with causes); the Node's validation judges the taints' contents. */
export function parseJoinDetails(body: Record<string, unknown>): JoinRequestDetails {
  const causes: StatusCause[] = [];
  const { nodePassword, labels, taints } = body;
  if (nodePassword === undefined || nodePassword === '') {
    causes.push({ field: 'nodePassword', reason: 'FieldValueRequired', message: 'Required value: the worker sends the node password from its data dir' });
  } else if (typeof nodePassword !== 'string' || !NODE_PASSWORD.test(nodePassword)) {
    causes.push({ field: 'nodePassword', reason: 'FieldValueInvalid', message: 'Invalid value: must be 16 to 256 printable characters without spaces' });
  }
  const isMap = typeof labels === 'object' && labels !== null && !Array.isArray(labels) && Object.values(labels).every((v) => typeof v === 'string');
  if (labels !== undefined && !isMap) causes.push({ field: 'labels', reason: 'FieldValueTypeInvalid', message: 'Invalid value: must be a map of strings' });
  if (taints !== undefined && !Array.isArray(taints))
    causes.push({ field: 'taints', reason: 'FieldValueTypeInvalid', message: 'Invalid value: must be a list of taints' });
  if (causes.length) {
    throw new InvalidError(`JoinRequest is invalid: ${causes.map((c) => `${c.field}: ${c.message}`).join(', ')}`, {
      kind: 'join',
      group: 'minik8s.io',
      causes,
    });
  }
  return {
    password: nodePassword as string,
    ...(labels !== undefined ? { labels: labels as Record<string, string> } : {}),
    ...(taints !== undefined ? { taints: taints as Taint[] } : {}),
  };
}

async function readBody(c: Context, allowEmpty: boolean): Promise<Record<string, unknown>> {
  const text = await readRequestText(c);
  if (allowEmpty && text.trim() === '') return {};
  return parseJsonObject(text, requestContentType(c));
}

/** Registered after authentication and authorization (which let only admins and join tokens this far), ahead of the generic routes. */
export function registerJoinRoutes<E extends { Variables: { user: UserInfo } }>(app: Hono<E>, options: JoinRoutesOptions): void {
  const notAllowed = () => new MethodNotAllowedError('the server does not allow this method on the requested resource');

  app.post(JOIN_PATH, async (c) => {
    const body = await readBody(c, false);
    checkShape(body, 'JoinRequest', JOIN_API_VERSION, ['nodeName', 'nodePassword', 'labels', 'taints', 'csr']);
    if (body.csr !== undefined && (typeof body.csr !== 'string' || body.csr.length > 16 * 1024)) {
      throw new BadRequestError('JoinRequest csr must be a PEM certificate request of at most 16 KiB');
    }
    const joined = await options.join(body.nodeName, parseJoinDetails(body));
    let kubeletCertificate: string | undefined;
    if (typeof body.csr === 'string' && options.signKubeletCsr) {
      try {
        kubeletCertificate = await options.signKubeletCsr(joined.nodeName, body.csr);
      } catch (err) {
        throw new BadRequestError(`JoinRequest csr is not a valid certificate request: ${(err as Error).message}`);
      }
    }
    return json(c, {
      apiVersion: JOIN_API_VERSION,
      kind: 'JoinResponse',
      nodeName: joined.nodeName,
      token: joined.token,
      podCIDR: joined.podCIDR,
      ...(options.registryPort !== undefined ? { registryPort: options.registryPort } : {}),
      ...(options.clusterCIDR !== undefined ? { clusterCIDR: options.clusterCIDR } : {}),
      ...(kubeletCertificate !== undefined ? { kubeletCertificate } : {}),
    });
  });
  app.all(JOIN_PATH, () => {
    throw notAllowed();
  });

  app.post(JOIN_TOKENS_PATH, async (c) => {
    const created = await options.tokens.create(parseCreateJoinToken(await readBody(c, true)));
    return json(c, joinTokenObject(created.info, created.token), 201);
  });
  app.get(JOIN_TOKENS_PATH, async (c) => {
    const items = (await options.tokens.list()).map((info) => joinTokenObject(info));
    return json(c, { apiVersion: JOIN_API_VERSION, kind: 'JoinTokenList', metadata: {}, items });
  });
  app.get(`${JOIN_TOKENS_PATH}/:id`, async (c) => json(c, joinTokenObject(await options.tokens.get(c.req.param('id')))));
  app.delete(`${JOIN_TOKENS_PATH}/:id`, async (c) => json(c, joinTokenObject(await options.tokens.delete(c.req.param('id')))));
  app.all(JOIN_TOKENS_PATH, () => {
    throw notAllowed();
  });
  app.all(`${JOIN_TOKENS_PATH}/:id`, () => {
    throw notAllowed();
  });
}
