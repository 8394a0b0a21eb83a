// Gateway reconciler: renders one nginx configuration for every DNS object and runs it as a pod behind the kube-system/minik8s-gateway Service.
import { createHash } from 'node:crypto';
import { dnsKind, normalizePath, type Dns } from '../../core/api/dns.js';
import type { Condition } from '../../core/api/meta.js';
import { isPodReady, type Pod, podKind } from '../../core/api/pod.js';
import { serviceKind, type Service } from '../../core/api/service.js';
import type { Client } from '../../core/client/client.js';
import { runController } from '../../core/controller/controller.js';
import { LABEL_INDEX, type Informer } from '../../core/controller/informer.js';
import type { InformerFactory } from '../../core/controller/informer-factory.js';
import { WorkQueue } from '../../core/controller/work-queue.js';
import { AlreadyExistsError, NotFoundError } from '../../core/errors.js';
import { GATEWAY_SERVICE } from '../../net/dns/cluster-zone.js';

export const GATEWAY_LABELS: Readonly<Record<string, string>> = { app: 'minik8s-gateway' };
export const CONFIG_HASH_ANNOTATION = 'minik8s.io/gateway-config-hash';
export const GATEWAY_IMAGE = 'nginx:1.22';
const IPV4 = /^\d{1,3}(\.\d{1,3}){3}$/;

/** One path of one host, as nginx will serve it. */
export interface GatewayRoute {
  host: string;
  /** Normalized: no trailing slash (but `/`). */
  path: string;
  /** `ClusterIP:port` of the service. */
  upstream: string;
}

/** What became of one DNS object: the routes it contributes and its Ready condition's content. */
export interface DnsVerdict {
  namespace: string;
  name: string;
  ready: boolean;
  reason: string;
  message: string;
}

/** Paths to services, per host; problems stay with the DNS object they come from, and the other paths keep working. */
export function gatewayRoutes(dnses: readonly Dns[], services: readonly Service[]): { routes: GatewayRoute[]; verdicts: DnsVerdict[] } {
  const byKey = new Map(services.map((s) => [`${s.metadata.namespace}/${s.metadata.name}`, s]));
  // The oldest object keeps a path two objects claim for one host: a newcomer cannot take over a working route.
  const ordered = [...dnses].sort(
    (a, b) =>
      (a.metadata.creationTimestamp ?? '').localeCompare(b.metadata.creationTimestamp ?? '') ||
      `${a.metadata.namespace}/${a.metadata.name}`.localeCompare(`${b.metadata.namespace}/${b.metadata.name}`),
  );
  const taken = new Map<string, string>();
  const routes: GatewayRoute[] = [];
  const verdicts: DnsVerdict[] = [];
  for (const dns of ordered) {
    const namespace = dns.metadata.namespace!;
    const host = dns.spec.host.toLowerCase();
    const problems: { reason: string; message: string }[] = [];
    for (const p of dns.spec.paths) {
      const path = normalizePath(p.path);
      const svc = byKey.get(`${namespace}/${p.serviceName}`);
      const port = svc?.spec.ports.find((sp) => (typeof p.servicePort === 'number' ? sp.port === p.servicePort : sp.name === p.servicePort));
      const owner = taken.get(`${host}${path}`);
      if (!svc) problems.push({ reason: 'ServiceNotFound', message: `service "${p.serviceName}" not found` });
      else if (!IPV4.test(svc.spec.clusterIP ?? ''))
        problems.push({ reason: 'ServiceHasNoClusterIP', message: `service "${p.serviceName}" has no cluster IP` });
      else if (!port) problems.push({ reason: 'PortNotFound', message: `service "${p.serviceName}" has no port ${p.servicePort}` });
      else if (owner) problems.push({ reason: 'PathConflict', message: `path ${path} of ${host} is already served for ${owner}` });
      else {
        taken.set(`${host}${path}`, `${namespace}/${dns.metadata.name}`);
        routes.push({ host, path, upstream: `${svc.spec.clusterIP}:${port.port}` });
      }
    }
    const served = dns.spec.paths.length - problems.length;
    verdicts.push(
      problems.length
        ? {
            namespace,
            name: dns.metadata.name!,
            ready: false,
            reason: problems[0]!.reason,
            message: `${problems.map((p) => p.message).join('; ')} (${served} of ${dns.spec.paths.length} paths served)`,
          }
        : { namespace, name: dns.metadata.name!, ready: true, reason: 'Serving', message: `${served} paths served by the gateway` },
    );
  }
  return { routes, verdicts };
}

/**
 * The whole nginx configuration: a server per host, two locations per path (`= /p` and `/p/`) so that both `/p` and
 * `/p/...` reach the service with the prefix stripped, as the seeds' gateway did; unknown hosts get 404.
 * The services' ClusterIPs are written in: a changed IP changes the configuration, and so the pod.
 */
