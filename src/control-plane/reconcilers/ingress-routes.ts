// Ingress routing for the gateway: which Ingresses are ours, their host/path rules as nginx server blocks beside the DNS kind's, and a model of nginx's choice for tests.
import { createHash } from 'node:crypto';
import type { Ingress, IngressBackend } from '../../core/api/ingress.js';
import { type IngressClass, isDefaultIngressClass, MINIK8S_INGRESS_CONTROLLER } from '../../core/api/ingressclass.js';
import type { Secret } from '../../core/api/secret.js';
import type { Service } from '../../core/api/service.js';

/** The legacy annotation that named a class before spec.ingressClassName; still honoured by Kubernetes' controllers. */
export const LEGACY_CLASS_ANNOTATION = 'kubernetes.io/ingress.class';
/** Where the gateway pod finds the TLS material (a Secret volume). */
export const TLS_DIR = '/etc/nginx/tls';
const IPV4 = /^\d{1,3}(\.\d{1,3}){3}$/;
/**
 * Characters a path may have to be written into nginx's configuration (RFC 3986's path characters
 * less `;`, `$`, quotes and braces): anything else could end or alter a directive.
 */
const SAFE_PATH = /^\/[A-Za-z0-9._~%!&'()*+,=:@/-]*$/;

/** Whether the gateway serves this Ingress: its class (or, with none, the default class) has our controller. */
export function isOurIngress(ingress: Ingress, classes: readonly IngressClass[]): boolean {
  const named = ingress.spec?.ingressClassName ?? ingress.metadata.annotations?.[LEGACY_CLASS_ANNOTATION];
  const ours = (c: IngressClass) => c.spec?.controller === MINIK8S_INGRESS_CONTROLLER;
  if (named !== undefined) return classes.some((c) => c.metadata.name === named && ours(c));
  const defaults = classes.filter(isDefaultIngressClass);
  // As Kubernetes' admission: with more than one default class, none is the default.
  return defaults.length === 1 && ours(defaults[0]!);
}

/** One nginx location: `= base` (exact) or the prefix `base/` (`/` for the root). */
export interface GatewayLocation {
  /** The path the rule names, without a trailing slash for prefixes (`/` stays). */
  base: string;
  exact: boolean;
  /** `ClusterIP:port`. */
  upstream: string;
  /** The DNS kind strips its prefix from the request; Ingress passes the path unchanged, as Kubernetes' controllers do. */
  strip: boolean;
}

/** One nginx server block. */
export interface GatewayServer {
  /** `_` for the catch-all; a host; or `*.domain` for a one-label wildcard. */
  host: string;
  locations: GatewayLocation[];
  /** Where a request that no location matches goes; undefined: nginx's own 404 (the DNS kind's behaviour). */
  fallback?: string | 'notFound';
  /** The Secret volume's file names for this host's certificate and key, when it is served on 443. */
  tls?: { cert: string; key: string };
}

/** A problem with one Ingress, for the log (Ingress has no conditions in Kubernetes). */
export interface IngressProblem {
  namespace: string;
  name: string;
  message: string;
}

/** The TLS material the gateway pod needs: file name -> base64 content, copied from the Ingresses' Secrets. */
export type TlsFiles = Record<string, string>;

export interface IngressRouting {
  /** Locations per host (`''`: rules without a host, served by the catch-all server). */
  hosts: Map<string, GatewayLocation[]>;
  /** Per host, the default backend of the oldest Ingress with a rule for it that has one. */
  fallbacks: Map<string, string>;
  /** The oldest served Ingress's default backend: every request no host rule takes. */
  catchAll?: string;
  tls: Map<string, { cert: string; key: string }>;
  tlsFiles: TlsFiles;
  problems: IngressProblem[];
}

const byAge = (a: Ingress, b: Ingress) =>
  (a.metadata.creationTimestamp ?? '').localeCompare(b.metadata.creationTimestamp ?? '') ||
  `${a.metadata.namespace}/${a.metadata.name}`.localeCompare(`${b.metadata.namespace}/${b.metadata.name}`);

/** A Prefix path and its twin with a trailing slash are one rule in Kubernetes. */
function prefixBase(path: string): string {
  const trimmed = path.replace(/\/+$/, '');
  return trimmed === '' ? '/' : trimmed;
}

/**
 * The routes of the Ingresses the gateway serves, oldest first: a location two Ingresses claim stays
 * with the older one. Backends are looked up in the Ingress's namespace; one that cannot be served
 * is left out and reported, and the rest keep working.
 */
export function ingressRouting(ingresses: readonly Ingress[], services: readonly Service[], secrets: readonly Secret[] = []): IngressRouting {
  const svcByKey = new Map(services.map((s) => [`${s.metadata.namespace}/${s.metadata.name}`, s]));
  const secretByKey = new Map(secrets.map((s) => [`${s.metadata.namespace}/${s.metadata.name}`, s]));
  const routing: IngressRouting = { hosts: new Map(), fallbacks: new Map(), tls: new Map(), tlsFiles: {}, problems: [] };
  // The exact locations that are a Prefix rule's own path (`/foo` of Prefix `/foo`): an Exact rule may take them.
  const twins = new Set<GatewayLocation>();
  for (const ing of [...ingresses].sort(byAge)) {
    const namespace = ing.metadata.namespace!;
    const name = ing.metadata.name!;
    const problem = (message: string) => routing.problems.push({ namespace, name, message });
    const upstreamOf = (b: IngressBackend): string | undefined => {
      if (!b.service) {
        problem('resource backends are not supported by the minik8s gateway');
        return undefined;
      }
      const svc = svcByKey.get(`${namespace}/${b.service.name}`);
      const want = b.service.port.number ?? b.service.port.name;
      const port = svc?.spec.ports.find((p) => (typeof want === 'number' ? p.port === want : p.name === want));
      if (!svc) problem(`service "${b.service.name}" not found`);
      else if (!IPV4.test(svc.spec.clusterIP ?? '')) problem(`service "${b.service.name}" has no cluster IP`);
      else if (!port) problem(`service "${b.service.name}" has no port ${want}`);
      else return `${svc.spec.clusterIP}:${port.port}`;
      return undefined;
    };
    const fallback = ing.spec?.defaultBackend ? upstreamOf(ing.spec.defaultBackend) : undefined;
    if (fallback && routing.catchAll === undefined) routing.catchAll = fallback;
    for (const rule of ing.spec?.rules ?? []) {
      const host = (rule.host ?? '').toLowerCase();
      const locations = routing.hosts.get(host) ?? [];
      routing.hosts.set(host, locations);
      if (fallback && host && !routing.fallbacks.has(host)) routing.fallbacks.set(host, fallback);
      for (const p of rule.http?.paths ?? []) {
        const raw = p.path || '/';
        if (!SAFE_PATH.test(raw)) {
          problem(`path ${JSON.stringify(raw)} has characters the gateway cannot serve`);
          continue;
        }
        const upstream = upstreamOf(p.backend);
        if (!upstream) continue;
        // ImplementationSpecific is ours to define: a prefix match, as most controllers do.
        const exact = p.pathType === 'Exact';
        const base = exact ? raw : prefixBase(raw);
        const claims: GatewayLocation[] =
          exact || base === '/'
            ? [{ base, exact, upstream, strip: false }]
            : [
                { base, exact: true, upstream, strip: false },
                { base, exact: false, upstream, strip: false },
              ];
        for (const c of claims) {
          const held = locations.find((l) => l.base === c.base && l.exact === c.exact);
          if (!held) {
            locations.push(c);
            if (c.exact && !exact) twins.add(c);
          } else if (exact && twins.has(held)) {
            // Kubernetes: at equal length an Exact rule wins over a Prefix rule, whichever is older.
            locations.splice(locations.indexOf(held), 1, c);
            twins.delete(held);
          } else if (!(c.exact && !exact)) {
            problem(`path ${raw} of ${host || '*'} is already served by an older Ingress`);
          }
        }
      }
    }
    for (const t of ing.spec?.tls ?? []) {
      if (!t.secretName) continue;
      const secret = secretByKey.get(`${namespace}/${t.secretName}`);
      const crt = secret?.data?.['tls.crt'];
      const key = secret?.data?.['tls.key'];
      if (!crt || !key) {
        problem(`TLS secret "${t.secretName}" not found or without tls.crt and tls.key`);
        continue;
      }
      const file = `${namespace}.${t.secretName}`;
      for (const h of t.hosts ?? []) {
        const host = h.toLowerCase();
        if (routing.tls.has(host)) continue;
        routing.tls.set(host, { cert: `${file}.crt`, key: `${file}.key` });
        routing.tlsFiles[`${file}.crt`] = crt;
        routing.tlsFiles[`${file}.key`] = key;
      }
    }
  }
  return routing;
}

/** The DNS kind's route, as the gateway already rendered it. */
export interface DnsRouteInput {
  host: string;
  path: string;
  upstream: string;
}

/**
 * Every server block: the catch-all first, then one per host in name order. A host named by both a
 * DNS object and an Ingress is one server: the DNS object's locations first, the Ingress's where
 * free (nginx refuses a location written twice).
 */
export function gatewayServers(dnsRoutes: readonly DnsRouteInput[], routing?: IngressRouting): GatewayServer[] {
  const servers = new Map<string, GatewayServer>();
  const serverFor = (host: string) => {
    let s = servers.get(host);
    if (!s) {
      s = { host, locations: [] };
      servers.set(host, s);
    }
    return s;
  };
  const catchAll = serverFor('_');
  for (const r of dnsRoutes) {
    const s = serverFor(r.host);
    if (r.path === '/') s.locations.push({ base: '/', exact: false, upstream: r.upstream, strip: true });
    else s.locations.push({ base: r.path, exact: true, upstream: r.upstream, strip: true }, { base: r.path, exact: false, upstream: r.upstream, strip: true });
  }
  if (routing) {
    for (const [host, locations] of routing.hosts) {
      const s = host === '' ? catchAll : serverFor(host);
      for (const l of locations) if (!s.locations.some((x) => x.base === l.base && x.exact === l.exact)) s.locations.push(l);
      if (host !== '') s.fallback = routing.fallbacks.get(host) ?? routing.catchAll ?? 'notFound';
    }
    if (routing.catchAll) catchAll.fallback = routing.catchAll;
    for (const [host, files] of routing.tls) {
      const s = servers.get(host);
      if (s) s.tls = files;
    }
  }
  catchAll.fallback ??= 'notFound';
  const rest = [...servers.values()].filter((s) => s !== catchAll).sort((a, b) => a.host.localeCompare(b.host));
  for (const s of [catchAll, ...rest]) s.locations.sort((a, b) => a.base.localeCompare(b.base) || Number(b.exact) - Number(a.exact));
  return [catchAll, ...rest];
}

/** nginx's `server_name` for a host: a one-label wildcard is a regular expression, since nginx's `*.` matches any depth. */
function serverName(host: string): string {
  if (!host.startsWith('*.')) return host;
  return `~^[^.]+${host.slice(1).replaceAll('.', '\\.')}$`;
}

function locationBlock(l: GatewayLocation): string[] {
  const where = l.exact ? `= ${l.base}` : l.base === '/' ? '/' : `${l.base}/`;
  const proxy = l.strip
    ? [
        `        proxy_pass http://${l.upstream}/;`,
        '        proxy_http_version 1.1;',
        '        proxy_set_header Host $host;',
        '        proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;',
        `        proxy_set_header X-Forwarded-Prefix ${l.base};`,
      ]
    : [
        `        proxy_pass http://${l.upstream};`,
        '        proxy_http_version 1.1;',
        '        proxy_set_header Host $host;',
        '        proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;',
        '        proxy_set_header X-Forwarded-Proto $scheme;',
      ];
  return [`    location ${where} {`, ...proxy, '    }'];
}

/** The nginx text of the servers; the catch-all with nothing to serve is the DNS kind's plain 404 server. */
export function renderServers(servers: readonly GatewayServer[], header: string): string {
  const lines = [header];
  for (const s of servers) {
    if (s !== servers[0]) lines.push('');
    const isCatchAll = s.host === '_';
    lines.push('server {', isCatchAll ? '    listen 80 default_server;' : '    listen 80;');
    if (s.tls) lines.push('    listen 443 ssl;', `    ssl_certificate ${TLS_DIR}/${s.tls.cert};`, `    ssl_certificate_key ${TLS_DIR}/${s.tls.key};`);
    lines.push(`    server_name ${serverName(s.host)};`);
    if (isCatchAll && s.locations.length === 0 && s.fallback === 'notFound') {
      lines.push('    return 404;', '}');
      continue;
    }
    for (const l of s.locations) lines.push(...locationBlock(l));
    const hasRoot = s.locations.some((l) => l.base === '/' && !l.exact);
    if (s.fallback && !hasRoot) {
      if (s.fallback === 'notFound') lines.push('    location / {', '        return 404;', '    }');
      else lines.push(...locationBlock({ base: '/', exact: false, upstream: s.fallback, strip: false }));
    }
    lines.push('}');
  }
  return `${lines.join('\n')}\n`;
}

/** A digest of the TLS material, written into the configuration so that new certificates mean a new gateway pod. */
export function tlsDigest(files: TlsFiles): string {
  const h = createHash('sha256');
  for (const name of Object.keys(files).sort()) h.update(name).update('\0').update(files[name]!).update('\0');
  return h.digest('hex').slice(0, 16);
}

/**
 * What nginx does with a request, modelled for tests: the server by exact name, then by wildcard, else
 * the catch-all; then an exact location, else the longest prefix, else the server's fallback.
 * Returns the upstream, or 404.
 */
export function nginxChoice(servers: readonly GatewayServer[], host: string, path: string): string {
  const h = host.toLowerCase();
  const server =
    servers.find((s) => s.host === h) ??
    servers.find((s) => s.host.startsWith('*.') && h.endsWith(s.host.slice(1)) && !h.slice(0, -s.host.length + 1).includes('.')) ??
    servers[0]!;
  const exact = server.locations.find((l) => l.exact && l.base === path);
  if (exact) return exact.upstream;
  const prefixes = server.locations.filter((l) => !l.exact && (l.base === '/' || path.startsWith(`${l.base}/`))).sort((a, b) => b.base.length - a.base.length);
  if (prefixes[0]) return prefixes[0].upstream;
  return server.fallback && server.fallback !== 'notFound' ? server.fallback : '404';
}
