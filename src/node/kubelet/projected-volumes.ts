// The files of configMap, secret, downwardAPI and projected volumes: which keys land at which paths with which modes (pure, given the objects).
import type { Container, Pod, Volume } from '../../core/api/pod.js';
import { parseQuantity } from '../../core/api/quantity.js';
import type { DownwardAPIFile, VolumeProjection } from '../../core/api/volume-projections.js';

/** Kubernetes' default file mode for these volumes (0644). */
export const DEFAULT_FILE_MODE = 0o644;

export interface ProjectedFile {
  /** Relative to the volume's root, as in `items[].path`. */
  path: string;
  content: Buffer;
  mode: number;
}

/** The objects a volume's files come from: bytes by key, or undefined when the object does not exist. */
export interface ProjectionObjects {
  configMap(name: string): Record<string, Buffer> | undefined;
  secret(name: string): Record<string, Buffer> | undefined;
}

/** A volume that cannot be set up (a missing object or key); the message is Kubernetes'. */
export class VolumeSetUpError extends Error {
  override name = 'VolumeSetUpError';
}

/** The volume sources whose files the kubelet writes. */
export function isProjectingVolume(vol: Volume): boolean {
  return !!(vol.configMap || vol.secret || vol.downwardAPI || vol.projected);
}

/** The ConfigMaps and Secrets a volume reads, so callers can fetch them before projecting. */
export function volumeReferences(vol: Volume): { configMaps: string[]; secrets: string[] } {
  const configMaps: string[] = [];
  const secrets: string[] = [];
  if (vol.configMap) configMaps.push(vol.configMap.name);
  if (vol.secret) secrets.push(vol.secret.secretName);
  for (const s of vol.projected?.sources ?? []) {
    if (s.configMap) configMaps.push(s.configMap.name);
    if (s.secret) secrets.push(s.secret.name);
  }
  return { configMaps, secrets };
}

interface KeySource {
  kind: 'configmap' | 'secret';
  name: string;
  items?: { key: string; path: string; mode?: number }[];
  optional?: boolean;
}

function keyFiles(source: KeySource, data: Record<string, Buffer> | undefined, defaultMode: number): ProjectedFile[] {
  if (!data) {
    if (source.optional) return [];
    throw new VolumeSetUpError(`${source.kind} "${source.name}" not found`);
  }
  if (!source.items) return Object.keys(data).map((key) => ({ path: key, content: data[key]!, mode: defaultMode }));
  return source.items.flatMap((item) => {
    const content = data[item.key];
    if (content !== undefined) return [{ path: item.path, content, mode: item.mode ?? defaultMode }];
    if (source.optional) return [];
    throw new VolumeSetUpError(
      `${source.kind === 'configmap' ? 'configmap' : 'secret'} references non-existent ${source.kind === 'configmap' ? 'config' : 'secret'} key: ${item.key}`,
    );
  });
}

/** `k="v"` lines, sorted by key, as the kubelet writes metadata.labels and metadata.annotations. */
function formatMap(map: Record<string, string> | undefined): string {
  return Object.keys(map ?? {})
    .sort()
    .map((k) => `${k}=${JSON.stringify(map![k])}`)
    .join('\n');
}

/** A downward API file's text; the fields Kubernetes allows in volumes (metadata, and resources of a named container). */
export function downwardValue(file: DownwardAPIFile, pod: Pod): string {
  if (file.fieldRef) {
    const path = file.fieldRef.fieldPath;
    const m = /^metadata\.(labels|annotations)\['(.+)'\]$/.exec(path);
    if (m) return (m[1] === 'labels' ? pod.metadata.labels : pod.metadata.annotations)?.[m[2]!] ?? '';
    switch (path) {
      case 'metadata.name':
        return pod.metadata.name ?? '';
      case 'metadata.namespace':
        return pod.metadata.namespace ?? 'default';
      case 'metadata.uid':
        return pod.metadata.uid ?? '';
      case 'metadata.labels':
        return formatMap(pod.metadata.labels);
      case 'metadata.annotations':
        return formatMap(pod.metadata.annotations);
      default:
        throw new VolumeSetUpError(`unsupported fieldPath "${path}" in a downwardAPI volume`);
    }
  }
  const ref = file.resourceFieldRef!;
  const container = pod.spec.containers.find((c) => c.name === ref.containerName) as Container | undefined;
  if (!container) throw new VolumeSetUpError(`container "${ref.containerName ?? ''}" not found for resourceFieldRef ${ref.resource}`);
  return resourceValue(ref.resource, ref.divisor, container);
}

