// An in-memory PodProvider that behaves as the Docker one does (the contract suite checks it), with controls for kubelet tests.
import { PassThrough, Readable } from 'node:stream';
import type { Pod } from '../core/api/pod.js';
import { parseQuantity } from '../core/api/quantity.js';
import { podNetworkConfig } from '../core/api/ipv4.js';
import { findContainerSpec, podAllocatedHostPorts, podRefOf, portAllocatedMessage, resolveImageName } from './docker-container-config.js';
import {
  ContainerStartError,
  type ActionResult,
  type ContainerAction,
  type ContainerStats,
  type CreatePodOptions,
  type ExecOptions,
  type ExecResult,
  type LogOptions,
  type PodProvider,
  type PodRef,
  type RuntimeContainer,
  type RuntimeInfo,
  type RuntimePod,
} from './provider.js';

/** What a killed process exits with when it does not handle SIGTERM (128 + 15), as Docker reports it. */
export const KILLED_EXIT_CODE = 143;

/**
 * The pod annotation a fake pod's stats report, set from outside as kwok's resource-usage
 * emulation does: `cpu=300m,memory=64Mi` for every container, or per container
 * `web:cpu=300m,memory=64Mi;sidecar:cpu=10m` (a part without `NAME:` covers the containers not named).
 */
export const FAKE_USAGE_ANNOTATION = 'fake.minik8s.io/usage';

type Usage = Omit<ContainerStats, 'name'>;

/** The usage the annotation gives each named container (`*`: the rest); undefined when it does not parse. */
export function parseUsageAnnotation(text: string): Map<string, Usage> | undefined {
  const out = new Map<string, Usage>();
  for (const part of text
    .split(';')
    .map((p) => p.trim())
    .filter(Boolean)) {
    const colon = part.indexOf(':');
    const container = colon > 0 && !part.slice(0, colon).includes('=') ? part.slice(0, colon).trim() : '*';
    const usage: Usage = { cpuCores: 0, memoryBytes: 0 };
    for (const pair of part
      .slice(container === '*' ? 0 : colon + 1)
      .split(',')
      .map((p) => p.trim())
      .filter(Boolean)) {
      const [key, value, extra] = pair.split('=').map((x) => x.trim());
      if (extra !== undefined || value === undefined || (key !== 'cpu' && key !== 'memory')) return undefined;
      let amount: number;
      try {
        amount = parseQuantity(value);
      } catch {
        return undefined;
      }
      if (amount < 0) return undefined;
      if (key === 'cpu') usage.cpuCores = amount;
      else usage.memoryBytes = amount;
    }
    out.set(container, usage);
  }
  return out;
}

interface FakeInstance extends Omit<RuntimeContainer, 'previous'> {
  log: { at: string; text: string }[];
  followers: Set<PassThrough>;
}

interface FakePod extends PodRef {
  sandbox: RuntimePod['sandbox'];
  hostPorts: string[];
  /** Every kept instance, in creation order. */
  instances: FakeInstance[];
}

/** The "engine" behind fake providers: two providers over one backend see the same pods, as two kubelets over one dockerd do. */
export class FakeBackend {
  readonly pods = new Map<string, FakePod>();
  readonly listeners = new Set<(uid: string) => void>();
  #ids = 0;

  nextID(): string {
    return (++this.#ids).toString(16).padStart(64, '0');
  }

  /** As Docker's events arrive after the call that caused them returns. */
  notify(uid: string): void {
    queueMicrotask(() => {
      for (const listener of this.listeners) listener(uid);
    });
  }
}

export interface FakeProviderOptions {
  /** Shared state; give two providers the same backend to simulate a kubelet restart. */
  backend?: FakeBackend;
  /** The clock for every timestamp (default: the real one). */
  now?: () => Date;
  /** When set, image names are resolved as the Docker provider does (e.g. busybox -> REGISTRY/busybox:latest). */
  imageRegistry?: string;
  /** Images that are neither on the node nor in any registry: starts fail with ErrImagePull (ErrImageNeverPull under Never). */
  missingImages?: string[];
  /** Images not on the node that a pull fetches (reported in ActionResult.pulled); all others are on the node already. */
  pullableImages?: string[];
  info?: Partial<RuntimeInfo>;
  /** Keep every call in `calls` (default true, for assertions); long-running fake nodes turn it off so memory stays flat. */
  recordCalls?: boolean;
}

export interface FakeCall {
  method: 'createPod' | 'updatePod' | 'deletePod' | 'exec' | 'logs' | 'stats';
  uid: string;
  action?: ContainerAction;
  container?: string;
  command?: string[];
  /** deletePod: the grace period asked for, so tests can check a graceful delete honoured the pod's. */
  gracePeriodSeconds?: number;
}

type ExecScript = ExecResult | ((command: string[]) => ExecResult);

export class FakeProvider implements PodProvider {
  readonly backend: FakeBackend;
  /** Every mutating or container-level call, in order, for assertions. */
  readonly calls: FakeCall[] = [];
  readonly #o: FakeProviderOptions;
  readonly #now: () => Date;
  readonly #missing: Set<string>;
  readonly #pullable: Set<string>;
  readonly #failures: { match: string; error: ContainerStartError }[] = [];
  readonly #exec = new Map<string, ExecScript>();
  readonly #stats = new Map<string, Omit<ContainerStats, 'name'>>();
  /** The usage annotation of each pod as last given to createPod or updatePod. */
  readonly #usageAnnotations = new Map<string, string>();

