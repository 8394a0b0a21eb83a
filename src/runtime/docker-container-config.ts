// Pure translation from Pods to Docker: image names, container names and labels, create options, runtime state, stats.
import { posix } from 'node:path';
import { parseQuantity } from '../core/api/quantity.js';
import type { Container, Pod } from '../core/api/pod.js';
import { getOrCreate } from '../core/get-or-create.js';
import {
  checkRunAsNonRoot,
  dockerSecurityOptions,
  dockerSysctls,
  effectiveIdentity,
  formatIdentity,
  parseIdentity,
  USER_LABEL,
  type ImageUser,
  type ReadSeccompProfile,
} from './security-context.js';
import { LABELS, type ContainerRunState, type PodRef, type RuntimeContainer, type RuntimePod, type SandboxState } from './provider.js';

// ---- Names and labels --------------------------------------------------------------------

/**
 * Docker's reading of a reference: the first path part is a registry host when it has a '.'
 * or ':' or is `localhost`; anything else lives in our registry. No tag means `:latest`.
 */
export function resolveImageName(image: string, registry: string): string {
  const [name, digest] = splitOnce(image, '@');
  const slash = name.indexOf('/');
  const first = slash >= 0 ? name.slice(0, slash) : '';
  const hasHost = slash >= 0 && (first.includes('.') || first.includes(':') || first === 'localhost');
  const withHost = hasHost ? name : `${registry}/${name}`;
  if (digest !== undefined) return `${withHost}@${digest}`;
  const lastSlash = withHost.lastIndexOf('/');
  return withHost.indexOf(':', lastSlash + 1) >= 0 ? withHost : `${withHost}:latest`;
}

function splitOnce(s: string, sep: string): [string, string | undefined] {
  const i = s.indexOf(sep);
  return i < 0 ? [s, undefined] : [s.slice(0, i), s.slice(i + 1)];
}

/** The kubelet's (dockershim's) naming, so `docker ps` reads the same as on a real node. */
export function appContainerName(ref: PodRef, container: string, attempt: number): string {
  return `k8s_${container}_${ref.name}_${ref.namespace}_${ref.uid}_${attempt}`;
}

export function sandboxContainerName(ref: PodRef): string {
  return `k8s_POD_${ref.name}_${ref.namespace}_${ref.uid}_0`;
}

export function podLabels(ref: PodRef, nodeName: string): Record<string, string> {
  return {
    [LABELS.managed]: 'true',
    [LABELS.podUid]: ref.uid,
    [LABELS.podName]: ref.name,
    [LABELS.podNamespace]: ref.namespace,
    [LABELS.node]: nodeName,
  };
}

export function sandboxLabels(ref: PodRef, nodeName: string): Record<string, string> {
  return { ...podLabels(ref, nodeName), [LABELS.role]: 'sandbox', [LABELS.container]: 'POD', [LABELS.attempt]: '0' };
}

export function appLabels(ref: PodRef, nodeName: string, container: string, attempt: number): Record<string, string> {
  return { ...podLabels(ref, nodeName), [LABELS.role]: 'app', [LABELS.container]: container, [LABELS.attempt]: String(attempt) };
}

export function podRefOf(pod: Pod): PodRef {
  return { uid: pod.metadata.uid!, namespace: pod.metadata.namespace ?? 'default', name: pod.metadata.name! };
}

/** A container of the pod by name, init containers included. */
export function findContainerSpec(pod: Pod, name: string): Container | undefined {
  return pod.spec.containers.find((c) => c.name === name) ?? pod.spec.initContainers?.find((c) => c.name === name);
}

// ---- Network ------------------------------------------------------------------------------

/** Linux limits interface names to 15 characters; Docker fails late and obscurely on longer ones. */
export function checkBridgeName(name: string): void {
  if (!/^[a-zA-Z0-9][a-zA-Z0-9_.-]{0,14}$/.test(name)) throw new Error(`invalid bridge name "${name}": use 1 to 15 letters, digits, '.', '_' or '-'`);
}

