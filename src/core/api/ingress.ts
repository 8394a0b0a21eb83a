// Ingress (networking.k8s.io/v1): HTTP routes by host and path to services, served by the cluster's nginx gateway when its class is ours.
import * as v from 'valibot';
import type { KindDefinition } from './kind.js';
import { DNS1123_SUBDOMAIN, kindSchema, subdomainName } from './meta.js';
import { objectMetaPatchMeta, type PatchMeta } from './patch-meta.js';
import { intSchema } from './pod.js';
import { withChecks, type FieldProblem } from './validate.js';

export const PATH_TYPES = ['Exact', 'ImplementationSpecific', 'Prefix'] as const;
export type PathType = (typeof PATH_TYPES)[number];

const portNumber = intSchema({ min: 1, max: 65535 });

const serviceBackendSchema = v.strictObject({
  name: v.pipe(v.string(), v.minLength(1, 'must not be empty')),
  port: v.optional(v.strictObject({ name: v.optional(v.string()), number: v.optional(portNumber) }), {}),
});

const backendSchema = v.strictObject({
  service: v.optional(serviceBackendSchema),
  resource: v.optional(v.strictObject({ apiGroup: v.optional(v.string()), kind: v.string(), name: v.string() })),
});
export type IngressBackend = v.InferOutput<typeof backendSchema>;

const pathSchema = v.strictObject({
  path: v.optional(v.string()),
  // Optional here so that a missing one gets Kubernetes' own message (checked below).
  pathType: v.optional(v.picklist(PATH_TYPES)),
  backend: backendSchema,
});

const ruleSchema = v.strictObject({
  host: v.optional(v.string()),
  http: v.optional(v.strictObject({ paths: v.array(pathSchema) })),
});

const tlsSchema = v.strictObject({
  hosts: v.optional(v.array(v.string())),
  secretName: v.optional(subdomainName),
});

const IPV4 = /^\d{1,3}(\.\d{1,3}){3}$/;
const WILDCARD_MESSAGE =
  "a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS subdomain, which must consist of lower case alphanumeric characters, '-' or '.' and end with an alphanumeric character";
const SUBDOMAIN_MESSAGE =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";

/** Problems of a rule's or a TLS entry's host: a DNS name, optionally `*.` and a DNS name; never an IP address. */
export function hostProblems(host: string, at: (string | number)[]): FieldProblem[] {
  if (IPV4.test(host) || host.includes(':')) return [{ path: at, reason: 'FieldValueInvalid', value: host, detail: 'must be a DNS name, not an IP address' }];
  if (host.startsWith('*')) {
    return DNS1123_SUBDOMAIN.test(host.slice(2)) && host.startsWith('*.') && host.length <= 253
      ? []
      : [{ path: at, reason: 'FieldValueInvalid', value: host, detail: WILDCARD_MESSAGE }];
  }
  return DNS1123_SUBDOMAIN.test(host) && host.length <= 253 ? [] : [{ path: at, reason: 'FieldValueInvalid', value: host, detail: SUBDOMAIN_MESSAGE }];
}

function backendProblems(b: IngressBackend, at: (string | number)[]): FieldProblem[] {
  if (b.service && b.resource) return [{ path: at, reason: 'FieldValueInvalid', value: '', detail: 'cannot set both resource and service backends' }];
  if (!b.service && !b.resource) return [{ path: at, reason: 'FieldValueInvalid', value: '', detail: 'one backend type must be specified' }];
  const problems: FieldProblem[] = [];
  if (b.service) {
    const { name, number } = b.service.port;
    if (name !== undefined && number !== undefined)
      problems.push({ path: [...at, 'service', 'port'], reason: 'FieldValueInvalid', value: '', detail: 'cannot specify both port name and port number' });
    else if (name === undefined && number === undefined)
      problems.push({ path: [...at, 'service', 'port'], reason: 'FieldValueInvalid', value: '', detail: 'port name or number is required' });
  }
  return problems;
}

/** Path sequences Kubernetes refuses in Exact and Prefix paths. */
const BAD_SEQUENCES = ['//', '/./', '/../', '%2f', '%2F'];
const BAD_SUFFIXES = ['/..', '/.'];

