// EndpointSlice (discovery.k8s.io/v1): a Service's endpoints in the shape Kubernetes' newer readers want (kubectl describe svc, client libraries), mirrored from its Endpoints.
import * as v from 'valibot';
import { firstListed, objectReferenceSchema } from './endpoints.js';
import type { KindDefinition } from './kind.js';
import { kindSchema } from './meta.js';
import { portNumberSchema, protocolSchema } from './pod.js';

/** The label naming a slice's Service, by which readers find its slices. */
export const SERVICE_NAME_LABEL = 'kubernetes.io/service-name';
/** Who keeps a slice; slices other managers keep are left alone. */
export const MANAGED_BY_LABEL = 'endpointslice.kubernetes.io/managed-by';

const endpointSchema = v.strictObject({
  addresses: v.pipe(v.array(v.string()), v.minLength(1, 'must have at least one address'), v.maxLength(100, 'must have at most 100 addresses')),
  conditions: v.optional(
    v.strictObject({
      ready: v.optional(v.boolean()),
      serving: v.optional(v.boolean()),
      terminating: v.optional(v.boolean()),
    }),
  ),
  hostname: v.optional(v.string()),
  targetRef: v.optional(objectReferenceSchema),
  nodeName: v.optional(v.string()),
  zone: v.optional(v.string()),
});
export type SliceEndpoint = v.InferOutput<typeof endpointSchema>;

const slicePortSchema = v.strictObject({
  name: v.optional(v.string()),
  protocol: v.optional(protocolSchema),
  port: v.optional(portNumberSchema),
  appProtocol: v.optional(v.string()),
});
export type SlicePort = v.InferOutput<typeof slicePortSchema>;

export const endpointSliceSchema = kindSchema('discovery.k8s.io/v1', 'EndpointSlice', {
  addressType: v.picklist(['IPv4', 'IPv6', 'FQDN'], 'must be one of IPv4, IPv6, FQDN'),
  endpoints: v.optional(v.pipe(v.array(endpointSchema), v.maxLength(1000, 'must have at most 1000 endpoints')), []),
  ports: v.optional(v.array(slicePortSchema)),
});
export type EndpointSlice = v.InferOutput<typeof endpointSliceSchema>;

/** kubectl's PORTS column: the port numbers, `<unset>` for a port without one, `<none>` with no ports. */
function formatPorts(ports: readonly SlicePort[] | undefined): string {
  if (!ports?.length) return '<none>';
  return ports.map((p) => (p.port === undefined ? '<unset>' : String(p.port))).join(',');
}

/** kubectl's ENDPOINTS column: the first three addresses, then `+ N more...`. */
function formatSliceEndpoints(endpoints: readonly SliceEndpoint[] | undefined): string {
  return firstListed(
    (endpoints ?? []).flatMap((e) => e.addresses),
    '<unset>',
  );
}

export const endpointSliceKind: KindDefinition = {
  kind: 'EndpointSlice',
  group: 'discovery.k8s.io',
  version: 'v1',
  resource: 'endpointslices',
  singular: 'endpointslice',
  shortNames: [],
  namespaced: true,
  schema: endpointSliceSchema,
  statusSubresource: false,
  columns: [
    { name: 'ADDRESSTYPE', value: (o) => (o as EndpointSlice).addressType },
    { name: 'PORTS', value: (o) => formatPorts((o as EndpointSlice).ports) },
    { name: 'ENDPOINTS', value: (o) => formatSliceEndpoints((o as EndpointSlice).endpoints) },
  ],
};