// ---- Create options ------------------------------------------------------------------------

/** The parts of Docker's create body we fill; kept structural so this file needs no Docker types. */
export interface DockerCreateOptions {
  name: string;
  Image: string;
  Hostname?: string;
  Entrypoint?: string[];
  Cmd?: string[];
  Env?: string[];
  WorkingDir?: string;
  Labels: Record<string, string>;
  ExposedPorts?: Record<string, object>;
  StopSignal?: string;
  HostConfig: {
    NetworkMode?: string;
    IpcMode?: string;
    PidMode?: string;
    PortBindings?: Record<string, { HostIp?: string; HostPort: string }[]>;
    Binds?: string[];
    Memory?: number;
    MemorySwap?: number;
    NanoCpus?: number;
    CpuShares?: number;
    Dns?: string[];
    DnsSearch?: string[];
    DnsOptions?: string[];
    ExtraHosts?: string[];
    Privileged?: boolean;
    ReadonlyRootfs?: boolean;
    CapAdd?: string[];
    CapDrop?: string[];
    GroupAdd?: string[];
    SecurityOpt?: string[];
    Sysctls?: Record<string, string>;
    RestartPolicy?: { Name: string };
  };
  User?: string;
  NetworkingConfig?: { EndpointsConfig: Record<string, object> };
}

/** hostPort mappings of every container, published on the sandbox that owns the network namespace. */
export function portBindings(pod: Pod): { exposed: Record<string, object>; bindings: Record<string, { HostIp?: string; HostPort: string }[]> } {
  const exposed: Record<string, object> = {};
  const bindings: Record<string, { HostIp?: string; HostPort: string }[]> = {};
  for (const c of [...(pod.spec.initContainers ?? []), ...pod.spec.containers]) {
    for (const p of c.ports ?? []) {
      if (!p.hostPort) continue;
      const key = `${p.containerPort}/${(p.protocol ?? 'TCP').toLowerCase()}`;
      exposed[key] = {};
      bindings[key] ??= [];
      bindings[key].push({ ...(p.hostIP ? { HostIp: p.hostIP } : {}), HostPort: String(p.hostPort) });
    }
  }
  return { exposed, bindings };
}

/** The host ports a pod takes, as PORT/PROTOCOL (none with hostNetwork: the processes bind them themselves). */
export function podAllocatedHostPorts(pod: Pod): string[] {
  if (pod.spec.hostNetwork) return [];
  return Object.values(portBindings(pod).bindings).flatMap((list, i) => {
    const key = Object.keys(portBindings(pod).bindings)[i];
    return list.map((b) => `${b.HostPort}/${key.split('/')[1]}`);
  });
}

/** The cluster DNS a node gives its pods: the nameserver address and the cluster domain. */
export interface ClusterDnsSettings {
  nameserver: string;
  domain: string;
}

/** Kubernetes' limits on a pod's resolv.conf: 3 nameservers (glibc's), 32 search domains. */
const MAX_NAMESERVERS = 3;
const MAX_SEARCHES = 32;

/**
 * A pod's resolv.conf as Docker's Dns, DnsSearch and DnsOptions, by its dnsPolicy: ClusterFirst (the default) gives the
 * cluster nameserver, the namespace's search path and ndots:5, and adds spec.dnsConfig's entries (its options override ours
 * by name); Default keeps the node's resolv.conf (Docker's copy) with dnsConfig's entries in place of its parts; None uses
 * dnsConfig alone. ClusterFirst falls back to Default for host-network pods, and everywhere when the node runs no cluster DNS,
 * as the kubelet does.
 */