/** limits.cpu, requests.memory and the like over the divisor, rounded up as the kubelet does; 0 when unset. */
export function resourceValue(resource: string, divisor: string | number | undefined, container: Pick<Container, 'resources'>): string {
  const [list, name] = resource.split('.') as [string, string | undefined];
  const quantities = list === 'limits' ? container.resources?.limits : list === 'requests' ? container.resources?.requests : undefined;
  const q = name ? quantities?.[name] : undefined;
  if (q === undefined) return '0';
  return String(Math.ceil(parseQuantity(q) / (divisor === undefined ? 1 : parseQuantity(divisor))));
}

function downwardFiles(items: DownwardAPIFile[] | undefined, pod: Pod, defaultMode: number): ProjectedFile[] {
  return (items ?? []).map((f) => ({ path: f.path, content: Buffer.from(downwardValue(f, pod), 'utf8'), mode: f.mode ?? defaultMode }));
}

function projectionFiles(source: VolumeProjection, pod: Pod, objects: ProjectionObjects, defaultMode: number): ProjectedFile[] {
  if (source.configMap) return keyFiles({ kind: 'configmap', ...source.configMap }, objects.configMap(source.configMap.name), defaultMode);
  if (source.secret) return keyFiles({ kind: 'secret', ...source.secret }, objects.secret(source.secret.name), defaultMode);
  if (source.downwardAPI) return downwardFiles(source.downwardAPI.items, pod, defaultMode);
  // serviceAccountToken sources are written by the service-account token support, not from objects: none here.
  return [];
}

/**
 * The files of one volume, sorted by path; throws VolumeSetUpError when a non-optional object or
 * key is missing, with Kubernetes' message. Undefined for volumes of other kinds.
 */
export function volumeFiles(vol: Volume, pod: Pod, objects: ProjectionObjects): ProjectedFile[] | undefined {
  let files: ProjectedFile[];
  if (vol.configMap) {
    files = keyFiles({ kind: 'configmap', ...vol.configMap }, objects.configMap(vol.configMap.name), vol.configMap.defaultMode ?? DEFAULT_FILE_MODE);
  } else if (vol.secret) {
    const { secretName, ...rest } = vol.secret;
    files = keyFiles({ kind: 'secret', name: secretName, ...rest }, objects.secret(secretName), vol.secret.defaultMode ?? DEFAULT_FILE_MODE);
  } else if (vol.downwardAPI) {
    files = downwardFiles(vol.downwardAPI.items, pod, vol.downwardAPI.defaultMode ?? DEFAULT_FILE_MODE);
  } else if (vol.projected) {
    const mode = vol.projected.defaultMode ?? DEFAULT_FILE_MODE;
    files = (vol.projected.sources ?? []).flatMap((s) => projectionFiles(s, pod, objects, mode));
  } else {
    return undefined;
  }
  // A later source's file wins over an earlier one at the same path (Kubernetes warns of the conflict).
  const byPath = new Map(files.map((f) => [f.path, f]));
  return [...byPath.values()].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/** A ConfigMap's keys as bytes: data as UTF-8 and binaryData decoded. */
export function configMapFileData(cm: { data?: Record<string, string>; binaryData?: Record<string, string> }): Record<string, Buffer> {
  const out: Record<string, Buffer> = {};
  for (const [k, text] of Object.entries(cm.data ?? {})) out[k] = Buffer.from(text, 'utf8');
  for (const [k, b64] of Object.entries(cm.binaryData ?? {})) out[k] = Buffer.from(b64, 'base64');
  return out;
}

/** A Secret's base64 data as bytes. */
export function secretFileData(data: Record<string, string>): Record<string, Buffer> {
  return Object.fromEntries(Object.entries(data).map(([k, b64]) => [k, Buffer.from(b64, 'base64')]));
}
