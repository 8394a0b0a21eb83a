// `minik8s set image|env`: changes the containers of a pod or a workload's pod template, as kubectl set does.
import type { KindDefinition } from '../core/api/kind.js';
import type { KubeObject } from '../core/api/meta.js';
import { CliError } from './cli-error.js';
import type { CliContext } from './context.js';
import { objectRef } from './printers.js';
import { fetchTargets } from './targets.js';

interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: Record<string, Record<string, unknown> | undefined>;
}

interface Container {
  name: string;
  image?: string;
  env?: EnvVar[];
}

interface PodSpecLike {
  containers?: Container[];
  initContainers?: Container[];
}

export interface SetImageArgs {
  args: string[];
  selector?: string;
  all?: boolean;
}

export interface SetEnvArgs extends SetImageArgs {
  /** -c: only these containers (default: all). */
  containers?: string;
  list?: boolean;
  overwrite?: boolean;
}

/** Where a kind keeps its pod spec: the object's own spec for pods, the pod template's for workloads. */
export function podSpecPath(def: KindDefinition): string[] {
  if (def.kind === 'Pod') return ['spec'];
  if (['Deployment', 'ReplicaSet', 'StatefulSet', 'DaemonSet', 'Job'].includes(def.kind)) return ['spec', 'template', 'spec'];
  throw new CliError(`${def.resource} does not have a pod template; set works on pods, deployments and replicasets`);
}

function podSpecOf(obj: KubeObject, path: readonly string[]): PodSpecLike {
  let at: unknown = obj;
  for (const key of path) at = (at as Record<string, unknown> | undefined)?.[key];
  return (at ?? {}) as PodSpecLike;
}

/** Wraps a pod spec change in the object's path to it: {spec:{template:{spec:...}}}. */
function nest(path: readonly string[], value: unknown): Record<string, unknown> {
  return path.reduceRight<Record<string, unknown>>((inner, key) => ({ [key]: inner }), value as Record<string, unknown>);
}

/** Splits TYPE NAME... from NAME=VALUE pairs (and, for env, NAME- removals). */
function splitPairs(args: readonly string[], removals: boolean): { resources: string[]; set: [string, string][]; remove: string[] } {
  const resources: string[] = [];
  const set: [string, string][] = [];
  const remove: string[] = [];
  for (const arg of args) {
    const eq = arg.indexOf('=');
    if (eq > 0) set.push([arg.slice(0, eq), arg.slice(eq + 1)]);
    else if (removals && arg.length > 1 && arg.endsWith('-')) remove.push(arg.slice(0, -1));
    else resources.push(arg);
  }
  return { resources, set, remove };
}

/** The containers with new images; `*` names every container. Unknown names are kubectl's error. */
export function updateImages(
  spec: PodSpecLike,
  images: readonly [string, string][],
): { containers: Container[]; initContainers?: Container[]; changed: boolean } {
  let changed = false;
  const seen = new Set<string>();
  const apply = (list: Container[] | undefined) =>
    list?.map((c) => {
      for (const [name, image] of images) {
        if (name !== '*' && name !== c.name) continue;
        seen.add(name);
        if (c.image !== image) {
          changed = true;
          c = { ...c, image };
        }
      }
      return c;
    });
  const containers = apply(spec.containers) ?? [];
  const initContainers = apply(spec.initContainers);
  for (const [name] of images) if (!seen.has(name)) throw new CliError(`unable to find container named "${name}"`);
  return { containers, ...(initContainers ? { initContainers } : {}), changed };
}

/** One container's env after setting and removing variables; order kept, new ones appended. */
export function updateEnv(
  env: readonly EnvVar[] | undefined,
  set: readonly [string, string][],
  remove: readonly string[],
): { env: EnvVar[]; changed: boolean } {
  let out = [...(env ?? [])];
  let changed = false;
  for (const [name, value] of set) {
    const i = out.findIndex((e) => e.name === name);
    if (i < 0) {
      out.push({ name, value });
      changed = true;
    } else if (out[i]!.value !== value || out[i]!.valueFrom) {
      out[i] = { name, value };
      changed = true;
    }
  }
  const kept = out.filter((e) => !remove.includes(e.name));
  if (kept.length !== out.length) changed = true;
  out = kept;
  return { env: out, changed };
}

