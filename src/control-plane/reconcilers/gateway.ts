// Gateway reconciler: renders one nginx configuration for every DNS object and served Ingress and runs it as a pod behind the kube-system/minik8s-gateway Service.
import { createHash } from 'node:crypto';
import { dnsKind, normalizePath, type Dns } from '../../core/api/dns.js';
import { type Ingress, ingressKind } from '../../core/api/ingress.js';
import { type IngressClass, ingressClassKind } from '../../core/api/ingressclass.js';
import { type Secret, secretKind } from '../../core/api/secret.js';
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
import {
  gatewayServers,
  type IngressProblem,
  type IngressRouting,
  ingressRouting,
  isOurIngress,
  renderServers,
  TLS_DIR,
  tlsDigest,
  type TlsFiles,
} from './ingress-routes.js';

export const GATEWAY_LABELS: Readonly<Record<string, string>> = { app: 'minik8s-gateway' };
export const CONFIG_HASH_ANNOTATION = 'minik8s.io/gateway-config-hash';
export const GATEWAY_IMAGE = 'nginx:1.22';
/** The kube-system Secret the gateway copies the Ingresses' certificates into: a pod mounts only its own namespace's Secrets. */
export const GATEWAY_TLS_SECRET = 'minik8s-gateway-tls';
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
 * The whole nginx configuration: a server per host, two locations per DNS path (`= /p` and `/p/`) so that both `/p` and
 * `/p/...` reach the service with the prefix stripped, as the seeds' gateway did; unknown hosts get 404 (or the
 * Ingresses' default backend). Ingress rules join as ingress-routes.ts renders them. The services' ClusterIPs are
 * written in: a changed IP changes the configuration, and so the pod.
 */
export function renderNginxConfig(routes: readonly GatewayRoute[], ingress?: IngressRouting): string {
  const tls = ingress && Object.keys(ingress.tlsFiles).length ? `\n# TLS material ${tlsDigest(ingress.tlsFiles)}` : '';
  return renderServers(gatewayServers(routes, ingress), `# Rendered by the minik8s gateway reconciler from the DNS objects; replaced, never edited.${tls}`);
}

export function configHash(config: string): string {
  return createHash('sha256').update(config).digest('hex').slice(0, 16);
}

/**
 * The gateway pod for one configuration: nginx with the configuration handed over in an environment variable
 * (it holds no secret); certificates come as files from the gateway's TLS Secret volume.
 */
export function gatewayPod(config: string, hash: string, withTls = false): Pod {
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
          ports: [
            { name: 'http', containerPort: 80, protocol: 'TCP' },
            { name: 'https', containerPort: 443, protocol: 'TCP' },
          ],
          readinessProbe: { tcpSocket: { port: 80 }, periodSeconds: 2 },
          ...(withTls ? { volumeMounts: [{ name: 'tls', mountPath: TLS_DIR, readOnly: true }] } : {}),
        },
      ],
      ...(withTls ? { volumes: [{ name: 'tls', secret: { secretName: GATEWAY_TLS_SECRET, defaultMode: 0o400 } }] } : {}),
    },
  } as unknown as Pod;
}

export function gatewayService(): Service {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: GATEWAY_SERVICE.name, namespace: GATEWAY_SERVICE.namespace, labels: { ...GATEWAY_LABELS } },
    spec: {
      type: 'ClusterIP',
      selector: { ...GATEWAY_LABELS },
      ports: [
        { name: 'http', port: 80, targetPort: 'http', protocol: 'TCP' },
        { name: 'https', port: 443, targetPort: 'https', protocol: 'TCP' },
      ],
    },
  } as unknown as Service;
}

export type GatewayAction =
  | { type: 'createService'; service: Service }
  | { type: 'deleteService' }
  | { type: 'createPod'; pod: Pod }
  | { type: 'deletePod'; name: string }
  | { type: 'status'; namespace: string; name: string; conditions: Condition[] }
  | { type: 'ingressStatus'; namespace: string; name: string; ip: string }
  | { type: 'tlsSecret'; secret: Secret; replace: boolean }
  | { type: 'deleteTlsSecret' };

export interface GatewayState {
  dnses: readonly Dns[];
  services: readonly Service[];
  /** The gateway's pods (kube-system, the gateway labels). */
  pods: readonly Pod[];
  now: string;
  ingresses?: readonly Ingress[];
  ingressClasses?: readonly IngressClass[];
  /** The Ingresses' TLS Secrets (any namespace) and the gateway's own copy in kube-system. */
  secrets?: readonly Secret[];
}