  constructor(options: FakeProviderOptions = {}) {
    this.#o = options;
    this.backend = options.backend ?? new FakeBackend();
    this.#now = options.now ?? (() => new Date());
    this.#missing = new Set((options.missingImages ?? []).map((i) => this.#image(i)));
    this.#pullable = new Set((options.pullableImages ?? []).map((i) => this.#image(i)));
  }

  // ---- Test controls ---------------------------------------------------------------------------

  /** The container's current instance exits on its own, as if its process ended (reason: Completed/Error unless given, e.g. OOMKilled). */
  exitContainer(uid: string, name: string, options: { exitCode: number; reason?: string; message?: string }): void {
    const instance = this.#current(uid, name);
    if (instance?.state !== 'running') throw new Error(`fake: container ${name} of pod ${uid} is not running`);
    this.#finish(instance, options.exitCode, options.reason, options.message);
    this.backend.notify(uid);
  }

  /** The next start of a container of this name, or of this image, fails with the error (once). */
  failNextStart(match: string, error: ContainerStartError): void {
    this.#failures.push({ match, error });
  }

  /** What exec in the container answers (any pod unless uid is given); a function sees the command. */
  setExecResult(options: { container: string; uid?: string; result: ExecScript }): void {
    this.#exec.set(`${options.uid ?? '*'}/${options.container}`, options.result);
  }

