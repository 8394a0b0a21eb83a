// Pod and container security contexts, merged with the image's user: the effective uid, gid and groups, runAsNonRoot, and Docker's options for the rest.
import type { Container, Pod } from '../core/api/pod.js';

/** What the kubelet knows of an image for its user: Config.User and, when it could read them, its /etc/passwd and /etc/group. */
export interface ImageUser {
  /** The image's USER: "", a name, a uid, or either with ":group". */
  user?: string;
  passwd?: string;
  group?: string;
}

/** The ids a container's process runs with, as `status.containerStatuses[].user.linux` reports them. */
export interface LinuxIdentity {
  uid: number;
  gid: number;
  /** Every group of the process, the primary one first, as getgroups(2) lists them. */
  supplementalGroups: number[];
}

/** A container that must not start as it is configured; the kubelet shows it as CreateContainerConfigError. */
export class SecurityContextError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SecurityContextError';
  }
}

interface PasswdEntry {
  name: string;
  uid: number;
  gid: number;
}

interface GroupEntry {
  name: string;
  gid: number;
  members: string[];
}

const NUMERIC = /^\d+$/;

function parsePasswd(text: string | undefined): PasswdEntry[] {
  return (text ?? '').split('\n').flatMap((line): PasswdEntry[] => {
    const f = line.split(':');
    if (f.length < 4 || line.startsWith('#') || !NUMERIC.test(f[2]) || !NUMERIC.test(f[3])) return [];
    return [{ name: f[0], uid: Number(f[2]), gid: Number(f[3]) }];
  });
}

function parseGroup(text: string | undefined): GroupEntry[] {
  return (text ?? '').split('\n').flatMap((line): GroupEntry[] => {
    const f = line.split(':');
    if (f.length < 3 || line.startsWith('#') || !NUMERIC.test(f[2])) return [];
    return [{ name: f[0], gid: Number(f[2]), members: (f[3] ?? '').split(',').filter((m) => m !== '') }];
  });
}

/** The pod's field unless the container sets its own: container level wins, for that container only. */
function pick<K extends 'runAsUser' | 'runAsGroup' | 'runAsNonRoot' | 'seccompProfile'>(pod: Pod, container: Container, key: K) {
  const own = container.securityContext?.[key];
  return own !== undefined ? own : pod.spec.securityContext?.[key];
}

/** Kubernetes' format.Pod, as the kubelet's messages name pods. */
function podName(pod: Pod): string {
  return `${pod.metadata.name}_${pod.metadata.namespace ?? 'default'}(${pod.metadata.uid ?? ''})`;
}

/**
 * Kubernetes' verifyRunAsNonRoot: with runAsNonRoot, an explicit runAsUser 0 is refused, and without one the
 * image's user must be a numeric uid other than 0 (a name cannot be checked without trusting the image's files).
 */
export function checkRunAsNonRoot(pod: Pod, container: Container, imageUser: string | undefined): void {
  if (pick(pod, container, 'runAsNonRoot') !== true) return;
  const runAsUser = pick(pod, container, 'runAsUser');
  const where = `(pod: "${podName(pod)}", container: ${container.name})`;
  if (runAsUser !== undefined) {
    if (runAsUser === 0) throw new SecurityContextError(`container's runAsUser breaks non-root policy ${where}`);
    return;
  }
  const user = (imageUser ?? '').split(':')[0];
  if (user === '' || (NUMERIC.test(user) && Number(user) === 0))
    throw new SecurityContextError(`container has runAsNonRoot and image will run as root ${where}`);
  if (!NUMERIC.test(user))
    throw new SecurityContextError(`container has runAsNonRoot and image has non-numeric user (${user}), cannot verify user is non-root ${where}`);
}

/**
 * The process's ids: runAsUser/runAsGroup (container over pod) over the image's USER, a name resolved in the image's
 * /etc/passwd, the primary group from there when none is asked for; then the groups. `Merge` (the default) adds the
 * groups the image's /etc/group lists the user in, as the runtime's own lookup does; `Strict` keeps only runAsGroup
 * (or the primary group), fsGroup and supplementalGroups.
 */
export function effectiveIdentity(pod: Pod, container: Container, image: ImageUser): LinuxIdentity {
  const passwd = parsePasswd(image.passwd);
  const groups = parseGroup(image.group);
  const [imageUserPart, imageGroupPart] = (image.user ?? '').split(':') as [string, string | undefined];
  const runAsUser = pick(pod, container, 'runAsUser');
  let uid: number;
  if (runAsUser !== undefined) uid = runAsUser;
  else if (imageUserPart === '') uid = 0;
  else if (NUMERIC.test(imageUserPart)) uid = Number(imageUserPart);
  else {
    const entry = passwd.find((p) => p.name === imageUserPart);
    if (!entry) throw new SecurityContextError(`unable to find user ${imageUserPart}: no matching entries in passwd file`);
    uid = entry.uid;
  }
  const account = passwd.find((p) => p.uid === uid);
  const runAsGroup = pick(pod, container, 'runAsGroup');
  let gid: number;
  if (runAsGroup !== undefined) gid = runAsGroup;
  else if (runAsUser === undefined && imageGroupPart !== undefined && imageGroupPart !== '') {
    if (NUMERIC.test(imageGroupPart)) gid = Number(imageGroupPart);
    else {
      const entry = groups.find((g) => g.name === imageGroupPart);
      if (!entry) throw new SecurityContextError(`unable to find group ${imageGroupPart}: no matching entries in group file`);
      gid = entry.gid;
    }
  } else gid = account?.gid ?? 0;
  const sc = pod.spec.securityContext;
  const fromImage = sc?.supplementalGroupsPolicy === 'Strict' || !account ? [] : groups.filter((g) => g.members.includes(account.name)).map((g) => g.gid);
  const others = [...fromImage, ...(sc?.fsGroup !== undefined ? [sc.fsGroup] : []), ...(sc?.supplementalGroups ?? [])].filter((g) => g !== gid);
  // The primary group first, then the rest in the kernel's (sorted) order, as `id -G` lists them.
  return { uid, gid, supplementalGroups: [gid, ...[...new Set(others)].sort((a, b) => a - b)] };
}