export function podDnsSettings(
  pod: Pod,
  clusterDNS: ClusterDnsSettings | undefined,
): Pick<DockerCreateOptions['HostConfig'], 'Dns' | 'DnsSearch' | 'DnsOptions'> {
  const config = pod.spec.dnsConfig;
  const policy = pod.spec.dnsPolicy ?? 'ClusterFirst';
  const extraOptions = (config?.options ?? []).map((o) => ({ name: o.name, text: o.value === undefined ? o.name : `${o.name}:${o.value}` }));
  const cluster = clusterDNS && (policy === 'ClusterFirstWithHostNet' || (policy === 'ClusterFirst' && pod.spec.hostNetwork !== true));
  if (!cluster) {
    return {
      ...(config?.nameservers?.length ? { Dns: config.nameservers } : {}),
      ...(config?.searches?.length ? { DnsSearch: config.searches } : {}),
      ...(extraOptions.length ? { DnsOptions: extraOptions.map((o) => o.text) } : {}),
    };
  }
  const namespace = pod.metadata.namespace ?? 'default';
  const nameservers = [...new Set([clusterDNS.nameserver, ...(config?.nameservers ?? [])])].slice(0, MAX_NAMESERVERS);
  const searches = [...new Set([`${namespace}.svc.${clusterDNS.domain}`, `svc.${clusterDNS.domain}`, clusterDNS.domain, ...(config?.searches ?? [])])].slice(
    0,
    MAX_SEARCHES,
  );
  const options = new Map<string, string>([['ndots', 'ndots:5']]);
  for (const o of extraOptions) options.set(o.name, o.text);
  return { Dns: nameservers, DnsSearch: searches, DnsOptions: [...options.values()] };
}

/**
 * The resolv.conf a pod's containers read. On a user-defined network Docker writes its embedded resolver (127.0.0.11)
 * there and forwards to the Dns servers from dockerd; the provider writes this in its place, as Kubernetes' dockershim
 * did, so pods ask the cluster DNS themselves. Undefined when the pod keeps Docker's file (no nameserver of its own).
 */
export function resolvConfText(settings: Pick<DockerCreateOptions['HostConfig'], 'Dns' | 'DnsSearch' | 'DnsOptions'>): string | undefined {
  if (!settings.Dns?.length) return undefined;
  const lines = [
    "# Written by minik8s for the pod's dnsPolicy.",
    ...(settings.DnsSearch?.length ? [`search ${settings.DnsSearch.join(' ')}`] : []),
    ...settings.Dns.map((ns) => `nameserver ${ns}`),
    ...(settings.DnsOptions?.length ? [`options ${settings.DnsOptions.join(' ')}`] : []),
  ];
  return `${lines.join('\n')}\n`;
}

export function sandboxCreateOptions(options: {
  pod: Pod;
  nodeName: string;
  image: string;
  network: string;
  clusterDNS?: ClusterDnsSettings;
}): DockerCreateOptions {
  const { pod, nodeName, image } = options;
  const ref = podRefOf(pod);
  const hostNetwork = pod.spec.hostNetwork === true;
  const { exposed, bindings } = portBindings(pod);
  return {
    name: sandboxContainerName(ref),
    Image: image,
    // Hostnames are limited to 63 characters; the pod's own `hostname` wins, as in Kubernetes.
    ...(hostNetwork ? {} : { Hostname: (pod.spec.hostname ?? ref.name).slice(0, 63) }),
    Labels: sandboxLabels(ref, nodeName),
    ...(hostNetwork ? {} : { ExposedPorts: exposed }),
    HostConfig: {
      NetworkMode: hostNetwork ? 'host' : options.network,
      IpcMode: pod.spec.hostIPC ? 'host' : 'shareable',
      ...(pod.spec.hostPID ? { PidMode: 'host' } : {}),
      ...(hostNetwork ? {} : { PortBindings: bindings }),
      ...podDnsSettings(pod, options.clusterDNS),
      ...(pod.spec.hostAliases?.length ? { ExtraHosts: pod.spec.hostAliases.flatMap((a) => (a.hostnames ?? []).map((h) => `${h}:${a.ip}`)) } : {}),
      ...(dockerSysctls(pod) ? { Sysctls: dockerSysctls(pod) } : {}),
      RestartPolicy: { Name: 'no' },
    },
  };
}