/** `--list`: kubectl's listing of a container's variables. */
export function listEnv(kind: string, name: string, container: Container): string {
  let text = `# ${kind} ${name}, container ${container.name}\n`;
  for (const e of container.env ?? []) {
    if (e.valueFrom) {
      const [source, ref] = Object.entries(e.valueFrom).find(([, v]) => v !== undefined) ?? ['', {}];
      const what = ref?.fieldPath ?? ref?.resource ?? (ref?.name ? `${ref.name} key ${String(ref.key)}` : '');
      text += `# ${e.name} from ${source === 'fieldRef' ? 'field path' : source === 'resourceFieldRef' ? 'resource' : source === 'secretKeyRef' ? 'secret' : 'configmap'} ${String(what)}\n`;
    } else {
      text += `${e.name}=${e.value ?? ''}\n`;
    }
  }
  return text;
}

async function patchSpec(ctx: CliContext, def: KindDefinition, obj: KubeObject, path: readonly string[], spec: Partial<PodSpecLike>): Promise<void> {
  const namespace = def.namespaced ? obj.metadata.namespace : undefined;
  // Whole container lists in a merge patch, with the resourceVersion read: a change made in between is a conflict, not lost.
  await ctx
    .client()
    .patch(def, { namespace, name: obj.metadata.name ?? '' }, { metadata: { resourceVersion: obj.metadata.resourceVersion }, ...nest(path, spec) });
}

export async function runSetImage(ctx: CliContext, args: SetImageArgs): Promise<number> {
  const { resources, set } = splitPairs(args.args, false);
  if (set.length === 0) throw new CliError('at least one image update is required');
  if (resources.length === 0) throw new CliError('one or more resources must be specified as <resource> <name> or <resource>/<name>');
  for (const { def, obj } of await fetchTargets(ctx, { resources, selector: args.selector, all: args.all })) {
    const path = podSpecPath(def);
    const { changed, ...spec } = updateImages(podSpecOf(obj, path), set);
    // kubectl says nothing for an object whose images were already these.
    if (!changed) continue;
    await patchSpec(ctx, def, obj, path, spec);
    ctx.out(`${objectRef(def, obj)} image updated\n`);
  }
  return 0;
}

export async function runSetEnv(ctx: CliContext, args: SetEnvArgs): Promise<number> {
  const { resources, set, remove } = splitPairs(args.args, true);
  if (resources.length === 0) throw new CliError('one or more resources must be specified as <resource> <name> or <resource>/<name>');
  if (!args.list && set.length === 0 && remove.length === 0) throw new CliError('at least one environment variable must be provided');
  const wanted = (c: Container) => !args.containers || args.containers === '*' || args.containers === c.name;
  for (const { def, obj } of await fetchTargets(ctx, { resources, selector: args.selector, all: args.all })) {
    const path = podSpecPath(def);
    const spec = podSpecOf(obj, path);
    const containers = (spec.containers ?? []).filter(wanted);
    if (args.containers && containers.length === 0) throw new CliError(`unable to find container named ${args.containers}`);
    if (args.list) {
      for (const c of containers) ctx.out(listEnv(def.kind, obj.metadata.name ?? '', c));
      continue;
    }
    if (args.overwrite === false) {
      for (const c of containers) {
        const clash = c.env?.find((e) => set.some(([k]) => k === e.name));
        if (clash)
          throw new CliError(`${def.resource}/${obj.metadata.name} '${clash.name}' already has a value (${clash.value ?? ''}), and --overwrite is false`);
      }
    }
    let changed = false;
    const updated = (spec.containers ?? []).map((c) => {
      if (!wanted(c)) return c;
      const next = updateEnv(c.env, set, remove);
      changed ||= next.changed;
      return { ...c, env: next.env };
    });
    if (changed) await patchSpec(ctx, def, obj, path, { containers: updated });
    ctx.out(`${objectRef(def, obj)} env updated\n`);
  }
  return 0;
}