export function renderNginxConfig(routes: readonly GatewayRoute[]): string {
  const lines = [
    '# Rendered by the minik8s gateway reconciler from the DNS objects; replaced, never edited.',
    'server {',
    '    listen 80 default_server;',
    '    server_name _;',
    '    return 404;',
    '}',
  ];
  const hosts = [...new Set(routes.map((r) => r.host))].sort();
  for (const host of hosts) {
    lines.push('', 'server {', '    listen 80;', `    server_name ${host};`);
    for (const r of routes.filter((x) => x.host === host).sort((a, b) => a.path.localeCompare(b.path))) {
      const proxy = [
        `        proxy_pass http://${r.upstream}/;`,
        '        proxy_http_version 1.1;',
        '        proxy_set_header Host $host;',
        '        proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;',
        `        proxy_set_header X-Forwarded-Prefix ${r.path};`,
      ];
      if (r.path === '/') {
        lines.push('    location / {', ...proxy, '    }');
      } else {
        lines.push(`    location = ${r.path} {`, ...proxy, '    }', `    location ${r.path}/ {`, ...proxy, '    }');
      }
    }
    lines.push('}');
  }
  return `${lines.join('\n')}\n`;
}

export function configHash(config: string): string {
  return createHash('sha256').update(config).digest('hex').slice(0, 16);
}

/** The gateway pod for one configuration: nginx with the configuration handed over in an environment variable. */
export function gatewayPod(config: string, hash: string): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: `${GATEWAY_SERVICE.name}-${hash.slice(0, 10)}`,
      namespace: GATEWAY_SERVICE.namespace,
      labels: { ...GATEWAY_LABELS },
      annotations: { [CONFIG_HASH_ANNOTATION]: hash },
    },
    spec: {
      containers: [
        {
          name: 'nginx',
          image: GATEWAY_IMAGE,
          command: ['sh', '-c', 'printf %s "$NGINX_CONF" > /etc/nginx/conf.d/default.conf && exec nginx -g "daemon off;"'],
          env: [{ name: 'NGINX_CONF', value: config }],
          ports: [{ name: 'http', containerPort: 80, protocol: 'TCP' }],
          readinessProbe: { tcpSocket: { port: 80 }, periodSeconds: 2 },
        },
      ],
    },
  } as unknown as Pod;
}

export function gatewayService(): Service {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: GATEWAY_SERVICE.name, namespace: GATEWAY_SERVICE.namespace, labels: { ...GATEWAY_LABELS } },
    spec: { type: 'ClusterIP', selector: { ...GATEWAY_LABELS }, ports: [{ name: 'http', port: 80, targetPort: 'http', protocol: 'TCP' }] },
  } as unknown as Service;
}

export type GatewayAction =
  | { type: 'createService'; service: Service }
  | { type: 'deleteService' }
  | { type: 'createPod'; pod: Pod }
  | { type: 'deletePod'; name: string }
  | { type: 'status'; namespace: string; name: string; conditions: Condition[] };

export interface GatewayState {
  dnses: readonly Dns[];
  services: readonly Service[];
  /** The gateway's pods (kube-system, the gateway labels). */
  pods: readonly Pod[];
  now: string;
}

/** The Ready condition to write, or undefined when the object already says it (the transition time then stays). */
function readyCondition(dns: Dns, verdict: DnsVerdict, now: string): Condition | undefined {
  const status = verdict.ready ? 'True' : 'False';
  const old = dns.status?.conditions?.find((c) => c.type === 'Ready');
  if (old && old.status === status && old.reason === verdict.reason && old.message === verdict.message) return undefined;
  return {
    type: 'Ready',
    status,
    reason: verdict.reason,
    message: verdict.message,
    lastTransitionTime: old?.status === status ? (old.lastTransitionTime ?? now) : now,
  };
}

/**
 * Pure decision. With DNS objects: the Service, and one pod running the current configuration (named by its hash);
 * older pods go once the new one is Ready, or at once if they are not serving anyway. Without any: nothing of the gateway.
 */
export function planGateway(state: GatewayState): { config: string; hash: string; actions: GatewayAction[] } {
  const dnses = state.dnses.filter((d) => !d.metadata.deletionTimestamp);
  const { routes, verdicts } = gatewayRoutes(dnses, state.services);
  const config = renderNginxConfig(routes);
  const hash = configHash(config);
  const actions: GatewayAction[] = [];
  const live = state.pods.filter((p) => !p.metadata.deletionTimestamp);
  const hasService = state.services.some((s) => s.metadata.namespace === GATEWAY_SERVICE.namespace && s.metadata.name === GATEWAY_SERVICE.name);
  if (dnses.length === 0) {
    for (const p of live) actions.push({ type: 'deletePod', name: p.metadata.name! });
    if (hasService) actions.push({ type: 'deleteService' });
    return { config, hash, actions };
  }
  if (!hasService) actions.push({ type: 'createService', service: gatewayService() });
  const wanted = gatewayPod(config, hash);
  const current = live.find((p) => p.metadata.name === wanted.metadata.name);
  const finished = current && (current.status?.phase === 'Failed' || current.status?.phase === 'Succeeded');
  if (finished) actions.push({ type: 'deletePod', name: current.metadata.name! });
  else if (!current) actions.push({ type: 'createPod', pod: wanted });
  const currentReady = current !== undefined && !finished && isPodReady(current);
  for (const p of live) {
    if (p === current) continue;
    if (currentReady || !isPodReady(p)) actions.push({ type: 'deletePod', name: p.metadata.name! });
  }
  for (const verdict of verdicts) {
    const dns = dnses.find((d) => d.metadata.namespace === verdict.namespace && d.metadata.name === verdict.name)!;
    const condition = readyCondition(dns, verdict, state.now);
    if (condition) actions.push({ type: 'status', namespace: verdict.namespace, name: verdict.name, conditions: [condition] });
  }
  return { config, hash, actions };
}

