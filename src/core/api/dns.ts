// DNS (minik8s.io/v1): a host name whose URL path prefixes lead to services, served by the cluster's nginx gateway.
import * as v from 'valibot';
import type { KindDefinition } from './kind.js';
import { conditionSchema, DNS1123_LABEL, kindSchema, subdomainName } from './meta.js';
import { portOrNameSchema } from './pod.js';
import { duplicates, withChecks, type FieldProblem } from './validate.js';

/**
 * A URL path prefix: `/` then letters, digits and `.-_~%/`. The gateway writes it into nginx's
 * configuration, so anything that could end a directive (space, `;`, quotes, braces) is refused here.
 */
const PATH = /^\/[A-Za-z0-9._~%/-]*$/;

const dnsPathSchema = v.strictObject({
  path: v.pipe(v.string(), v.regex(PATH, "must be an absolute URL path such as /path1 (letters, digits and '.', '-', '_', '~', '%', '/')")),
  serviceName: v.pipe(
    v.string(),
    v.minLength(1, 'must not be empty'),
    v.maxLength(63, 'must be no more than 63 characters'),
    v.regex(DNS1123_LABEL, 'must be the name of a service'),
  ),
  servicePort: portOrNameSchema,
});
export type DnsPath = v.InferOutput<typeof dnsPathSchema>;

/** `/a/` and `/a` are one prefix: the trailing slash is dropped (except for `/` itself). */
export function normalizePath(path: string): string {
  const trimmed = path.replace(/\/+$/, '');
  return trimmed === '' ? '/' : trimmed;
}

const dnsSpecSchema = withChecks(
  v.strictObject({
    /** The name clients ask for; the cluster DNS answers it with the gateway's address. */
    host: subdomainName,
    paths: v.pipe(v.array(dnsPathSchema), v.minLength(1, 'must list at least one path')),
  }),
  (spec): FieldProblem[] =>
    duplicates(
      spec.paths,
      (p) => normalizePath(p.path),
      (i) => ['paths', i, 'path'],
    ),
);
export type DnsSpec = v.InferOutput<typeof dnsSpecSchema>;

export const dnsSchema = kindSchema('minik8s.io/v1', 'DNS', {
  spec: dnsSpecSchema,
  status: v.optional(
    v.strictObject({
      /** Set by the gateway reconciler: Ready, with the reason when a path cannot be served. */
      conditions: v.optional(v.array(conditionSchema)),
    }),
    {},
  ),
});
export type Dns = v.InferOutput<typeof dnsSchema>;

export const dnsKind: KindDefinition = {
  kind: 'DNS',
  group: 'minik8s.io',
  version: 'v1',
  resource: 'dnses',
  singular: 'dns',
  shortNames: [],
  namespaced: true,
  schema: dnsSchema,
  statusSubresource: true,
  columns: [
    { name: 'HOST', value: (o) => (o as Dns).spec.host },
    { name: 'PATHS', value: (o) => (o as Dns).spec.paths.map((p) => p.path).join(',') },
    { name: 'SERVICES', value: (o) => (o as Dns).spec.paths.map((p) => `${p.serviceName}:${p.servicePort}`).join(',') },
    {
      name: 'READY',
      wide: true,
      value: (o) => {
        const ready = (o as Dns).status?.conditions?.find((c) => c.type === 'Ready');
        return ready ? (ready.status === 'True' ? 'True' : `${ready.status} (${ready.reason ?? ''})`) : '<unknown>';
      },
    },
  ],
};
