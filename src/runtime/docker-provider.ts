// The Docker pod provider: a pause sandbox per pod holding its namespaces, app containers joined to it, state read back from labels.
import { arch } from 'node:os';
import { closeSync, mkdirSync, openSync, readFileSync, rmSync, statSync, writeFileSync, type Stats } from 'node:fs';
import { dirname, join } from 'node:path';
import { PassThrough, Readable, Writable } from 'node:stream';
import Docker from 'dockerode';
import type { Container, Pod } from '../core/api/pod.js';
import { podNetworkConfig } from '../core/api/ipv4.js';
import {
  appContainerCreateOptions,
  cpuCores,
  demuxDockerBuffer,
  dockerErrorMessage,
  findContainerSpec,
  groupRuntimePods,
  instancesToRemove,
  memoryWorkingSet,
  podDir,
  podRefOf,
  portConflictMessage,
  resolvConfText,
  resolveImageName,
  sandboxCreateOptions,
  checkBridgeName,
  volumeSources,
  type ClusterDnsSettings,
  type CpuSample,
  type DockerCreateOptions,
  type InspectedContainer,
  type VolumeSource,
} from './docker-container-config.js';
import {
  ContainerStartError,
  LABELS,
  type ActionResult,
  type ContainerAction,
  type ContainerStats,
  type CreatePodOptions,
  type ExecOptions,
  type ExecResult,
  type StreamOptions,
  type StreamSession,
  type LogOptions,
  type PodProvider,
  type PodRef,
  type RuntimeInfo,
  type RuntimePod,
} from './provider.js';
import { readImageUserFiles, type ImageFiles } from './image-user-files.js';
import { applyFsGroup } from './volume-ownership.js';

export interface DockerProviderOptions {
  /** unix:///path/to/docker.sock or tcp://host:port (default: DOCKER_HOST, else /var/run/docker.sock). */
  dockerHost?: string;
  /** Labels every container, so several simulated nodes can share one engine. */
  nodeName: string;
  /** The node's pod subnet; without one (here or in createPod's options) pods use Docker's default bridge. */
  podCIDR?: string;
  /** The Docker network, and Linux bridge, that pods attach to (default minik8s0; at most 15 characters). */
  bridgeName?: string;
  /**
   * Docker masquerades pod traffic leaving the bridge (default true). The overlay turns it off: pods
   * reach pods on other nodes with their own addresses, and it masquerades only what leaves the cluster.
   */
  ipMasquerade?: boolean;
  /** emptyDir volumes live under ROOT/pods/<uid>/volumes/<name>. */
  rootDir: string;
  /** Where image names without a registry host are pulled from, e.g. 127.0.0.1:5000. */
  imageRegistry: string;
  /** The sandbox image (default `${imageRegistry}/minik8s/pause:1.0`). */
  pauseImage?: string;
  /** The cluster DNS pods get as nameserver (dnsPolicy ClusterFirst); without it they keep the node's resolvers. */
  clusterDNS?: ClusterDnsSettings;
  log?: (message: string) => void;
  /** Aborting it does what close() does: stops following Docker's events. */
  signal?: AbortSignal;
}

export const DEFAULT_BRIDGE_NAME = 'minik8s0';
const DEFAULT_BRIDGE_NETWORK = 'bridge';
const MASQUERADE_OPTION = 'com.docker.network.bridge.enable_ip_masquerade';
const EVENT_RETRY_MS = 1000;

/** Dockerode's connection options for a DOCKER_HOST-style address. */
export function dockerConnectOptions(host: string | undefined): Docker.DockerOptions {
  if (!host) return { socketPath: '/var/run/docker.sock' };
  if (host.startsWith('unix://')) return { socketPath: host.slice('unix://'.length) };
  if (host.startsWith('/')) return { socketPath: host };
  const m = /^(?:tcp|http):\/\/([^:/]+)(?::(\d+))?\/?$/.exec(host);
  if (!m) throw new Error(`invalid Docker host "${host}": expected unix:///path/to/docker.sock or tcp://HOST:PORT`);
  return { host: m[1], port: Number(m[2] ?? 2375), protocol: 'http' };
}

/** Node's names for CPU architectures, as Go (and so Kubernetes) spells them. */
function goArch(a: string): string {
  return ({ x64: 'amd64', ia32: '386', arm64: 'arm64', arm: 'arm', ppc64: 'ppc64le', s390x: 's390x' } as Record<string, string>)[a] ?? a;
}

function statusCode(err: unknown): number | undefined {
  return (err as { statusCode?: number })?.statusCode;
}