  /** Appends output to the container's current instance, as its process would print it. */
  appendLog(uid: string, name: string, text: string): void {
    const instance = this.#current(uid, name);
    if (!instance) throw new Error(`fake: container ${name} of pod ${uid} has not been started`);
    instance.log.push({ at: this.#now().toISOString(), text });
    for (const f of instance.followers) f.write(text);
  }

  /** What stats reports for the container (default: zero use). */
  setStats(options: { container: string; uid?: string; cpuCores: number; memoryBytes: number }): void {
    this.#stats.set(`${options.uid ?? '*'}/${options.container}`, { cpuCores: options.cpuCores, memoryBytes: options.memoryBytes });
  }

  // ---- PodProvider -----------------------------------------------------------------------------

  async createPod(pod: Pod, options: CreatePodOptions): Promise<RuntimePod> {
    const ref = podRefOf(pod);
    this.#record({ method: 'createPod', uid: ref.uid });
    this.#noteUsage(pod);
    const existing = this.backend.pods.get(ref.uid);
    if (existing?.sandbox.state === 'ready') return this.#snapshot(existing);
    const hostPorts = podAllocatedHostPorts(pod);
    for (const other of this.backend.pods.values()) {
      if (other.uid === ref.uid || other.sandbox.state !== 'ready') continue;
      const taken = hostPorts.find((p) => other.hostPorts.includes(p));
      if (taken) throw new ContainerStartError('RunContainerError', portAllocatedMessage(Number(taken.split('/')[0])));
    }
    const at = this.#now().toISOString();
    const fp: FakePod = {
      ...ref,
      sandbox: { id: this.backend.nextID(), state: 'ready', ip: pod.spec.hostNetwork ? undefined : this.#ip(options.podCIDR), createdAt: at },
      hostPorts,
      instances: existing?.instances ?? [],
    };
    if (!fp.sandbox.ip) delete fp.sandbox.ip;
    this.backend.pods.set(ref.uid, fp);
    return this.#snapshot(fp);
  }

  async updatePod(pod: Pod, action: ContainerAction): Promise<ActionResult> {
    const ref = podRefOf(pod);
    this.#record({ method: 'updatePod', uid: ref.uid, action });
    this.#noteUsage(pod);
    if (action.type === 'kill') {
      const instance = this.#current(ref.uid, action.container);
      if (instance?.state === 'running') {
        this.#finish(instance, KILLED_EXIT_CODE);
        this.backend.notify(ref.uid);
      }
      return {};
    }
    const spec = findContainerSpec(pod, action.container);
    if (!spec)
      throw new ContainerStartError('CreateContainerConfigError', `container "${action.container}" is not in the spec of pod ${ref.namespace}/${ref.name}`);
    const fp = this.backend.pods.get(ref.uid);
    if (fp?.sandbox.state !== 'ready') throw new ContainerStartError('CreateContainerError', `the sandbox of pod ${ref.namespace}/${ref.name} is not running`);
    const image = this.#image(spec.image);
    const failure = this.#failures.findIndex((f) => f.match === spec.name || f.match === spec.image || f.match === image);
    if (failure >= 0) throw this.#failures.splice(failure, 1)[0].error;

    const policy = spec.imagePullPolicy ?? 'IfNotPresent';
    const present = !this.#missing.has(image) && !this.#pullable.has(image);
    if (policy === 'Never' && !present) {
      throw new ContainerStartError('ErrImageNeverPull', `container image "${image}" is not present on the node and the pull policy is Never`);
    }
    let pulled: ActionResult['pulled'];
    if (!present || policy === 'Always') {
      if (this.#missing.has(image)) throw new ContainerStartError('ErrImagePull', `pulling image "${image}" failed: manifest for ${image} not found`);
      this.#pullable.delete(image);
      pulled = { image, ms: 0 };
    }

    // As Docker: the newest earlier instance stays as `previous` (stopped), older ones and any of this attempt go.
    const others = fp.instances.filter((i) => i.name === action.container && i.attempt !== action.attempt);
    for (const i of others) if (i.state === 'running') this.#finish(i, KILLED_EXIT_CODE);
    const keep = others.at(-1);
    fp.instances = fp.instances.filter((i) => i.name !== action.container || i === keep);
    const at = this.#now().toISOString();
    const instance: FakeInstance = {
      name: action.container,
      id: this.backend.nextID(),
      image,
      imageID: `sha256:${Buffer.from(image).toString('hex').padEnd(64, '0').slice(0, 64)}`,
      state: 'running',
      attempt: action.attempt,
      createdAt: at,
      startedAt: at,
      log: [],
      followers: new Set(),
    };
    fp.instances.push(instance);
    return { containerID: instance.id, ...(pulled ? { pulled } : {}) };
  }

  async deletePod(ref: PodRef, options: { gracePeriodSeconds: number }): Promise<void> {
    this.#record({ method: 'deletePod', uid: ref.uid, gracePeriodSeconds: options.gracePeriodSeconds });
    const fp = this.backend.pods.get(ref.uid);
    this.#usageAnnotations.delete(ref.uid);
    if (!fp) return;
    for (const i of fp.instances) if (i.state === 'running') this.#finish(i, KILLED_EXIT_CODE);
    this.backend.pods.delete(ref.uid);
    this.backend.notify(ref.uid);
  }

  async getPod(uid: string): Promise<RuntimePod | undefined> {
    const fp = this.backend.pods.get(uid);
    return fp ? this.#snapshot(fp) : undefined;
  }

  async listPods(): Promise<RuntimePod[]> {
    return [...this.backend.pods.values()]
      .map((fp) => this.#snapshot(fp))
      .sort((a, b) => a.namespace.localeCompare(b.namespace) || a.name.localeCompare(b.name) || a.uid.localeCompare(b.uid));
  }

  onPodChange(callback: (uid: string) => void): void {
    this.backend.listeners.add(callback);
  }

  async exec(ref: PodRef, container: string, command: string[], _options: ExecOptions = {}): Promise<ExecResult> {
    this.#record({ method: 'exec', uid: ref.uid, container, command });
    if (this.#current(ref.uid, container)?.state !== 'running') throw new Error(`container "${container}" in pod ${ref.namespace}/${ref.name} is not running`);
    const script = this.#exec.get(`${ref.uid}/${container}`) ?? this.#exec.get(`*/${container}`);
    const result = typeof script === 'function' ? script(command) : script;
    return result ? { ...result } : { exitCode: 0, stdout: '', stderr: '' };
  }

  async logs(ref: PodRef, container: string, options: LogOptions): Promise<Readable> {
    this.#record({ method: 'logs', uid: ref.uid, container });
    const fp = this.backend.pods.get(ref.uid);
    const all = (fp?.instances ?? []).filter((i) => i.name === container);
    const instance = options.previous ? all.at(-2) : all.at(-1);
    if (!instance) {
      throw new Error(
        options.previous
          ? `previous terminated container "${container}" in pod "${ref.name}" not found`
          : `container "${container}" in pod "${ref.name}" has not been started`,
      );
    }
    const lines = instance.log.flatMap((entry) =>
      entry.text
        .split(/(?<=\n)/)
        .filter((l) => l)
        .map((text) => ({ at: entry.at, text })),
    );
    const tail = options.tailLines !== undefined ? lines.slice(Math.max(0, lines.length - options.tailLines)) : lines;
    const text = tail.map((l) => (options.timestamps ? `${l.at} ${l.text}` : l.text)).join('');
    if (!options.follow || instance.state !== 'running') return Readable.from([Buffer.from(text)]);
    const out = new PassThrough();
    out.write(text);
    instance.followers.add(out);
    const stop = () => {
      instance.followers.delete(out);
      if (!out.writableEnded) out.end();
    };
    options.signal?.addEventListener('abort', stop, { once: true });
    out.on('close', () => instance.followers.delete(out));
    return out;
  }

  /** Usage comes from the pod's usage annotation (the pod given, else as last seen), then setStats, else zero. */
  async stats(ref: PodRef, apiPod?: Pod): Promise<ContainerStats[]> {
    this.#record({ method: 'stats', uid: ref.uid });
    const pod = await this.getPod(ref.uid);
    const annotation = apiPod ? apiPod.metadata.annotations?.[FAKE_USAGE_ANNOTATION] : this.#usageAnnotations.get(ref.uid);
    const annotated = annotation === undefined ? undefined : parseUsageAnnotation(annotation);
    return (pod?.containers ?? [])
      .filter((c) => c.state === 'running')
      .map((c) => ({
        name: c.name,
        ...(annotated?.get(c.name) ??
          annotated?.get('*') ??
          this.#stats.get(`${ref.uid}/${c.name}`) ??
          this.#stats.get(`*/${c.name}`) ?? { cpuCores: 0, memoryBytes: 0 }),
      }));
  }

  async info(): Promise<RuntimeInfo> {
    return {
      runtimeVersion: 'fake://1.0.0',
      cpuCores: 4,
      memoryBytes: 8 * 1024 ** 3,
      kernelVersion: '6.1.0-fake',
      osImage: 'Fake OS',
      architecture: 'amd64',
      ...this.#o.info,
    };
  }

  // ---- Internals ---------------------------------------------------------------------------------

  #noteUsage(pod: Pod): void {
    const uid = pod.metadata.uid;
    if (!uid) return;
    const annotation = pod.metadata.annotations?.[FAKE_USAGE_ANNOTATION];
    if (annotation === undefined) this.#usageAnnotations.delete(uid);
    else this.#usageAnnotations.set(uid, annotation);
  }

  #record(call: FakeCall): void {
    if (this.#o.recordCalls !== false) this.calls.push(call);
  }

  #image(image: string): string {
    return this.#o.imageRegistry ? resolveImageName(image, this.#o.imageRegistry) : image;
  }

  /** The lowest free address after the gateway (.1), as Docker's IPAM hands them out; addresses of deleted pods are reused. */
  #ip(podCIDR: string | undefined): string {
    // Without a pod subnet, from Docker's default bridge.
    const [base, bits] = (podCIDR ? podNetworkConfig(podCIDR).subnet : '172.17.0.0/16').split('/') as [string, string];
    const network = base.split('.').reduce((acc, o) => acc * 256 + Number(o), 0);
    const size = 2 ** (32 - Number(bits));
    const dotted = (n: number) => [24, 16, 8, 0].map((s) => Math.floor(n / 2 ** s) % 256).join('.');
    const used = new Set<string>();
    for (const fp of this.backend.pods.values()) if (fp.sandbox.ip) used.add(fp.sandbox.ip);
    // .0 is the network, .1 the gateway, the last the broadcast address.
    for (let host = 2; host < size - 1; host++) {
      const ip = dotted(network + host);
      if (!used.has(ip)) return ip;
    }
    throw new ContainerStartError('RunContainerError', `no available IPv4 addresses on the pod network ${podCIDR ?? '172.17.0.0/16'}`);
  }

  #current(uid: string, name: string): FakeInstance | undefined {
    return this.backend.pods
      .get(uid)
      ?.instances.filter((i) => i.name === name)
      .at(-1);
  }

  #finish(instance: FakeInstance, exitCode: number, reason?: string, message?: string): void {
    instance.state = 'exited';
    instance.exitCode = exitCode;
    instance.finishedAt = this.#now().toISOString();
    instance.reason = reason ?? (exitCode === 0 ? 'Completed' : 'Error');
    if (message) instance.message = message;
    for (const f of instance.followers) f.end();
    instance.followers.clear();
  }

  #snapshot(fp: FakePod): RuntimePod {
    const strip = (i: FakeInstance): Omit<RuntimeContainer, 'previous'> => {
      const { log: _log, followers: _followers, ...rest } = i;
      return structuredClone(rest);
    };
    const names = [...new Set(fp.instances.map((i) => i.name))].sort();
    return {
      uid: fp.uid,
      namespace: fp.namespace,
      name: fp.name,
      sandbox: { ...fp.sandbox },
      containers: names.map((name) => {
        const all = fp.instances.filter((i) => i.name === name);
        const current: RuntimeContainer = strip(all.at(-1)!);
        const previous = all.at(-2);
        if (previous) current.previous = strip(previous);
        return current;
      }),
    };
  }
}