/**
 * Kubernetes' command/args over the image's Entrypoint/Cmd: `command` replaces the
 * entrypoint (and the image's Cmd is dropped), `args` alone replace only the Cmd, neither
 * keeps both. Docker drops the image's Cmd whenever Entrypoint is set, so both are always given.
 */
export function commandLine(
  container: Pick<Container, 'command' | 'args'>,
  image: { Entrypoint?: string[] | null; Cmd?: string[] | null },
): { Entrypoint?: string[]; Cmd?: string[] } {
  const command = container.command?.length ? container.command : undefined;
  const args = container.args?.length ? container.args : undefined;
  if (command) return { Entrypoint: command, Cmd: args ?? [] };
  if (args) return { Entrypoint: image.Entrypoint ?? [], Cmd: args };
  return {};
}

export interface EnvContext {
  pod: Pod;
  podIP?: string;
  nodeName: string;
}

/** A fieldRef's value, for the fields a node knows; undefined for the rest. */
export function fieldRefValue(fieldPath: string, ctx: EnvContext): string | undefined {
  const { pod } = ctx;
  const m = /^metadata\.(labels|annotations)\['(.+)'\]$/.exec(fieldPath);
  if (m) return (m[1] === 'labels' ? pod.metadata.labels : pod.metadata.annotations)?.[m[2]];
  switch (fieldPath) {
    case 'metadata.name':
      return pod.metadata.name;
    case 'metadata.namespace':
      return pod.metadata.namespace ?? 'default';
    case 'metadata.uid':
      return pod.metadata.uid;
    case 'spec.nodeName':
      return pod.spec.nodeName ?? ctx.nodeName;
    case 'spec.serviceAccountName':
      return pod.spec.serviceAccountName;
    case 'status.podIP':
      return ctx.podIP;
    default:
      return undefined;
  }
}

/** Kubernetes' $(VAR) expansion: known variables are replaced, `$$` escapes, unknown references stay as written. */
export function expandVars(s: string, vars: ReadonlyMap<string, string>): string {
  return s.replace(/\$\$|\$\(([-._a-zA-Z][-._a-zA-Z0-9]*)\)/g, (whole, name: string | undefined) => {
    if (name === undefined) return '$';
    return vars.get(name) ?? whole;
  });
}

/**
 * The container's environment as NAME=VALUE: values and fieldRefs, in order, each able to
 * refer to the ones before it. Sources a node cannot resolve alone (configMap, secret) are a
 * config error, so the user sees why the container does not start.
 */
export function containerEnv(container: Pick<Container, 'env' | 'resources' | 'name'>, ctx: EnvContext): string[] {
  const vars = new Map<string, string>();
  for (const e of container.env ?? []) {
    let value: string;
    if (e.valueFrom?.fieldRef) {
      const v = fieldRefValue(e.valueFrom.fieldRef.fieldPath, ctx);
      if (v === undefined) throw new Error(`env ${e.name}: unsupported fieldRef "${e.valueFrom.fieldRef.fieldPath}"`);
      value = v;
    } else if (e.valueFrom?.resourceFieldRef) {
      value = resourceFieldValue(e.valueFrom.resourceFieldRef, container.resources);
    } else if (e.valueFrom) {
      throw new Error(`env ${e.name}: configMapKeyRef and secretKeyRef are not supported by this node`);
    } else {
      value = expandVars(e.value ?? '', vars);
    }
    vars.set(e.name, value);
  }
  return [...vars].map(([k, v]) => `${k}=${v}`);
}