/** Ignores "not there" (404) and "already in that state" (304), the answers an idempotent stop or remove may get. */
async function tolerateGone(p: Promise<unknown>): Promise<void> {
  try {
    await p;
  } catch (err) {
    const code = statusCode(err);
    if (code !== 404 && code !== 304 && code !== 409) throw err;
  }
}

/** Makes emptyDir and subPath directories and, for a container start, checks hostPath types, as the kubelet's volume manager does. */
export function prepareVolumes(pod: Pod, container: Pick<Container, 'volumeMounts'> | undefined, sources: readonly VolumeSource[]): void {
  for (const vol of pod.spec.volumes ?? []) {
    const source = sources.find((s) => s.name === vol.name);
    if (!source) continue;
    if (vol.emptyDir) mkdirSync(source.hostPath, { recursive: true });
    const fsGroup = pod.spec.securityContext?.fsGroup;
    // The pod's own volumes take the fsGroup; a hostPath is the node's and keeps its owner, as in Kubernetes.
    if (fsGroup !== undefined && !vol.hostPath && statSync(source.hostPath, { throwIfNoEntry: false })?.isDirectory())
      applyFsGroup(source.hostPath, { fsGroup, readOnly: source.readOnly, policy: pod.spec.securityContext?.fsGroupChangePolicy });
    const type = vol.hostPath?.type ?? '';
    // The sandbox needs only the pod's own dirs; hostPath checks wait for a container that mounts them.
    if (!container || !vol.hostPath || type === '') continue;
    const path = source.hostPath;
    if (type === 'DirectoryOrCreate') mkdirSync(path, { recursive: true });
    else if (type === 'FileOrCreate') {
      mkdirSync(dirname(path), { recursive: true });
      closeSync(openSync(path, 'a'));
    }
    let st: Stats | undefined;
    try {
      st = statSync(path);
    } catch {
      st = undefined;
    }
    const checks: Record<string, [(s: Stats) => boolean, string]> = {
      DirectoryOrCreate: [(s) => s.isDirectory(), 'a directory'],
      Directory: [(s) => s.isDirectory(), 'a directory'],
      FileOrCreate: [(s) => s.isFile(), 'a file'],
      File: [(s) => s.isFile(), 'a file'],
      Socket: [(s) => s.isSocket(), 'a socket'],
      CharDevice: [(s) => s.isCharacterDevice(), 'a character device'],
      BlockDevice: [(s) => s.isBlockDevice(), 'a block device'],
    };
    const [ok, what] = checks[type];
    if (!st) throw new Error(`hostPath type check failed: ${path} does not exist (volume "${vol.name}" must be ${what})`);
    if (!ok(st)) throw new Error(`hostPath type check failed: ${path} is not ${what} (volume "${vol.name}")`);
  }
  for (const m of container?.volumeMounts ?? []) {
    const source = sources.find((s) => s.name === m.name);
    if (source && m.subPath) mkdirSync(join(source.hostPath, m.subPath), { recursive: true });
  }
}

export class DockerProvider implements PodProvider {
  readonly #o: DockerProviderOptions;
  readonly #docker: Docker;
  readonly #pauseImage: string;
  readonly #bridgeName: string;
  readonly #log: (message: string) => void;
  readonly #callbacks: ((uid: string) => void)[] = [];
  readonly #networks = new Map<string, Promise<string>>();
  readonly #pulls = new Map<string, Promise<ActionResult['pulled']>>();
  readonly #cpuSamples = new Map<string, CpuSample>();
  readonly #imageUserFiles = new Map<string, Promise<ImageFiles>>();
  #events: AbortController | undefined;
  #closed = false;
  #resolvConfWarned = false;
  #eventsDone: Promise<void> | undefined;

