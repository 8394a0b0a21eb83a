// Service (v1): a stable virtual IP and ports in front of the pods its selector picks.
import * as v from 'valibot';
import type { KindDefinition } from './kind.js';
import { servicePatchMeta } from './patch-meta.js';
import { conditionSchema, DNS1123_LABEL, dns1035ObjectMetaSchema, kindSchema, labelsSchema } from './meta.js';
import { intSchema, portNameSchema, portNumberSchema, protocolSchema } from './pod.js';
import { duplicates, withChecks, type FieldProblem } from './validate.js';

const IPV4 = /^((25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$/;

/** '' (allocate one), 'None' (headless) or an IPv4 address. */
const clusterIPSchema = v.pipe(
  v.string(),
  v.check((s) => s === '' || s === 'None' || IPV4.test(s), 'must be a valid IPv4 address, "None" or empty'),
);

/** A Service port's name is a DNS-1123 label (kubectl names ports `80-8080`), unlike a container port's IANA name. */
const servicePortNameSchema = v.pipe(
  v.string(),
  v.maxLength(63, 'must be no more than 63 characters'),
  v.regex(DNS1123_LABEL, "must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character"),
);

const servicePortSchema = v.strictObject({
  name: v.optional(servicePortNameSchema),
  protocol: protocolSchema,
  appProtocol: v.optional(v.string()),
  port: portNumberSchema,
  targetPort: v.optional(v.union([portNumberSchema, portNameSchema], 'must be a port number (1-65535) or a port name')),
  nodePort: v.optional(intSchema({ min: 0, max: 65535 })),
});
export type ServicePort = v.InferOutput<typeof servicePortSchema>;

const serviceSpecBaseSchema = v.strictObject({
  /** LoadBalancer is accepted and served like NodePort; no external load balancer is provisioned. */
  type: v.optional(v.picklist(['ClusterIP', 'NodePort', 'LoadBalancer']), 'ClusterIP'),
  selector: v.optional(labelsSchema),
  ports: v.optional(v.array(servicePortSchema), []),
  clusterIP: v.optional(clusterIPSchema),
  clusterIPs: v.optional(v.array(clusterIPSchema)),
  externalIPs: v.optional(v.array(v.pipe(v.string(), v.regex(IPV4, 'must be a valid IPv4 address')))),
  loadBalancerIP: v.optional(v.string()),
  sessionAffinity: v.optional(v.picklist(['None', 'ClientIP']), 'None'),
  sessionAffinityConfig: v.optional(
    v.strictObject({
      clientIP: v.optional(v.strictObject({ timeoutSeconds: v.optional(intSchema({ min: 1, max: 86400 })) })),
    }),
  ),
  externalTrafficPolicy: v.optional(v.picklist(['Cluster', 'Local'])),
  internalTrafficPolicy: v.optional(v.picklist(['Cluster', 'Local'])),
  publishNotReadyAddresses: v.optional(v.boolean()),
  ipFamilies: v.optional(v.array(v.picklist(['IPv4']))),
  ipFamilyPolicy: v.optional(v.picklist(['SingleStack', 'PreferDualStack', 'RequireDualStack'])),
  allocateLoadBalancerNodePorts: v.optional(v.boolean()),
});
type ServiceSpecBase = v.InferOutput<typeof serviceSpecBaseSchema>;

function serviceSpecProblems(spec: ServiceSpecBase): FieldProblem[] {
  const problems: FieldProblem[] = [];
  const ports = spec.ports;
  if (ports.length === 0 && spec.clusterIP !== 'None')
    problems.push({ path: ['ports'], reason: 'FieldValueRequired', detail: 'at least one port is required unless the service is headless' });
  // With several ports, names tell them apart in Endpoints and in DNS SRV records.
  if (ports.length > 1) {
    ports.forEach((p, i) => {
      if (!p.name)
        problems.push({ path: ['ports', i, 'name'], reason: 'FieldValueRequired', detail: 'port names are required when a service has more than one port' });
    });
  }
  problems.push(
    ...duplicates(
      ports,
      (p) => p.name || undefined,
      (i) => ['ports', i, 'name'],
    ),
  );
  problems.push(
    ...duplicates(
      ports,
      (p) => `${p.port}/${p.protocol}`,
      (i) => ['ports', i],
    ).map((p) => ({ ...p, value: `${ports[p.path[1] as number].port}/${ports[p.path[1] as number].protocol}` })),
  );
  if (spec.type === 'ClusterIP') {
    ports.forEach((p, i) => {
      if (p.nodePort) problems.push({ path: ['ports', i, 'nodePort'], reason: 'FieldValueForbidden', detail: "may not be used when `type` is 'ClusterIP'" });
    });
    if (spec.externalTrafficPolicy)
      problems.push({ path: ['externalTrafficPolicy'], reason: 'FieldValueForbidden', detail: 'may only be set for NodePort and LoadBalancer services' });
  }
  if (spec.clusterIP === 'None' && spec.type !== 'ClusterIP')
    problems.push({ path: ['clusterIP'], reason: 'FieldValueInvalid', detail: 'may only be "None" for ClusterIP services' });
  if (spec.sessionAffinityConfig && spec.sessionAffinity !== 'ClientIP')
    problems.push({ path: ['sessionAffinityConfig'], reason: 'FieldValueForbidden', detail: 'may only be set when `sessionAffinity` is ClientIP', value: '' });
  return problems;
}

/** Kubernetes' defaults that depend on other fields: targetPort = port, traffic policy for node ports. */
export function defaultServiceSpec(spec: ServiceSpecBase): ServiceSpecBase {
  const out: ServiceSpecBase = { ...spec, ports: spec.ports.map((p) => ({ ...p, targetPort: p.targetPort ?? p.port })) };
  if (spec.type !== 'ClusterIP' && !spec.externalTrafficPolicy) out.externalTrafficPolicy = 'Cluster';
  if (spec.sessionAffinity === 'ClientIP') {
    // Kubernetes' default stickiness: three hours.
    out.sessionAffinityConfig = { clientIP: { timeoutSeconds: spec.sessionAffinityConfig?.clientIP?.timeoutSeconds ?? 10800 } };
  }
  return out;
}

export const serviceSpecSchema = v.pipe(withChecks(serviceSpecBaseSchema, serviceSpecProblems), v.transform(defaultServiceSpec));
export type ServiceSpec = ServiceSpecBase;

export const serviceSchema = kindSchema('v1', 'Service', {
  metadata: dns1035ObjectMetaSchema,
  spec: v.optional(serviceSpecSchema, {}),
  status: v.optional(
    v.strictObject({
      loadBalancer: v.optional(
        v.strictObject({
          ingress: v.optional(v.array(v.strictObject({ ip: v.optional(v.string()), hostname: v.optional(v.string()) }))),
        }),
      ),
      conditions: v.optional(v.array(conditionSchema)),
    }),
    {},
  ),
});
export type Service = v.InferOutput<typeof serviceSchema>;

function externalIP(s: Service): string {
  const ips = [...(s.spec.externalIPs ?? [])];
  if (s.spec.type === 'LoadBalancer') {
    const ingress = (s.status?.loadBalancer?.ingress ?? []).map((i) => i.ip || i.hostname || '').filter(Boolean);
    ips.push(...ingress);
    if (ips.length === 0) return '<pending>';
  }
  return ips.length ? ips.join(',') : '<none>';
}

/** `80/TCP,443:30443/TCP` as kubectl prints it. */
export function formatServicePorts(ports: readonly ServicePort[]): string {
  if (ports.length === 0) return '<none>';
  return ports.map((p) => `${p.port}${p.nodePort ? `:${p.nodePort}` : ''}/${p.protocol}`).join(',');
}

/** Types whose ports each get a node port (LoadBalancer too: it is served like NodePort). */
export function usesNodePorts(spec: Pick<ServiceSpec, 'type'>): boolean {
  return spec.type === 'NodePort' || spec.type === 'LoadBalancer';
}

/**
 * What an update may not change, as Kubernetes rules: the cluster IP once given, and a node
 * port given to a port (matched by name) while the service keeps node ports. Omitted values
 * are carried over from the stored object before this runs.
 */
export function serviceUpdateProblems(existing: Service, next: Service): FieldProblem[] {
  const problems: FieldProblem[] = [];
  const oldIP = existing.spec.clusterIP ?? '';
  const newIP = next.spec.clusterIP ?? '';
  if (oldIP !== '' && newIP !== oldIP) problems.push({ path: ['spec', 'clusterIP'], reason: 'FieldValueInvalid', value: newIP, detail: 'field is immutable' });
  if (usesNodePorts(existing.spec) && usesNodePorts(next.spec)) {
    const held = new Map(existing.spec.ports.filter((p) => p.nodePort).map((p) => [p.name ?? '', p.nodePort!]));
    next.spec.ports.forEach((p, i) => {
      const old = held.get(p.name ?? '');
      if (old !== undefined && p.nodePort && p.nodePort !== old)
        problems.push({ path: ['spec', 'ports', i, 'nodePort'], reason: 'FieldValueInvalid', value: p.nodePort, detail: 'field is immutable' });
    });
  }
  return problems;
}

export const serviceKind: KindDefinition = {
  patchMeta: servicePatchMeta,
  kind: 'Service',
  group: '',
  version: 'v1',
  resource: 'services',
  singular: 'service',
  shortNames: ['svc'],
  namespaced: true,
  schema: serviceSchema,
  statusSubresource: true,
  validateUpdate: (existing, next) => serviceUpdateProblems(existing as Service, next as Service),
  fieldSelectors: ['spec.type', 'spec.clusterIP'],
  columns: [
    { name: 'TYPE', value: (o) => (o as Service).spec.type },
    { name: 'CLUSTER-IP', value: (o) => (o as Service).spec.clusterIP || '<none>' },
    { name: 'EXTERNAL-IP', value: (o) => externalIP(o as Service) },
    { name: 'PORT(S)', value: (o) => formatServicePorts((o as Service).spec.ports) },
    {
      name: 'SELECTOR',
      wide: true,
      value: (o) => {
        const sel = (o as Service).spec.selector ?? {};
        const keys = Object.keys(sel).sort();
        return keys.length ? keys.map((k) => `${k}=${sel[k]}`).join(',') : '<none>';
      },
    },
  ],
};