/** The kube-system Secret holding the certificate files, as the gateway pod mounts it. */
export function gatewayTlsSecret(files: TlsFiles): Secret {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: GATEWAY_TLS_SECRET, namespace: GATEWAY_SERVICE.namespace, labels: { ...GATEWAY_LABELS } },
    type: 'Opaque',
    data: { ...files },
  } as Secret;
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
export function planGateway(state: GatewayState): { config: string; hash: string; actions: GatewayAction[]; problems?: IngressProblem[] } {
  const dnses = state.dnses.filter((d) => !d.metadata.deletionTimestamp);
  const { routes, verdicts } = gatewayRoutes(dnses, state.services);
  const ingresses = (state.ingresses ?? []).filter((i) => !i.metadata.deletionTimestamp && isOurIngress(i, state.ingressClasses ?? []));
  const routing = ingresses.length ? ingressRouting(ingresses, state.services, state.secrets) : undefined;
  const config = renderNginxConfig(routes, routing);
  const hash = configHash(config);
  const actions: GatewayAction[] = [];
  const live = state.pods.filter((p) => !p.metadata.deletionTimestamp);
  const service = state.services.find((s) => s.metadata.namespace === GATEWAY_SERVICE.namespace && s.metadata.name === GATEWAY_SERVICE.name);
  const tlsCopy = state.secrets?.find((s) => s.metadata.namespace === GATEWAY_SERVICE.namespace && s.metadata.name === GATEWAY_TLS_SECRET);
  const tlsFiles = routing?.tlsFiles ?? {};
  const withTls = Object.keys(tlsFiles).length > 0;
  if (dnses.length === 0 && ingresses.length === 0) {
    for (const p of live) actions.push({ type: 'deletePod', name: p.metadata.name! });
    if (service) actions.push({ type: 'deleteService' });
    if (tlsCopy) actions.push({ type: 'deleteTlsSecret' });
    return { config, hash, actions };
  }
  if (!service) actions.push({ type: 'createService', service: gatewayService() });
  // The certificates are in place before a pod that mounts them is made.
  if (withTls && JSON.stringify(tlsCopy?.data ?? {}) !== JSON.stringify(tlsFiles)) {
    const secret = gatewayTlsSecret(tlsFiles);
    // Replaced in place, at the version read: the running pod's volume keeps files until the new pod takes over.
    if (tlsCopy) secret.metadata.resourceVersion = tlsCopy.metadata.resourceVersion;
    actions.push({ type: 'tlsSecret', secret, replace: tlsCopy !== undefined });
  }
  const wanted = gatewayPod(config, hash, withTls);
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
  // status.loadBalancer.ingress: the gateway Service's address, where the cluster (and its nodes) reach the Ingresses.
  const ip = service?.spec.clusterIP;
  if (ip && IPV4.test(ip)) {
    for (const ing of ingresses) {
      const now = ing.status?.loadBalancer?.ingress ?? [];
      if (now.length !== 1 || now[0]!.ip !== ip) actions.push({ type: 'ingressStatus', namespace: ing.metadata.namespace!, name: ing.metadata.name!, ip });
    }
  }
  return { config, hash, actions, problems: routing?.problems ?? [] };
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
  readonly ingresses: Informer<Ingress>;
  readonly ingressClasses: Informer<IngressClass>;
  readonly secrets: Informer<Secret>;
  readonly queue = new WorkQueue({ baseDelayMs: 500, maxDelayMs: 30_000 });
  readonly #client: Client;
  readonly #log: (message: string) => void;
  readonly #now: () => Date;
  #lastHash = '';
  #lastProblems = '';

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
    this.ingresses = options.informers.informer<Ingress>(ingressKind);
    this.ingressClasses = options.informers.informer<IngressClass>(ingressClassKind);
    // Secrets matter only as TLS material: a change to any of them is one cheap reconcile.
    this.secrets = options.informers.informer<Secret>(secretKind);
    // Our own status writes change Ingresses too: their spec, class annotation and deletion are what matter.
    const routed = (i: Ingress) => JSON.stringify([i.spec, i.metadata.annotations, i.metadata.deletionTimestamp]);
    this.ingresses.addHandlers({
      onAdd: enqueue,
      onUpdate: (o, n) => {
        if (routed(o) !== routed(n)) enqueue();
      },
      onDelete: enqueue,
    });
    this.ingressClasses.addHandlers({ onAdd: enqueue, onUpdate: enqueue, onDelete: enqueue });
    this.secrets.addHandlers({ onAdd: enqueue, onUpdate: enqueue, onDelete: enqueue });
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
      {
        name: 'gateway',
        queue: this.queue,
        informers: [this.dnses, this.services, this.pods, this.ingresses, this.ingressClasses, this.secrets],
        reconcile: () => this.reconcile(),
        log: this.#log,
      },
      signal,
    );
  }

  async reconcile(): Promise<void> {
    const { hash, actions, problems } = planGateway({
      dnses: this.dnses.list(),
      services: this.services.list(),
      pods: this.pods.byIndex(LABEL_INDEX, `app=${GATEWAY_LABELS.app}`),
      now: this.#now().toISOString(),
      ingresses: this.ingresses.list(),
      ingressClasses: this.ingressClasses.list(),
      secrets: this.secrets.list(),
    });
    if (hash !== this.#lastHash && (this.dnses.size > 0 || this.ingresses.size > 0)) this.#log(`gateway: configuration ${hash}`);
    this.#lastHash = hash;
    // Ingress has no condition to carry these (as in Kubernetes): the log says each once.
    const said = (problems ?? []).map((p) => `gateway: ingress ${p.namespace}/${p.name}: ${p.message}`).join('\n');
    if (said && said !== this.#lastProblems) this.#log(said);
    this.#lastProblems = said;
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
          case 'ingressStatus':
            await this.#client.patch(
              ingressKind,
              { namespace: action.namespace, name: action.name },
              { status: { loadBalancer: { ingress: [{ ip: action.ip }] } } },
              { subresource: 'status' },
            );
            break;
          case 'tlsSecret':
            // Its content is never logged, only its name and size.
            if (action.replace) await this.#client.replace(secretKind, { namespace: ns, name: GATEWAY_TLS_SECRET }, action.secret);
            else await this.#client.create(secretKind, action.secret, { namespace: ns });
            this.#log(`gateway: wrote secret ${ns}/${GATEWAY_TLS_SECRET} (${Object.keys(action.secret.data ?? {}).length / 2} certificates)`);
            break;
          case 'deleteTlsSecret':
            await this.#client.delete(secretKind, { namespace: ns, name: GATEWAY_TLS_SECRET });
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