  constructor(options: DockerProviderOptions) {
    this.#o = options;
    this.#docker = new Docker(dockerConnectOptions(options.dockerHost ?? process.env.DOCKER_HOST));
    this.#pauseImage = resolveImageName(options.pauseImage ?? `${options.imageRegistry}/minik8s/pause:1.0`, options.imageRegistry);
    this.#bridgeName = options.bridgeName ?? DEFAULT_BRIDGE_NAME;
    checkBridgeName(this.#bridgeName);
    this.#log = options.log ?? (() => {});
    options.signal?.addEventListener('abort', () => void this.close(), { once: true });
  }

  /** Stops following Docker's events (started by the first onPodChange); containers keep running. */
  async close(): Promise<void> {
    this.#closed = true;
    this.#events?.abort();
    await this.#eventsDone;
  }

  // ---- Pods ----------------------------------------------------------------------------------

  async createPod(pod: Pod, options: CreatePodOptions): Promise<RuntimePod> {
    const ref = podRefOf(pod);
    const existing = (await this.#inspectAll({ uid: ref.uid })).filter((c) => c.Config.Labels?.[LABELS.role] === 'sandbox');
    if (existing.some((c) => c.State.Status === 'running')) return (await this.getPod(ref.uid))!;
    // A dead sandbox cannot be revived with its namespaces: make a new one under the same name.
    await Promise.all(existing.map((c) => tolerateGone(this.#docker.getContainer(c.Id).remove({ force: true }))));

    const podCIDR = options.podCIDR ?? this.#o.podCIDR;
    const network = pod.spec.hostNetwork ? 'host' : podCIDR ? await this.#ensureNetwork(podCIDR) : DEFAULT_BRIDGE_NETWORK;
    await this.#ensureImage(this.#pauseImage, 'IfNotPresent');
    try {
      prepareVolumes(pod, undefined, volumeSources(pod, this.#o.rootDir));
    } catch (err) {
      throw new ContainerStartError('CreateContainerConfigError', (err as Error).message, { cause: err });
    }

    const body = sandboxCreateOptions({ pod, nodeName: this.#o.nodeName, image: this.#pauseImage, network, clusterDNS: this.#o.clusterDNS });
    let container: Docker.Container;
    try {
      container = await this.#docker.createContainer(body);
    } catch (err) {
      // Another sync of the same pod made it first: that one is as good as ours.
      if (statusCode(err) === 409) return (await this.getPod(ref.uid))!;
      throw new ContainerStartError('CreateContainerError', `creating the pod sandbox failed: ${dockerErrorMessage(err)}`, { cause: err });
    }
    try {
      await container.start();
    } catch (err) {
      await tolerateGone(container.remove({ force: true }));
      const message = dockerErrorMessage(err);
      throw new ContainerStartError('RunContainerError', portConflictMessage(message) ?? `starting the pod sandbox failed: ${message}`, { cause: err });
    }
    this.#log(`docker: started sandbox of pod ${ref.namespace}/${ref.name} (${container.id.slice(0, 12)})`);
    if (network !== 'host' && network !== DEFAULT_BRIDGE_NETWORK) await this.#writeResolvConf(container, resolvConfText(body.HostConfig));
    return (await this.getPod(ref.uid))!;
  }

  async updatePod(pod: Pod, action: ContainerAction): Promise<ActionResult> {
    if (action.type === 'start') return this.#start(pod, action.container, action.attempt);
    await this.#kill(pod, action.container, action.gracePeriodSeconds);
    return {};
  }

  async #start(pod: Pod, name: string, attempt: number): Promise<ActionResult> {
    const ref = podRefOf(pod);
    const spec = findContainerSpec(pod, name);
    if (!spec) throw new ContainerStartError('CreateContainerConfigError', `container "${name}" is not in the spec of pod ${ref.namespace}/${ref.name}`);
    const all = await this.#inspectAll({ uid: ref.uid });
    const sandbox = all.find((c) => c.Config.Labels?.[LABELS.role] === 'sandbox' && c.State.Status === 'running');
    if (!sandbox) throw new ContainerStartError('CreateContainerError', `the sandbox of pod ${ref.namespace}/${ref.name} is not running`);
    const podIP = groupRuntimePods([sandbox])[0]?.sandbox.ip;

    const image = resolveImageName(spec.image, this.#o.imageRegistry);
    const pulled = await this.#ensureImage(image, spec.imagePullPolicy ?? 'IfNotPresent');
    const inspected = await this.#docker.getImage(image).inspect();
    const imageConfig = (inspected.Config ?? {}) as { Entrypoint?: string[] | null; Cmd?: string[] | null; User?: string | null };
    const imageFiles = await this.#imageFiles(image, inspected.Id);

    let body: DockerCreateOptions;
    try {
      const sources = volumeSources(pod, this.#o.rootDir);
      prepareVolumes(pod, spec, sources);
      body = appContainerCreateOptions({
        pod,
        container: spec,
        attempt,
        nodeName: this.#o.nodeName,
        sandboxID: sandbox.Id,
        podIP,
        image,
        imageConfig,
        imageFiles,
        readSeccompProfile: (path) => this.#seccompProfile(path),
        volumes: sources,
      });
    } catch (err) {
      throw new ContainerStartError('CreateContainerConfigError', (err as Error).message, { cause: err });
    }

    // The newest earlier instance stays (stopped) as `previous`; older ones, and any of this very name, go.
    const instances = all.filter((c) => c.Config.Labels?.[LABELS.role] === 'app' && c.Config.Labels?.[LABELS.container] === name);
    const sameName = instances.filter((c) => Number(c.Config.Labels?.[LABELS.attempt]) === attempt);
    const kept = instances.filter((c) => !sameName.includes(c));
    const grace = pod.spec.terminationGracePeriodSeconds ?? 30;
    await Promise.all(kept.filter((c) => c.State.Status === 'running').map((c) => tolerateGone(this.#docker.getContainer(c.Id).stop({ t: grace }))));
    await Promise.all([...sameName, ...instancesToRemove(kept)].map((c) => this.#remove(c.Id)));

    let container: Docker.Container;
    try {
      container = await this.#docker.createContainer(body);
    } catch (err) {
      throw new ContainerStartError('CreateContainerError', dockerErrorMessage(err), { cause: err });
    }
    try {
      await container.start();
    } catch (err) {
      // Leaving it in "created" would hide the failure behind a state the kubelet cannot act on.
      await this.#remove(container.id);
      throw new ContainerStartError('RunContainerError', startFailureMessage(dockerErrorMessage(err)), { cause: err });
    }
    return { containerID: container.id, ...(pulled ? { pulled } : {}) };
  }

  /** The image's /etc/passwd and /etc/group, read once per image id (images do not change under an id). */
  #imageFiles(image: string, id: string): Promise<ImageFiles> {
    let files = this.#imageUserFiles.get(id);
    if (!files) {
      files = readImageUserFiles(this.#docker, image);
      this.#imageUserFiles.set(id, files);
      files.catch(() => this.#imageUserFiles.delete(id));
    }
    return files;
  }

  /** A Localhost seccomp profile: ROOT/seccomp/<localhostProfile>, as the kubelet's seccomp directory (the API refuses '..'). */
  #seccompProfile(localhostProfile: string): string {
    const path = join(this.#o.rootDir, 'seccomp', localhostProfile);
    try {
      return readFileSync(path, 'utf8');
    } catch {
      throw new Error(`failed to load seccomp profile "${localhostProfile}": ${path} cannot be read on node ${this.#o.nodeName}`);
    }
  }

  async #kill(pod: Pod, name: string, gracePeriodSeconds: number): Promise<void> {
    const ref = podRefOf(pod);
    const current = (await this.getPod(ref.uid))?.containers.find((c) => c.name === name);
    if (current?.state === 'running') await tolerateGone(this.#docker.getContainer(current.id).stop({ t: Math.max(0, gracePeriodSeconds) }));
  }

  async deletePod(ref: PodRef, options: { gracePeriodSeconds: number }): Promise<void> {
    const all = await this.#inspectAll({ uid: ref.uid });
    const t = Math.max(0, options.gracePeriodSeconds);
    const running = (role: string) => all.filter((c) => c.Config.Labels?.[LABELS.role] === role && c.State.Status === 'running');
    // Apps first, in parallel, so they all get the whole grace period; the sandbox holds their network until they are gone.
    await Promise.all(running('app').map((c) => tolerateGone(this.#docker.getContainer(c.Id).stop({ t }))));
    await Promise.all(running('sandbox').map((c) => tolerateGone(this.#docker.getContainer(c.Id).stop({ t }))));
    await Promise.all(all.map((c) => this.#remove(c.Id)));
    // The uid comes from labels and API objects; refuse anything that could step out of the pods directory.
    if (/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(ref.uid)) rmSync(podDir(this.#o.rootDir, ref.uid), { recursive: true, force: true });
  }

  async getPod(uid: string): Promise<RuntimePod | undefined> {
    return groupRuntimePods(await this.#inspectAll({ uid }))[0];
  }

  async listPods(): Promise<RuntimePod[]> {
    return groupRuntimePods(await this.#inspectAll({}));
  }

  onPodChange(callback: (uid: string) => void): void {
    this.#callbacks.push(callback);
    if (!this.#events && !this.#closed && !this.#o.signal?.aborted) {
      this.#events = new AbortController();
      this.#eventsDone = this.#followEvents(this.#events.signal);
    }
  }

  // ---- Exec, logs, stats, info -----------------------------------------------------------------

  async exec(ref: PodRef, container: string, command: string[], options: ExecOptions = {}): Promise<ExecResult> {
    const id = await this.#runningID(ref, container);
    const exec = await this.#docker
      .getContainer(id)
      .exec({ Cmd: command, AttachStdout: true, AttachStderr: true, AttachStdin: options.stdin !== undefined, Tty: false });
    const stream = await exec.start({ hijack: true, stdin: options.stdin !== undefined });
    const stdout: Buffer[] = [];
    const stderr: Buffer[] = [];
    const sink = (into: Buffer[]) =>
      new Writable({
        write(chunk: Buffer, _enc, done) {
          into.push(chunk);
          done();
        },
      });
    this.#docker.modem.demuxStream(stream, sink(stdout), sink(stderr));
    const ended = new Promise<void>((resolve, reject) => {
      stream.on('end', resolve);
      stream.on('close', resolve);
      stream.on('error', reject);
    });
    if (options.stdin !== undefined) stream.end(options.stdin);
    let timer: NodeJS.Timeout | undefined;
    const timeoutMs = options.timeoutMs;
    // When the command stops its own container (or the container dies under it), Docker may never
    // close the hijacked stream: the exec's own state says it is over, so look at it now and then.
    let watching = true;
    const stopped = (async () => {
      while (watching) {
        await new Promise((resolve) => setTimeout(resolve, 500));
        const state = await exec.inspect().catch(() => undefined);
        if (watching && !state?.Running) {
          // The output that was on its way still comes in a moment.
          await new Promise((resolve) => setTimeout(resolve, 100));
          return;
        }
      }
    })();
    try {
      await Promise.race([
        ended,
        stopped,
        ...(timeoutMs === undefined
          ? []
          : [
              new Promise<never>((_, reject) => {
                timer = setTimeout(() => reject(new Error(`command ${JSON.stringify(command.join(' '))} timed out after ${timeoutMs} ms`)), timeoutMs);
              }),
            ]),
      ]);
    } finally {
      watching = false;
      clearTimeout(timer);
      stream.destroy();
    }
    // The stream can end a moment before Docker records the exit code.
    let info = await exec.inspect();
    for (let i = 0; i < 50 && (info.Running || info.ExitCode === null); i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      info = await exec.inspect();
    }
    return { exitCode: info.ExitCode ?? -1, stdout: Buffer.concat(stdout).toString('utf8'), stderr: Buffer.concat(stderr).toString('utf8') };
  }

  async execStream(ref: PodRef, container: string, command: string[], options: StreamOptions): Promise<StreamSession> {
    const id = await this.#runningID(ref, container);
    const exec = await this.#docker
      .getContainer(id)
      .exec({ Cmd: command, AttachStdin: options.stdin, AttachStdout: true, AttachStderr: true, Tty: options.tty });
    const stream = await exec.start({ hijack: true, stdin: options.stdin, Tty: options.tty });
    const session = this.#session(stream, options, async (size) => {
      await exec.resize({ h: size.height, w: size.width });
    });
    const done = session.ended.then(async () => {
      // The stream can end a moment before Docker records the exit code.
      let info = await exec.inspect();
      for (let i = 0; i < 50 && (info.Running || info.ExitCode === null); i++) {
        await new Promise((resolve) => setTimeout(resolve, 20));
        info = await exec.inspect();
      }
      return info.ExitCode ?? -1;
    });
    return { ...session.parts, done };
  }

  async attachStream(ref: PodRef, container: string, options: StreamOptions): Promise<StreamSession> {
    const id = await this.#runningID(ref, container);
    const c = this.#docker.getContainer(id);
    // Docker knows whether the container has a terminal; its output is then not multiplexed.
    const tty = Boolean((await c.inspect()).Config?.Tty);
    const stream = (await c.attach({ stream: true, stdin: options.stdin, stdout: true, stderr: true, hijack: true })) as NodeJS.ReadWriteStream;
    const session = this.#session(stream, { ...options, tty }, async (size) => {
      await c.resize({ h: size.height, w: size.width });
    });
    const done = session.ended.then(async () => {
      const info = await c.inspect();
      return info.State?.Running ? 0 : (info.State?.ExitCode ?? -1);
    });
    return { ...session.parts, done };
  }

  /** The caller's view of a hijacked Docker stream: demultiplexed output (unless a terminal), stdin whose end half-closes it. */
  #session(
    stream: NodeJS.ReadWriteStream,
    options: StreamOptions,
    resize: (size: { width: number; height: number }) => Promise<void>,
  ): { parts: Omit<StreamSession, 'done'>; ended: Promise<void> } {
    const stdout = new PassThrough();
    const stderr = options.tty ? undefined : new PassThrough();
    if (stderr) this.#docker.modem.demuxStream(stream, stdout, stderr);
    else stream.on('data', (chunk: Buffer) => stdout.write(chunk));
    const ended = new Promise<void>((resolve) => {
      let finished = false;
      const finish = () => {
        if (finished) return;
        finished = true;
        stdout.end();
        stderr?.end();
        resolve();
      };
      stream.on('end', finish);
      stream.on('close', finish);
      stream.on('error', finish);
    });
    const socket = stream as unknown as { end(): void; destroy(): void; write(chunk: Buffer, cb: (err?: Error | null) => void): boolean };
    const stdin = options.stdin
      ? new Writable({
          write(chunk: Buffer, _enc, callback) {
            socket.write(chunk, (err) => callback(err ?? null));
          },
          // Half-closes the hijacked connection: Docker then closes the process's stdin.
          final(callback) {
            socket.end();
            callback();
          },
        })
      : undefined;
    return {
      parts: { stdin, stdout, stderr, resize, close: () => socket.destroy() },
      ended,
    };
  }

  async logs(ref: PodRef, container: string, options: LogOptions): Promise<Readable> {
    const current = (await this.getPod(ref.uid))?.containers.find((c) => c.name === container);
    const instance = options.previous ? current?.previous : current;
    if (!instance) {
      throw new Error(
        options.previous
          ? `previous terminated container "${container}" in pod "${ref.name}" not found`
          : `container "${container}" in pod "${ref.name}" has not been started`,
      );
    }
    const query = {
      stdout: true,
      stderr: true,
      timestamps: options.timestamps ?? false,
      ...(options.tailLines !== undefined ? { tail: options.tailLines } : {}),
    };
    const c = this.#docker.getContainer(instance.id);
    if (!options.follow) {
      const buffer = await c.logs({ ...query, follow: false });
      return Readable.from([demuxDockerBuffer(Buffer.isBuffer(buffer) ? buffer : Buffer.from(buffer)).all]);
    }
    const source = (await c.logs({ ...query, follow: true })) as unknown as NodeJS.ReadableStream & { destroy(): void };
    const out = new PassThrough();
    this.#docker.modem.demuxStream(source, out, out);
    const stop = () => {
      source.destroy();
      if (!out.writableEnded) out.end();
    };
    source.on('end', stop);
    source.on('error', (err) => out.destroy(err));
    out.on('close', () => source.destroy());
    options.signal?.addEventListener('abort', stop, { once: true });
    if (options.signal?.aborted) stop();
    return out;
  }

  async stats(ref: PodRef): Promise<ContainerStats[]> {
    const pod = await this.getPod(ref.uid);
    const running = (pod?.containers ?? []).filter((c) => c.state === 'running');
    return Promise.all(
      running.map(async (c): Promise<ContainerStats> => {
        const s = (await this.#docker.getContainer(c.id).stats({ stream: false, 'one-shot': true } as { stream: false })) as unknown as {
          read: string;
          cpu_stats?: { cpu_usage?: { total_usage?: number } };
          memory_stats?: { usage?: number; stats?: Record<string, number> };
        };
        const sample: CpuSample = { usageNs: s.cpu_stats?.cpu_usage?.total_usage ?? 0, atMs: Date.parse(s.read) || Date.now() };
        const cores = cpuCores(sample, this.#cpuSamples.get(c.id), c.startedAt ? Date.parse(c.startedAt) : undefined);
        this.#cpuSamples.set(c.id, sample);
        return { name: c.name, cpuCores: cores, memoryBytes: memoryWorkingSet(s.memory_stats) };
      }),
    );
  }

  async info(): Promise<RuntimeInfo> {
    const [version, info] = await Promise.all([this.#docker.version(), this.#docker.info()]);
    return {
      runtimeVersion: `docker://${version.Version}`,
      cpuCores: info.NCPU,
      memoryBytes: info.MemTotal,
      kernelVersion: info.KernelVersion,
      osImage: info.OperatingSystem,
      architecture: goArch(arch()),
    };
  }

  // ---- Internals ------------------------------------------------------------------------------

  /** This node's containers (of one pod, given a uid), inspected; ones removed meanwhile are left out. */
  async #inspectAll(filter: { uid?: string }): Promise<InspectedContainer[]> {
    const label = [`${LABELS.managed}=true`, `${LABELS.node}=${this.#o.nodeName}`];
    if (filter.uid !== undefined) label.push(`${LABELS.podUid}=${filter.uid}`);
    const list = await this.#docker.listContainers({ all: true, filters: { label } });
    const inspected = await Promise.all(
      list.map(async (c) => {
        try {
          return (await this.#docker.getContainer(c.Id).inspect()) as unknown as InspectedContainer;
        } catch (err) {
          if (statusCode(err) === 404) return undefined;
          throw err;
        }
      }),
    );
    return inspected.filter((c): c is InspectedContainer => c !== undefined);
  }

  async #runningID(ref: PodRef, container: string): Promise<string> {
    const current = (await this.getPod(ref.uid))?.containers.find((c) => c.name === container);
    if (current?.state !== 'running') throw new Error(`container "${container}" in pod ${ref.namespace}/${ref.name} is not running`);
    return current.id;
  }

  async #remove(id: string): Promise<void> {
    this.#cpuSamples.delete(id);
    await tolerateGone(this.#docker.getContainer(id).remove({ force: true, v: true }));
  }

  /** Pulls per the policy; resolves with the pull's duration when one happened. */
  async #ensureImage(image: string, policy: 'Always' | 'IfNotPresent' | 'Never'): Promise<ActionResult['pulled']> {
    let present = true;
    try {
      await this.#docker.getImage(image).inspect();
    } catch (err) {
      if (statusCode(err) !== 404) throw err;
      present = false;
    }
    if (policy === 'Never' && !present) {
      throw new ContainerStartError('ErrImageNeverPull', `container image "${image}" is not present on the node and the pull policy is Never`);
    }
    if (present && policy !== 'Always') return undefined;
    let pull = this.#pulls.get(image);
    if (!pull) {
      pull = this.#pull(image).finally(() => this.#pulls.delete(image));
      this.#pulls.set(image, pull);
    }
    return pull;
  }

  async #pull(image: string): Promise<ActionResult['pulled']> {
    const started = Date.now();
    try {
      const stream = await this.#docker.pull(image);
      await new Promise<void>((resolve, reject) => {
        this.#docker.modem.followProgress(stream, (err: unknown, events: { error?: string; errorDetail?: { message?: string } }[]) => {
          const failed = events?.find((e) => e.error);
          if (err) reject(err);
          else if (failed) reject(new Error(failed.errorDetail?.message ?? failed.error));
          else resolve();
        });
      });
    } catch (err) {
      throw new ContainerStartError('ErrImagePull', `pulling image "${image}" failed: ${dockerErrorMessage(err)}`, { cause: err });
    }
    const ms = Date.now() - started;
    this.#log(`docker: pulled ${image} in ${ms} ms`);
    return { image, ms };
  }

  /**
   * Puts the pod's own resolv.conf in place of Docker's (which names its embedded resolver) before any app container
   * starts; those share the sandbox's file. Best effort: an engine whose files this process cannot reach (a remote
   * Docker) keeps its embedded resolver, which forwards to the same nameservers.
   */
  async #writeResolvConf(container: Docker.Container, text: string | undefined): Promise<void> {
    if (!text) return;
    try {
      const path = (await container.inspect()).ResolvConfPath;
      if (!path) throw new Error('the engine names no resolv.conf for the sandbox');
      writeFileSync(path, text);
    } catch (err) {
      if (!this.#resolvConfWarned) this.#log(`docker: pods keep Docker's embedded resolver (cannot write their resolv.conf: ${(err as Error).message})`);
      this.#resolvConfWarned = true;
    }
  }

  /**
   * Makes the node's pod network now rather than at the first pod, and says its gateway address: the bridge holds that
   * address from then on, so services on the node (the cluster DNS) can listen on it.
   */
  async ensurePodNetwork(): Promise<{ name: string; gateway: string }> {
    const podCIDR = this.#o.podCIDR;
    if (!podCIDR) throw new Error("this provider has no podCIDR: pods use Docker's default bridge");
    const name = await this.#ensureNetwork(podCIDR);
    return { name, gateway: podNetworkConfig(podCIDR).gateway };
  }

  /** The node's pod network, created on first use; a network of that name on another subnet is a setup error the user must see. */
  #ensureNetwork(podCIDR: string): Promise<string> {
    let pending = this.#networks.get(podCIDR);
    if (!pending) {
      pending = this.#createNetwork(podCIDR);
      pending.catch(() => this.#networks.delete(podCIDR));
      this.#networks.set(podCIDR, pending);
    }
    return pending;
  }

  async #createNetwork(podCIDR: string): Promise<string> {
    const name = this.#bridgeName;
    let config: { subnet: string; gateway: string };
    try {
      config = podNetworkConfig(podCIDR);
    } catch (err) {
      throw new ContainerStartError('RunContainerError', (err as Error).message);
    }
    const masquerade = this.#o.ipMasquerade ?? true;
    const check = async (): Promise<boolean> => {
      let net: { IPAM?: { Config?: { Subnet?: string }[] }; Options?: Record<string, string>; Containers?: Record<string, unknown> };
      try {
        net = await this.#docker.getNetwork(name).inspect();
      } catch (err) {
        if (statusCode(err) === 404) return false;
        throw err;
      }
      const subnets = (net.IPAM?.Config ?? []).map((c) => c.Subnet);
      if (!subnets.includes(config.subnet)) {
        throw new ContainerStartError(
          'RunContainerError',
          `Docker network ${name} has subnet ${subnets.join(', ') || '(none)'}, not this node's podCIDR ${config.subnet}: remove it (docker network rm ${name}) or give the node another bridge name`,
        );
      }
      // Docker cannot change masquerading on a network: one made by an earlier start with the other setting is made again while no container uses it.
      if ((net.Options?.[MASQUERADE_OPTION] ?? 'true') !== String(masquerade)) {
        const inUse = Object.keys(net.Containers ?? {}).length;
        if (inUse === 0) {
          try {
            await this.#docker.getNetwork(name).remove();
            this.#log(`docker: removed network ${name} to make it again with ip masquerade ${masquerade ? 'on' : 'off'}`);
            return false;
          } catch (err) {
            if (statusCode(err) === 404) return false;
            this.#log(`docker: cannot remove network ${name} to change its ip masquerade: ${dockerErrorMessage(err)}`);
          }
        } else {
          this.#log(
            `docker: network ${name} has ip masquerade ${masquerade ? 'off' : 'on'} and ${inUse} containers on it: kept as it is until they are gone${masquerade ? '' : " (meanwhile pods reach other nodes' pods with this node's overlay address)"}`,
          );
        }
      }
      return true;
    };
    if (await check()) return name;
    try {
      await this.#docker.createNetwork({
        Name: name,
        Driver: 'bridge',
        CheckDuplicate: true,
        IPAM: { Driver: 'default', Config: [{ Subnet: config.subnet, Gateway: config.gateway }] },
        Options: { 'com.docker.network.bridge.name': name, [MASQUERADE_OPTION]: String(masquerade) },
        Labels: { [LABELS.managed]: 'true', [LABELS.node]: this.#o.nodeName },
      });
      this.#log(`docker: created network ${name} (${config.subnet})`);
    } catch (err) {
      // Made meanwhile by another provider on this engine: fine if it has our subnet.
      if (statusCode(err) === 409 && (await check())) return name;
      throw new ContainerStartError('RunContainerError', `creating Docker network ${name} (${config.subnet}) failed: ${dockerErrorMessage(err)}`, {
        cause: err,
      });
    }
    return name;
  }

  /** Follows die/oom/destroy events of this node's containers, reconnecting when the stream ends, until aborted. */
  async #followEvents(signal: AbortSignal): Promise<void> {
    let since: number | undefined;
    while (!signal.aborted) {
      try {
        const stream = (await this.#docker.getEvents({
          ...(since !== undefined ? { since } : {}),
          filters: { type: ['container'], event: ['die', 'oom', 'destroy'], label: [`${LABELS.managed}=true`, `${LABELS.node}=${this.#o.nodeName}`] },
        })) as NodeJS.ReadableStream & { destroy(): void };
        await new Promise<void>((resolve, reject) => {
          let buffered = '';
          const onAbort = () => {
            stream.destroy();
            resolve();
          };
          signal.addEventListener('abort', onAbort, { once: true });
          const done = (err?: Error) => {
            signal.removeEventListener('abort', onAbort);
            if (err) reject(err);
            else resolve();
          };
          stream.on('data', (chunk: Buffer) => {
            buffered += chunk.toString('utf8');
            for (let nl = buffered.indexOf('\n'); nl >= 0; nl = buffered.indexOf('\n')) {
              const line = buffered.slice(0, nl).trim();
              buffered = buffered.slice(nl + 1);
              if (!line) continue;
              try {
                const event = JSON.parse(line) as { time?: number; Actor?: { Attributes?: Record<string, string> } };
                if (event.time) since = event.time;
                const uid = event.Actor?.Attributes?.[LABELS.podUid];
                if (uid) for (const cb of this.#callbacks) cb(uid);
              } catch {
                // A line we cannot read tells us nothing; the next resync covers it.
              }
            }
          });
          stream.on('end', () => done());
          stream.on('close', () => done());
          stream.on('error', (err: Error) => done(err));
        });
      } catch (err) {
        if (!signal.aborted) this.#log(`docker: following events failed: ${dockerErrorMessage(err)}; retrying`);
      }
      if (signal.aborted) break;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, EVENT_RETRY_MS);
        signal.addEventListener(
          'abort',
          () => {
            clearTimeout(timer);
            resolve();
          },
          { once: true },
        );
      });
    }
  }
}

/** runc's start failures are long chains; the end says what went wrong (e.g. `exec: "x": executable file not found in $PATH`). */
export function startFailureMessage(message: string): string {
  const m = /starting container process caused:?\s*(.*?)(?::\s*unknown)?$/.exec(message);
  return m ? m[1] : message;
}