/** Docker's name for a capability: upper case with the CAP_ prefix (Kubernetes manifests usually leave it off); ALL stays ALL. */
export function dockerCapability(name: string): string {
  const upper = name.toUpperCase();
  return upper === 'ALL' || upper.startsWith('CAP_') ? upper : `CAP_${upper}`;
}

/** The seccomp profile a Localhost type names, read by the caller from the node's profile directory. */
export type ReadSeccompProfile = (localhostProfile: string) => string;

/** The container's security options for Docker's create body, besides its user. */
export function dockerSecurityOptions(
  pod: Pod,
  container: Container,
  readProfile?: ReadSeccompProfile,
): { Privileged?: boolean; ReadonlyRootfs?: boolean; CapAdd?: string[]; CapDrop?: string[]; SecurityOpt?: string[] } {
  const sc = container.securityContext;
  const securityOpt: string[] = [];
  if (sc?.allowPrivilegeEscalation === false) securityOpt.push('no-new-privileges');
  const seccomp = pick(pod, container, 'seccompProfile');
  // Docker's default profile is what RuntimeDefault names; privileged containers run unconfined anyway.
  if (seccomp?.type === 'Unconfined') securityOpt.push('seccomp=unconfined');
  else if (seccomp?.type === 'Localhost') {
    if (!readProfile) throw new SecurityContextError('localhost seccomp profiles are not supported by this node');
    securityOpt.push(`seccomp=${readProfile(seccomp.localhostProfile ?? '')}`);
  }
  if (sc?.procMount === 'Unmasked') securityOpt.push('systempaths=unconfined');
  return {
    ...(sc?.privileged ? { Privileged: true } : {}),
    ...(sc?.readOnlyRootFilesystem ? { ReadonlyRootfs: true } : {}),
    ...(sc?.capabilities?.add?.length ? { CapAdd: sc.capabilities.add.map(dockerCapability) } : {}),
    ...(sc?.capabilities?.drop?.length ? { CapDrop: sc.capabilities.drop.map(dockerCapability) } : {}),
    ...(securityOpt.length ? { SecurityOpt: securityOpt } : {}),
  };
}

/** Kubernetes' safe sysctls: namespaced and unable to affect other pods or the node; any other needs the node's consent. */
export const SAFE_SYSCTLS: readonly string[] = [
  'kernel.shm_rmid_forced',
  'net.ipv4.ip_local_port_range',
  'net.ipv4.tcp_syncookies',
  'net.ipv4.ping_group_range',
  'net.ipv4.ip_unprivileged_port_start',
  'net.ipv4.ip_local_reserved_ports',
  'net.ipv4.tcp_keepalive_time',
  'net.ipv4.tcp_fin_timeout',
  'net.ipv4.tcp_keepalive_intvl',
  'net.ipv4.tcp_keepalive_probes',
  'net.ipv4.tcp_rmem',
  'net.ipv4.tcp_wmem',
];

/** An allowlist entry matches its name, or a prefix when it ends in `*` (the kubelet's --allowed-unsafe-sysctls form). */
function allowed(name: string, list: readonly string[]): boolean {
  const dotted = name.replaceAll('/', '.');
  return list.some((a) => (a.endsWith('*') ? dotted.startsWith(a.slice(0, -1)) : dotted === a));
}

/** The kubelet's sysctl admission: the first sysctl the node does not allow, worded as the kubelet's SysctlForbidden message. */
export function forbiddenSysctl(pod: Pod, allowedUnsafe: readonly string[] = []): string | undefined {
  for (const s of pod.spec.securityContext?.sysctls ?? []) {
    if (pod.spec.hostNetwork && s.name.replaceAll('/', '.').startsWith('net.')) return `forbidden sysctl: "${s.name}" not allowed with host net enabled`;
    if (pod.spec.hostIPC && /^(kernel\.(shm|msg|sem)|fs\.mqueue\.)/.test(s.name.replaceAll('/', '.')))
      return `forbidden sysctl: "${s.name}" not allowed with host ipc enabled`;
    if (!allowed(s.name, SAFE_SYSCTLS) && !allowed(s.name, allowedUnsafe)) return `forbidden sysctl: "${s.name}" not allowlisted`;
  }
  return undefined;
}

/** The pod's sysctls as Docker's HostConfig.Sysctls, set on the sandbox whose namespaces the containers join. */
export function dockerSysctls(pod: Pod): Record<string, string> | undefined {
  const list = pod.spec.securityContext?.sysctls ?? [];
  return list.length ? Object.fromEntries(list.map((s) => [s.name.replaceAll('/', '.'), s.value])) : undefined;
}

/** The label that carries a container's effective ids, so status reads them back after a kubelet restart. */
export const USER_LABEL = 'minik8s.io/user';

export function formatIdentity(id: LinuxIdentity): string {
  return `${id.uid}:${id.gid}:${id.supplementalGroups.join(',')}`;
}

export function parseIdentity(label: string | undefined): LinuxIdentity | undefined {
  const m = /^(\d+):(\d+):([\d,]*)$/.exec(label ?? '');
  if (!m) return undefined;
  return { uid: Number(m[1]), gid: Number(m[2]), supplementalGroups: m[3] ? m[3].split(',').map(Number) : [] };
}
