// Endpoints (v1): the ready and not-ready pod addresses behind a Service, kept by the endpoints reconciler.
import * as v from 'valibot';
import type { KindDefinition } from './kind.js';
import { kindSchema } from './meta.js';
import { portNameSchema, portNumberSchema, protocolSchema } from './pod.js';

export const objectReferenceSchema = v.strictObject({
  kind: v.optional(v.string()),
  namespace: v.optional(v.string()),
  name: v.optional(v.string()),
  uid: v.optional(v.string()),
  apiVersion: v.optional(v.string()),
  resourceVersion: v.optional(v.string()),
  fieldPath: v.optional(v.string()),
});
export type ObjectReference = v.InferOutput<typeof objectReferenceSchema>;

const endpointAddressSchema = v.strictObject({
  ip: v.pipe(v.string(), v.minLength(1, 'must not be empty')),
  hostname: v.optional(v.string()),
  nodeName: v.optional(v.string()),
  targetRef: v.optional(objectReferenceSchema),
});
export type EndpointAddress = v.InferOutput<typeof endpointAddressSchema>;

const endpointPortSchema = v.strictObject({
  name: v.optional(v.union([v.literal(''), portNameSchema])),
  port: portNumberSchema,
  protocol: protocolSchema,
  appProtocol: v.optional(v.string()),
});
export type EndpointPort = v.InferOutput<typeof endpointPortSchema>;

const endpointSubsetSchema = v.strictObject({
  addresses: v.optional(v.array(endpointAddressSchema)),
  notReadyAddresses: v.optional(v.array(endpointAddressSchema)),
  ports: v.optional(v.array(endpointPortSchema)),
});
export type EndpointSubset = v.InferOutput<typeof endpointSubsetSchema>;

export const endpointsSchema = kindSchema('v1', 'Endpoints', {
  subsets: v.optional(v.array(endpointSubsetSchema)),
});
export type Endpoints = v.InferOutput<typeof endpointsSchema>;

/** How many `ip:port` pairs kubectl lists before `+ N more...`. */
const MAX_LISTED = 3;

/** kubectl's ENDPOINTS column: ready `ip:port` pairs, at most three, then `+ N more...`. */
export function formatEndpoints(subsets: readonly EndpointSubset[] | undefined): string {
  const all: string[] = [];
  for (const s of subsets ?? []) {
    const ports = s.ports?.length ? s.ports.map((p) => `:${p.port}`) : [''];
    for (const port of ports) for (const a of s.addresses ?? []) all.push(`${a.ip}${port}`);
  }
  return firstListed(all, '<none>');
}

/** kubectl's way with a long list in a column: the first three, then `+ N more...`; `empty` for none. */
export function firstListed(all: readonly string[], empty: string): string {
  if (all.length === 0) return empty;
  const more = all.length - MAX_LISTED;
  return all.slice(0, MAX_LISTED).join(',') + (more > 0 ? ` + ${more} more...` : '');
}

export const endpointsKind: KindDefinition = {
  kind: 'Endpoints',
  group: '',
  version: 'v1',
  resource: 'endpoints',
  singular: 'endpoints',
  shortNames: ['ep'],
  namespaced: true,
  schema: endpointsSchema,
  statusSubresource: false,
  columns: [{ name: 'ENDPOINTS', value: (o) => formatEndpoints((o as Endpoints).subsets) }],
};
