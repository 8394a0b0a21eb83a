// A container's env from ConfigMaps and Secrets (valueFrom keyRefs and envFrom), read by the kubelet when the container starts.
import type { Container, Pod } from '../../core/api/pod.js';
import { ContainerStartError } from '../../runtime/provider.js';

/** What env resolution reads from the API; the node may read only the objects its own pods name. */
export interface ConfigReader {
  /** A Secret's data (base64 values), undefined when there is none. */
  readSecret?(namespace: string, name: string): Promise<Record<string, string> | undefined>;
  /** A ConfigMap's data and binaryData, undefined when there is none. */
  readConfigMap?(namespace: string, name: string): Promise<{ data?: Record<string, string>; binaryData?: Record<string, string> } | undefined>;
}

export interface EnvResolveContext {
  /** The node's address, for `status.hostIP`, which the container runtime does not know. */
  hostIP?: string;
  /** Told about envFrom keys left out for not being valid variable names (Kubernetes records an event). */
  onSkippedKeys?: (message: string) => void;
}

type EnvVar = NonNullable<Container['env']>[number];

const ENV_NAME = /^[-._a-zA-Z][-._a-zA-Z0-9]*$/;

/** `$` doubled: the runtime expands $(VAR) in plain values, but values read from objects are taken as written. */
const literal = (s: string) => s.replaceAll('$', () => '$$');

/** One read per object and resolution; text values, as the kubelet uses them (a ConfigMap's binaryData is not env). */
class Objects {
  readonly #cache = new Map<string, Record<string, string> | undefined>();
  constructor(
    readonly namespace: string,
    readonly reader: ConfigReader,
  ) {}

  async get(kind: 'ConfigMap' | 'Secret', name: string): Promise<Record<string, string> | undefined> {
    const key = `${kind}/${name}`;
    if (!this.#cache.has(key)) this.#cache.set(key, await this.#read(kind, name));
    return this.#cache.get(key);
  }

  async #read(kind: 'ConfigMap' | 'Secret', name: string): Promise<Record<string, string> | undefined> {
    if (kind === 'ConfigMap') {
      const cm = this.reader.readConfigMap ? await this.reader.readConfigMap(this.namespace, name) : undefined;
      return cm ? { ...(cm.data ?? {}) } : undefined;
    }
    const data = this.reader.readSecret ? await this.reader.readSecret(this.namespace, name) : undefined;
    return data ? Object.fromEntries(Object.entries(data).map(([k, b64]) => [k, Buffer.from(b64, 'base64').toString('utf8')])) : undefined;
  }
}

const notFound = (kind: 'ConfigMap' | 'Secret', name: string) =>
  new ContainerStartError('CreateContainerConfigError', `${kind === 'ConfigMap' ? 'configmap' : 'secret'} "${name}" not found`);

/** The envFrom sources as plain entries, in order (a later source wins over an earlier one, and `env` over all). */
async function envFromEntries(container: Container, objects: Objects, ctx: EnvResolveContext): Promise<EnvVar[]> {
  const out = new Map<string, string>();
  for (const source of container.envFrom ?? []) {
    const [kind, ref] = source.configMapRef ? (['ConfigMap', source.configMapRef] as const) : (['Secret', source.secretRef] as const);
    if (!ref) continue;
    const data = await objects.get(kind, ref.name);
    if (!data) {
      if (ref.optional) continue;
      throw notFound(kind, ref.name);
    }
    const skipped: string[] = [];
    for (const [key, value] of Object.entries(data)) {
      const name = `${source.prefix ?? ''}${key}`;
      if (ENV_NAME.test(name)) out.set(name, value);
      else skipped.push(name);
    }
    if (skipped.length > 0)
      ctx.onSkippedKeys?.(
        `Keys [${skipped.sort().join(', ')}] from the EnvFrom ${kind === 'ConfigMap' ? 'configMap' : 'secret'} ${objects.namespace}/${ref.name} were skipped since they are considered invalid environment variable names.`,
      );
  }
  return [...out].map(([name, value]) => ({ name, value: literal(value) }));
}

/** One env entry with its object-backed value filled in; undefined to leave it out (an optional source that is absent). */
async function resolveEntry(e: EnvVar, objects: Objects, ctx: EnvResolveContext): Promise<EnvVar | undefined> {
  const from = e.valueFrom;
  if (from?.fieldRef && (from.fieldRef.fieldPath === 'status.hostIP' || from.fieldRef.fieldPath === 'status.hostIPs'))
    return { name: e.name, value: literal(ctx.hostIP ?? '') };
  const [kind, ref] = from?.configMapKeyRef
    ? (['ConfigMap', from.configMapKeyRef] as const)
    : from?.secretKeyRef
      ? (['Secret', from.secretKeyRef] as const)
      : [undefined, undefined];
  if (!kind || !ref) return e;
  const name = ref.name ?? '';
  const data = await objects.get(kind, name);
  const value = data?.[ref.key];
  if (value !== undefined) return { name: e.name, value: literal(value) };
  if (ref.optional) return undefined;
  if (!data) throw notFound(kind, name);
  throw new ContainerStartError('CreateContainerConfigError', `couldn't find key ${ref.key} in ${kind} ${objects.namespace}/${name}`);
}

/**
 * The pod with one container's env made plain where it comes from ConfigMaps and Secrets: envFrom
 * first, then env (which wins), read at start as the kubelet does, so no value sits in the pod
 * object every node may read. fieldRef and resourceFieldRef stay for the runtime, which knows the
 * pod's address. A missing object or key that is not optional fails the start with
 * CreateContainerConfigError and Kubernetes' message; the start is tried again later.
 */
export async function resolveContainerEnv(pod: Pod, containerName: string, reader: ConfigReader, ctx: EnvResolveContext = {}): Promise<Pod> {
  const lists = ['containers', 'initContainers'] as const;
  const list = lists.find((l) => pod.spec[l]?.some((c) => c.name === containerName));
  const container = list ? pod.spec[list]!.find((c) => c.name === containerName)! : undefined;
  if (!list || !container) return pod;
  const needsWork =
    (container.envFrom?.length ?? 0) > 0 ||
    container.env?.some((e) => e.valueFrom?.configMapKeyRef || e.valueFrom?.secretKeyRef || e.valueFrom?.fieldRef?.fieldPath.startsWith('status.hostIP'));
  if (!needsWork) return pod;
  const objects = new Objects(pod.metadata.namespace ?? 'default', reader);
  const env = await envFromEntries(container, objects, ctx);
  for (const e of container.env ?? []) {
    const resolved = await resolveEntry(e, objects, ctx);
    if (resolved) env.push(resolved);
  }
  const { envFrom: _resolved, ...rest } = container;
  const next: Container = { ...rest, env };
  return { ...pod, spec: { ...pod.spec, [list]: pod.spec[list]!.map((c) => (c === container ? next : c)) } };
}