function resourceFieldValue(ref: { resource: string; divisor?: string | number }, resources: Container['resources']): string {
  const [kind, name] = ref.resource.split('.') as [string, string];
  const list = kind === 'limits' ? resources?.limits : kind === 'requests' ? resources?.requests : undefined;
  const q = list?.[name];
  if (q === undefined) return '0';
  const divisor = ref.divisor === undefined ? 1 : parseQuantity(ref.divisor);
  return String(Math.ceil(parseQuantity(q) / divisor));
}

/** Limits are enforced (memory with no swap on top, so the limit bites); the cpu request only weighs shares. */
export function resourceConfig(resources: Container['resources']): Pick<DockerCreateOptions['HostConfig'], 'Memory' | 'MemorySwap' | 'NanoCpus' | 'CpuShares'> {
  const out: Pick<DockerCreateOptions['HostConfig'], 'Memory' | 'MemorySwap' | 'NanoCpus' | 'CpuShares'> = {};
  const memory = resources?.limits?.memory;
  if (memory !== undefined) {
    out.Memory = Math.round(parseQuantity(memory));
    out.MemorySwap = out.Memory;
  }
  const cpu = resources?.limits?.cpu;
  if (cpu !== undefined) out.NanoCpus = Math.round(parseQuantity(cpu) * 1e9);
  const cpuRequest = resources?.requests?.cpu;
  // As the kubelet: 1024 shares per core, at least 2 (the kernel's minimum).
  if (cpuRequest !== undefined) out.CpuShares = Math.max(2, Math.round(parseQuantity(cpuRequest) * 1024));
  return out;
}

/** Where a pod's volume lives on the host (emptyDir) or is taken from (hostPath). */
export interface VolumeSource {
  name: string;
  hostPath: string;
  /** Files the kubelet writes (configMap, secret, downwardAPI, projected): containers see them read-only, as in Kubernetes. */
  readOnly?: boolean;
}

/** emptyDir volumes live under ROOT/pods/<uid>/volumes/<name>; hostPath volumes are their path. */
export function volumeSources(pod: Pod, rootDir: string): VolumeSource[] {
  return (pod.spec.volumes ?? []).flatMap((vol): VolumeSource[] => {
    if (vol.hostPath) return [{ name: vol.name, hostPath: vol.hostPath.path }];
    if (vol.emptyDir) return [{ name: vol.name, hostPath: podVolumeDir(rootDir, pod.metadata.uid!, vol.name) }];
    if (vol.configMap || vol.secret || vol.downwardAPI || vol.projected)
      return [{ name: vol.name, hostPath: podVolumeDir(rootDir, pod.metadata.uid!, vol.name), readOnly: true }];
    return [];
  });
}

export function podDir(rootDir: string, uid: string): string {
  return posix.join(rootDir, 'pods', uid);
}

export function podVolumeDir(rootDir: string, uid: string, volume: string): string {
  return posix.join(podDir(rootDir, uid), 'volumes', volume);
}

/** Docker bind strings for the container's mounts (HOST:CONTAINER[:ro]); a mount of a volume the node cannot provide is an error. */
export function containerBinds(container: Pick<Container, 'volumeMounts'>, sources: readonly VolumeSource[]): string[] {
  return (container.volumeMounts ?? []).map((m) => {
    const source = sources.find((s) => s.name === m.name);
    if (!source)
      throw new Error(
        `volume "${m.name}" is not an emptyDir, hostPath, configMap, secret, downwardAPI or projected volume of the pod, which is all this node supports`,
      );
    const host = m.subPath ? posix.join(source.hostPath, m.subPath) : source.hostPath;
    return `${host}:${m.mountPath}${m.readOnly || source.readOnly ? ':ro' : ''}`;
  });
}