function pathProblems(path: string | undefined, pathType: PathType | undefined, at: (string | number)[]): FieldProblem[] {
  if (pathType === undefined) return [{ path: [...at, 'pathType'], reason: 'FieldValueRequired', detail: 'pathType must be specified' }];
  if (pathType === 'ImplementationSpecific') {
    return path && !path.startsWith('/') ? [{ path: [...at, 'path'], reason: 'FieldValueInvalid', value: path, detail: 'must be an absolute path' }] : [];
  }
  if (!path?.startsWith('/')) return [{ path: [...at, 'path'], reason: 'FieldValueInvalid', value: path ?? '', detail: 'must be an absolute path' }];
  for (const seq of BAD_SEQUENCES) {
    if (path.includes(seq)) return [{ path: [...at, 'path'], reason: 'FieldValueInvalid', value: path, detail: `must not contain '${seq}'` }];
  }
  for (const suffix of BAD_SUFFIXES) {
    if (path.endsWith(suffix)) return [{ path: [...at, 'path'], reason: 'FieldValueInvalid', value: path, detail: `cannot end with '${suffix}'` }];
  }
  return [];
}

const specBaseSchema = v.strictObject({
  ingressClassName: v.optional(subdomainName),
  defaultBackend: v.optional(backendSchema),
  rules: v.optional(v.array(ruleSchema)),
  tls: v.optional(v.array(tlsSchema)),
});
type IngressSpecBase = v.InferOutput<typeof specBaseSchema>;

function specProblems(spec: IngressSpecBase): FieldProblem[] {
  const problems: FieldProblem[] = [];
  if (!spec.defaultBackend && !spec.rules?.length)
    problems.push({ path: [], reason: 'FieldValueInvalid', value: 'object', detail: 'either `defaultBackend` or `rules` must be specified' });
  if (spec.defaultBackend) problems.push(...backendProblems(spec.defaultBackend, ['defaultBackend']));
  spec.rules?.forEach((rule, r) => {
    if (rule.host) problems.push(...hostProblems(rule.host, ['rules', r, 'host']));
    if (rule.http && rule.http.paths.length === 0) problems.push({ path: ['rules', r, 'http', 'paths'], reason: 'FieldValueRequired' });
    rule.http?.paths.forEach((p, i) => {
      const at = ['rules', r, 'http', 'paths', i];
      problems.push(...pathProblems(p.path, p.pathType, at), ...backendProblems(p.backend, [...at, 'backend']));
    });
  });
  spec.tls?.forEach((t, i) => {
    t.hosts?.forEach((h, j) => {
      problems.push(...hostProblems(h, ['tls', i, 'hosts', j]));
    });
  });
  return problems;
}

export const ingressSchema = kindSchema('networking.k8s.io/v1', 'Ingress', {
  spec: v.optional(withChecks(specBaseSchema, specProblems), {}),
  status: v.optional(
    v.strictObject({
      loadBalancer: v.optional(
        v.strictObject({
          ingress: v.optional(
            v.array(
              v.strictObject({
                ip: v.optional(v.string()),
                hostname: v.optional(v.string()),
                ports: v.optional(v.array(v.strictObject({ port: v.number(), protocol: v.string(), error: v.optional(v.string()) }))),
              }),
            ),
          ),
        }),
        {},
      ),
    }),
    {},
  ),
});
export type Ingress = v.InferOutput<typeof ingressSchema>;

const patchMeta: PatchMeta = { metadata: { fields: objectMetaPatchMeta } };

export const ingressKind: KindDefinition = {
  patchMeta,
  kind: 'Ingress',
  group: 'networking.k8s.io',
  version: 'v1',
  resource: 'ingresses',
  singular: 'ingress',
  shortNames: ['ing'],
  namespaced: true,
  schema: ingressSchema,
  statusSubresource: true,
  // kubectl's columns: NAME CLASS HOSTS ADDRESS PORTS AGE.
  columns: [
    { name: 'CLASS', value: (o) => (o as Ingress).spec?.ingressClassName ?? '<none>' },
    {
      name: 'HOSTS',
      value: (o) => {
        const hosts = ((o as Ingress).spec?.rules ?? []).map((r) => r.host).filter((h): h is string => !!h);
        if (hosts.length === 0) return '*';
        return hosts.length > 4 ? `${hosts.slice(0, 4).join(',')} + ${hosts.length - 4} more...` : hosts.join(',');
      },
    },
    {
      name: 'ADDRESS',
      value: (o) =>
        ((o as Ingress).status?.loadBalancer?.ingress ?? [])
          .map((i) => i.ip ?? i.hostname ?? '')
          .filter(Boolean)
          .join(','),
    },
    { name: 'PORTS', value: (o) => ((o as Ingress).spec?.tls?.length ? '80, 443' : '80') },
  ],
};