export interface GatewayReconcilerOptions {
  client: Client;
  /** The process's shared informers: DNS objects, Services, and the pods of the gateway's namespace. */
  informers: InformerFactory;
  log?: (message: string) => void;
  now?: () => Date;
}

/** The one key of the queue: every change leads to one whole reconcile. */
const KEY = 'gateway';

export class GatewayReconciler {
  readonly dnses: Informer<Dns>;
  readonly services: Informer<Service>;
  readonly pods: Informer<Pod>;
  readonly queue = new WorkQueue({ baseDelayMs: 500, maxDelayMs: 30_000 });
  readonly #client: Client;
  readonly #log: (message: string) => void;
  readonly #now: () => Date;
  #lastHash = '';

  constructor(options: GatewayReconcilerOptions) {
    this.#client = options.client;
    this.#log = options.log ?? (() => {});
    this.#now = options.now ?? (() => new Date());
    this.dnses = options.informers.informer<Dns>(dnsKind);
    this.services = options.informers.informer<Service>(serviceKind);
    // Only the gateway's namespace: the pods of every other namespace would be held for nothing.
    this.pods = options.informers.informer<Pod>(podKind, { namespace: GATEWAY_SERVICE.namespace });
    const enqueue = () => this.queue.add(KEY);
    // Our own status writes change DNS objects too: only their spec and deletion matter here.
    this.dnses.addHandlers({
      onAdd: enqueue,
      onUpdate: (o, n) => {
        if (JSON.stringify(o.spec) !== JSON.stringify(n.spec) || o.metadata.deletionTimestamp !== n.metadata.deletionTimestamp) enqueue();
      },
      onDelete: enqueue,
    });
    this.services.addHandlers({ onAdd: enqueue, onUpdate: enqueue, onDelete: enqueue });
    const ours = (p: Pod) => p.metadata.labels?.app === GATEWAY_LABELS.app;
    this.pods.addHandlers({
      onAdd: (p) => {
        if (ours(p)) enqueue();
      },
      onUpdate: (_o, p) => {
        if (ours(p)) enqueue();
      },
      onDelete: (p) => {
        if (ours(p)) enqueue();
      },
    });
  }

  /** Runs the worker once the informers (started by the process's factory) have synced. */
  async start(signal: AbortSignal): Promise<void> {
    this.queue.add(KEY);
    await runController(
      { name: 'gateway', queue: this.queue, informers: [this.dnses, this.services, this.pods], reconcile: () => this.reconcile(), log: this.#log },
      signal,
    );
  }

  async reconcile(): Promise<void> {
    const { hash, actions } = planGateway({
      dnses: this.dnses.list(),
      services: this.services.list(),
      pods: this.pods.byIndex(LABEL_INDEX, `app=${GATEWAY_LABELS.app}`),
      now: this.#now().toISOString(),
    });
    if (hash !== this.#lastHash && this.dnses.size > 0) this.#log(`gateway: configuration ${hash}`);
    this.#lastHash = hash;
    const ns = GATEWAY_SERVICE.namespace;
    for (const action of actions) {
      try {
        switch (action.type) {
          case 'createService':
            await this.#client.create(serviceKind, action.service, { namespace: ns });
            this.#log(`gateway: created service ${ns}/${GATEWAY_SERVICE.name}`);
            break;
          case 'deleteService':
            await this.#client.delete(serviceKind, { namespace: ns, name: GATEWAY_SERVICE.name });
            this.#log(`gateway: no DNS objects left: deleted service ${ns}/${GATEWAY_SERVICE.name}`);
            break;
          case 'createPod':
            await this.#client.create(podKind, action.pod, { namespace: ns });
            this.#log(`gateway: created pod ${ns}/${action.pod.metadata.name}`);
            break;
          case 'deletePod':
            await this.#client.delete(podKind, { namespace: ns, name: action.name });
            this.#log(`gateway: deleted pod ${ns}/${action.name}`);
            break;
          case 'status':
            await this.#client.patch(
              dnsKind,
              { namespace: action.namespace, name: action.name },
              { status: { conditions: action.conditions } },
              { subresource: 'status' },
            );
            break;
        }
      } catch (err) {
        // Someone else's change got there first: the informers will bring it and another round follows.
        if (!(err instanceof NotFoundError) && !(err instanceof AlreadyExistsError)) throw err;
      }
    }
  }
}