export interface AppContainerInput {
  pod: Pod;
  container: Container;
  attempt: number;
  nodeName: string;
  sandboxID: string;
  podIP?: string;
  /** The resolved image reference. */
  image: string;
  imageConfig: { Entrypoint?: string[] | null; Cmd?: string[] | null; User?: string | null };
  /** The image's /etc/passwd and /etc/group, for a user given by name and the groups `Merge` adds (none when absent). */
  imageFiles?: Pick<ImageUser, 'passwd' | 'group'>;
  /** Reads a Localhost seccomp profile from the node's profile directory. */
  readSeccompProfile?: ReadSeccompProfile;
  volumes: readonly VolumeSource[];
}

/** The create body of an app container: joins the sandbox's namespaces, with the pod's command, env, limits and mounts. */
export function appContainerCreateOptions(input: AppContainerInput): DockerCreateOptions {
  const { pod, container: c } = input;
  const ref = podRefOf(pod);
  const env = containerEnv(c, { pod, podIP: input.podIP, nodeName: input.nodeName });
  const vars = new Map(env.map((e) => splitOnce(e, '=') as [string, string]));
  const line = commandLine(c, input.imageConfig);
  const sandbox = `container:${input.sandboxID}`;
  const imageUser = input.imageConfig.User ?? '';
  checkRunAsNonRoot(pod, c, imageUser);
  // The ids are always given as uid:gid, so the runtime adds no groups of its own: those Merge asks for come as GroupAdd.
  const identity = effectiveIdentity(pod, c, { user: imageUser, ...input.imageFiles });
  const groupAdd = identity.supplementalGroups.filter((g) => g !== identity.gid).map(String);
  return {
    name: appContainerName(ref, c.name, input.attempt),
    Image: input.image,
    ...(line.Entrypoint ? { Entrypoint: line.Entrypoint.map((s) => expandVars(s, vars)) } : {}),
    ...(line.Cmd ? { Cmd: line.Cmd.map((s) => expandVars(s, vars)) } : {}),
    Env: env,
    ...(c.workingDir ? { WorkingDir: c.workingDir } : {}),
    User: `${identity.uid}:${identity.gid}`,
    Labels: { ...appLabels(ref, input.nodeName, c.name, input.attempt), [USER_LABEL]: formatIdentity(identity) },
    HostConfig: {
      NetworkMode: sandbox,
      IpcMode: sandbox,
      PidMode: sandbox,
      Binds: containerBinds(c, input.volumes),
      ...resourceConfig(c.resources),
      ...(groupAdd.length ? { GroupAdd: groupAdd } : {}),
      ...dockerSecurityOptions(pod, c, input.readSeccompProfile),
      RestartPolicy: { Name: 'no' },
    },
  };
}

// ---- Runtime state ---------------------------------------------------------------------------

/** What we read of `docker inspect` (structural: tests build these by hand). */
export interface InspectedContainer {
  Id: string;
  Created: string;
  Image: string;
  Config: { Image: string; Labels?: Record<string, string> | null };
  State: { Status: string; ExitCode?: number; OOMKilled?: boolean; Error?: string; StartedAt?: string; FinishedAt?: string };
  NetworkSettings?: { IPAddress?: string; Networks?: Record<string, { IPAddress?: string }> | null };
  HostConfig?: { NetworkMode?: string };
}

/** Docker's zero time means "never". Nanosecond times are cut to milliseconds, as API timestamps are. */
export function dockerTime(s: string | undefined): string | undefined {
  if (!s || s.startsWith('0001-01-01')) return undefined;
  const t = Date.parse(s);
  return Number.isNaN(t) ? undefined : new Date(t).toISOString();
}

export function runState(status: string): ContainerRunState {
  switch (status) {
    case 'running':
    case 'paused':
    case 'restarting':
      return 'running';
    case 'created':
      return 'created';
    case 'exited':
    case 'dead':
      return 'exited';
    default:
      return 'unknown';
  }
}

/** Kubernetes' terminated reasons: OOMKilled wins, then Completed for exit 0, else Error. */
export function exitReason(state: { ExitCode?: number; OOMKilled?: boolean }): string {
  if (state.OOMKilled) return 'OOMKilled';
  return state.ExitCode === 0 ? 'Completed' : 'Error';
}

export function runtimeContainerOf(c: InspectedContainer): Omit<RuntimeContainer, 'previous'> {
  const labels = c.Config.Labels ?? {};
  const state = runState(c.State.Status);
  const out: Omit<RuntimeContainer, 'previous'> = {
    name: labels[LABELS.container] ?? '',
    id: c.Id,
    image: c.Config.Image,
    imageID: c.Image,
    state,
    attempt: Number(labels[LABELS.attempt] ?? 0) || 0,
    createdAt: dockerTime(c.Created) ?? new Date(0).toISOString(),
  };
  const user = parseIdentity(labels[USER_LABEL]);
  if (user) out.user = user;
  const startedAt = dockerTime(c.State.StartedAt);
  if (startedAt) out.startedAt = startedAt;
  if (state === 'exited') {
    const finishedAt = dockerTime(c.State.FinishedAt);
    if (finishedAt) out.finishedAt = finishedAt;
    out.exitCode = c.State.ExitCode ?? 0;
    out.reason = exitReason(c.State);
    if (c.State.Error) out.message = c.State.Error;
  }
  return out;
}

/** The sandbox's address: on its pod network, or Docker's default bridge. */
export function sandboxIP(c: InspectedContainer): string | undefined {
  const networks = Object.values(c.NetworkSettings?.Networks ?? {});
  const ip = networks.map((n) => n.IPAddress).find((a) => a) ?? c.NetworkSettings?.IPAddress;
  return ip || undefined;
}

/** Newest first: by attempt, then by creation time (a retried start of the same attempt is newer). */
function newestFirst(a: InspectedContainer, b: InspectedContainer): number {
  const attempt = (c: InspectedContainer) => Number(c.Config.Labels?.[LABELS.attempt] ?? 0) || 0;
  return attempt(b) - attempt(a) || Date.parse(b.Created) - Date.parse(a.Created);
}

/**
 * Groups a node's containers into pods: the newest running sandbox (else the newest one), and
 * per container name the newest instance with the one before it as `previous`. App containers
 * without a sandbox still make a pod (notready), so the kubelet sees and cleans them up.
 */
export function groupRuntimePods(containers: readonly InspectedContainer[], options: { hostIP?: string } = {}): RuntimePod[] {
  const byUid = new Map<string, InspectedContainer[]>();
  for (const c of containers) {
    const uid = c.Config.Labels?.[LABELS.podUid];
    if (!uid) continue;
    getOrCreate(byUid, uid, () => []).push(c);
  }
  const pods: RuntimePod[] = [];
  for (const [uid, list] of byUid) {
    const labels = list[0].Config.Labels ?? {};
    const sandboxes = list.filter((c) => c.Config.Labels?.[LABELS.role] === 'sandbox').sort(newestFirst);
    const sandbox = sandboxes.find((c) => runState(c.State.Status) === 'running') ?? sandboxes[0];
    const byName = new Map<string, InspectedContainer[]>();
    for (const c of list) {
      if (c.Config.Labels?.[LABELS.role] !== 'app') continue;
      const name = c.Config.Labels?.[LABELS.container] ?? '';
      getOrCreate(byName, name, () => []).push(c);
    }
    const runtimeContainers = [...byName.keys()].sort().map((name) => {
      const [current, previous] = byName.get(name)!.sort(newestFirst);
      const rc: RuntimeContainer = runtimeContainerOf(current);
      if (previous) rc.previous = runtimeContainerOf(previous);
      return rc;
    });
    const sandboxState: SandboxState = sandbox && runState(sandbox.State.Status) === 'running' ? 'ready' : 'notready';
    const ip = sandbox ? (sandbox.HostConfig?.NetworkMode === 'host' ? options.hostIP : sandboxIP(sandbox)) : undefined;
    pods.push({
      uid,
      namespace: labels[LABELS.podNamespace] ?? 'default',
      name: labels[LABELS.podName] ?? '',
      sandbox: {
        id: sandbox?.Id ?? '',
        state: sandboxState,
        ...(ip && sandboxState === 'ready' ? { ip } : {}),
        createdAt: dockerTime(sandbox?.Created) ?? new Date(0).toISOString(),
      },
      containers: runtimeContainers,
    });
  }
  return pods.sort((a, b) => a.namespace.localeCompare(b.namespace) || a.name.localeCompare(b.name) || a.uid.localeCompare(b.uid));
}

/** Instances of one container beyond the newest two: removed when a new one starts, as the kubelet's GC keeps one dead instance. */
export function instancesToRemove(instances: readonly InspectedContainer[]): InspectedContainer[] {
  return [...instances].sort(newestFirst).slice(1);
}

// ---- Stats -----------------------------------------------------------------------------------

export interface CpuSample {
  /** Total CPU time used, in nanoseconds. */
  usageNs: number;
  /** When it was read, in ms since the epoch. */
  atMs: number;
}

/** Cores used between two samples; without an earlier one, the average since the container started. */
export function cpuCores(current: CpuSample, previous: CpuSample | undefined, startedAtMs?: number): number {
  const base = previous ?? (startedAtMs !== undefined ? { usageNs: 0, atMs: startedAtMs } : undefined);
  if (!base) return 0;
  const wallNs = (current.atMs - base.atMs) * 1e6;
  const used = current.usageNs - base.usageNs;
  if (wallNs <= 0 || used < 0) return 0;
  return used / wallNs;
}

/** The working set as `docker stats` shows it: usage minus page cache (cgroup v1) or inactive file pages (v2). */
export function memoryWorkingSet(memory: { usage?: number; stats?: Record<string, number> } | undefined): number {
  if (!memory?.usage) return 0;
  const stats = memory.stats ?? {};
  const cache = stats.cache ?? stats.inactive_file ?? 0;
  return Math.max(0, memory.usage - cache);
}

// ---- Errors ----------------------------------------------------------------------------------

/** Docker's error text without the HTTP framing dockerode adds. */
export function dockerErrorMessage(err: unknown): string {
  const e = err as { json?: { message?: string } | null; reason?: string; message?: string } | undefined;
  const fromJson = e?.json && typeof e.json === 'object' ? e.json.message : undefined;
  const raw = fromJson ?? (e?.message ?? String(err)).replace(/^\(HTTP code \d+\) [a-z ]+ - /, '');
  return raw.trim().split('\n')[0];
}

/** A taken host port, said as the user needs it; undefined when the error is something else. */
export function portConflictMessage(message: string): string | undefined {
  const m =
    /Bind for ([^\s]*?):(\d+) failed: port is already allocated/.exec(message) ??
    /listen (?:tcp|udp)4?6? ([^\s]*?):(\d+): bind: address already in use/.exec(message);
  return m ? portAllocatedMessage(Number(m[2])) : undefined;
}

export function portAllocatedMessage(port: number): string {
  return `port ${port} is already allocated on the node (hostPort ${port} is taken by another pod or process)`;
}

/** Demultiplexes a buffered Docker stream (8-byte frame headers; stream 1 stdout, 2 stderr) into its parts. */
export function demuxDockerBuffer(buffer: Buffer): { stdout: Buffer; stderr: Buffer; all: Buffer } {
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  const all: Buffer[] = [];
  let i = 0;
  while (i + 8 <= buffer.length) {
    const stream = buffer[i];
    const size = buffer.readUInt32BE(i + 4);
    const chunk = buffer.subarray(i + 8, i + 8 + size);
    if (stream === 2) err.push(chunk);
    else out.push(chunk);
    all.push(chunk);
    i += 8 + size;
  }
  return { stdout: Buffer.concat(out), stderr: Buffer.concat(err), all: Buffer.concat(all) };
}
