// `minik8s function create|update|delete|rollback`: a Function from local code and flags, then its build followed to the end.
import { randomBytes } from 'node:crypto';
import { BUILD_REQUEST_ANNOTATION, functionKind, VERSION_FIELDS, type FunctionObject } from '../core/api/function.js';
import { functionVersionKind, versionTemplate, type FunctionVersion } from '../core/api/function-version.js';
import { AlreadyExistsError, ConflictError, NotFoundError } from '../core/errors.js';
import { CliError } from './cli-error.js';
import type { CliContext } from './context.js';
import { readCodeSource, readRequirements } from './function-code.js';
import { waitForFunction } from './function-wait.js';

export interface FunctionWriteArgs {
  name?: string;
  /** -f: handler file, directory, or .zip/.tar.gz. */
  file?: string;
  requirements?: string;
  handler?: string;
  /** --env K=V, repeatable. */
  env: string[];
  minScale?: string;
  maxScale?: string;
  target?: string;
  idleGrace?: string;
  timeout?: string;
  /** update: --soft or --hard (the strategy of this and later updates). */
  soft?: boolean;
  hard?: boolean;
  /** Follow the build until the version serves (default true). */
  wait: boolean;
}

type Spec = Record<string, unknown>;

function requireName(name: string | undefined, command: string): string {
  if (!name)
    throw new CliError(
      `function ${command} needs a name: minik8s function ${command} NAME${command === 'create' || command === 'update' ? ' -f handler.py' : ''}`,
    );
  return name;
}

/** A whole number flag within bounds. */
export function parseCount(flag: string, value: string | undefined, min: number, max: number): number | undefined {
  if (value === undefined) return undefined;
  const v = value.trim().replace(/s$/, '');
  if (!/^\d+$/.test(v) || Number(v) < min || Number(v) > max) throw new CliError(`invalid --${flag} "${value}": a whole number from ${min} to ${max}`);
  return Number(v);
}

/** `--env K=V` (repeatable) -> env entries, in order, the last of a name winning. */
export function parseEnv(pairs: readonly string[]): { name: string; value: string }[] {
  const byName = new Map<string, string>();
  for (const pair of pairs) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw new CliError(`invalid --env "${pair}": use NAME=VALUE`);
    byName.set(pair.slice(0, eq), pair.slice(eq + 1));
  }
  return [...byName].map(([name, value]) => ({ name, value }));
}

/** The spec fields the flags set (scaling merged over `base`). */
export async function specFromFlags(args: FunctionWriteArgs, base: Spec = {}): Promise<Spec> {
  const spec: Spec = { ...base };
  if (args.file) {
    const source = await readCodeSource(args.file);
    spec.code = source.code;
    if (source.impliedHandler && !args.handler) spec.handler = source.impliedHandler;
    if (source.requirements !== undefined && !args.requirements) spec.requirements = source.requirements;
  }
  if (args.requirements) spec.requirements = await readRequirements(args.requirements);
  if (args.handler) spec.handler = args.handler;
  if (args.env.length) spec.env = parseEnv(args.env);
  const scaling: Spec = { ...((base.scaling as Spec | undefined) ?? {}) };
  const set = (key: string, value: number | undefined) => {
    if (value !== undefined) scaling[key] = value;
  };
  set('minScale', parseCount('min-scale', args.minScale, 0, 1000));
  set('maxScale', parseCount('max-scale', args.maxScale, 1, 1000));
  set('target', parseCount('target', args.target, 1, 1000));
  set('idleGraceSeconds', parseCount('idle-grace', args.idleGrace, 0, 86_400));
  if (Object.keys(scaling).length) spec.scaling = scaling;
  const timeout = parseCount('timeout', args.timeout, 1, 900);
  if (timeout !== undefined) spec.timeoutSeconds = timeout;
  if (args.soft && args.hard) throw new CliError('--soft and --hard cannot be given together');
  if (args.soft) spec.updateStrategy = 'Soft';
  if (args.hard) spec.updateStrategy = 'Hard';
  return spec;
}

/** A fresh build request: the controller answers it in status.build.request. */
export function newBuildRequest(now: Date): string {
  return `${now.toISOString()}-${randomBytes(3).toString('hex')}`;
}

async function follow(ctx: CliContext, fn: FunctionObject, request: string, verb: string, version?: number): Promise<number> {
  const name = fn.metadata.name!;
  const done = await waitForFunction(ctx, {
    name,
    namespace: ctx.namespace,
    request,
    generation: fn.metadata.generation ?? 1,
    ...(version !== undefined ? { version } : {}),
  });
  ctx.out(
    `function/${name} ${verb}: version ${done.version} serving${done.url ? ` at ${done.url}` : ''}${done.note && /reused|no build/.test(done.note) ? ` (${done.note})` : ''}\n`,
  );
  return 0;
}

export async function runFunctionCreate(ctx: CliContext, args: FunctionWriteArgs): Promise<number> {
  const name = requireName(args.name, 'create');
  if (!args.file) throw new CliError('function create needs the code: -f handler.py, -f DIR or -f code.zip');
  const request = newBuildRequest(ctx.now());
  const body = {
    apiVersion: 'minik8s.io/v1',
    kind: 'Function',
    metadata: { name, namespace: ctx.namespace, annotations: { [BUILD_REQUEST_ANNOTATION]: request } },
    spec: await specFromFlags(args),
  };
  let created: FunctionObject;
  try {
    created = (await ctx.client().create(functionKind, body, { namespace: ctx.namespace })) as FunctionObject;
  } catch (err) {
    if (err instanceof AlreadyExistsError) throw new CliError(`function "${name}" already exists: change it with minik8s function update ${name} -f ...`);
    throw err;
  }
  ctx.out(`function/${name} created\n`);
  if (!args.wait) return 0;
  return follow(ctx, created, request, 'ready');
}

/** GET, change, PUT with the resourceVersion read; a write that lost to another (a 409) is done again on the new state. */
async function rewrite(ctx: CliContext, name: string, change: (fn: FunctionObject) => Promise<FunctionObject> | FunctionObject): Promise<FunctionObject> {
  const client = ctx.client();
  for (let attempt = 0; ; attempt++) {
    let live: FunctionObject;
    try {
      live = (await client.get(functionKind, { namespace: ctx.namespace, name })) as FunctionObject;
    } catch (err) {
      if (err instanceof NotFoundError)
        throw new CliError(
          `function "${name}" not found${ctx.namespace !== 'default' ? ` in namespace ${ctx.namespace}` : ''}: create it with minik8s function create ${name} -f ...`,
        );
      throw err;
    }
    const next = await change(live);
    try {
      return (await client.replace(functionKind, { namespace: ctx.namespace, name }, next)) as FunctionObject;
    } catch (err) {
      if (err instanceof ConflictError && attempt < 5) continue;
      throw err;
    }
  }
}

function withRequest(fn: FunctionObject, request: string): FunctionObject['metadata'] {
  return { ...fn.metadata, annotations: { ...(fn.metadata.annotations ?? {}), [BUILD_REQUEST_ANNOTATION]: request } };
}

export async function runFunctionUpdate(ctx: CliContext, args: FunctionWriteArgs): Promise<number> {
  const name = requireName(args.name, 'update');
  const request = newBuildRequest(ctx.now());
  const updated = await rewrite(ctx, name, async (live) => {
    const spec = await specFromFlags(args, live.spec as unknown as Spec);
    return { ...live, metadata: withRequest(live, request), spec: spec as unknown as FunctionObject['spec'] };
  });
  const strategy = updated.spec.updateStrategy === 'Hard' ? " (hard: the old version's pods stop once the new one is built)" : '';
  ctx.out(`function/${name} updated${strategy}\n`);
  if (!args.wait) return 0;
  return follow(ctx, updated, request, 'updated');
}

export interface FunctionRollbackArgs {
  name?: string;
  /** --to V (default: the newest built version older than the serving one). */
  to?: string;
  soft?: boolean;
  hard?: boolean;
  wait: boolean;
}

/** The version a rollback goes to: --to V, else the newest built one below the serving one. Pure. */
export function rollbackTarget(versions: readonly FunctionVersion[], serving: number | undefined, to: number | undefined): FunctionVersion {
  const built = versions.filter((v) => v.status?.phase === 'Succeeded').sort((a, b) => b.spec.version - a.spec.version);
  if (to !== undefined) {
    const v = versions.find((x) => x.spec.version === to);
    if (!v)
      throw new CliError(
        `version ${to} does not exist (kept: ${
          versions
            .map((x) => x.spec.version)
            .sort((a, b) => a - b)
            .join(', ') || 'none'
        })`,
      );
    if (v.status?.phase !== 'Succeeded')
      throw new CliError(`version ${to} has no image (its build ${v.status?.phase === 'Failed' ? 'failed' : 'has not finished'}): it cannot serve`);
    return v;
  }
  const older = built.find((v) => serving === undefined || v.spec.version < serving);
  if (!older) throw new CliError(`no earlier built version to roll back to${serving !== undefined ? ` (version ${serving} serves)` : ''}`);
  return older;
}

export async function runFunctionRollback(ctx: CliContext, args: FunctionRollbackArgs): Promise<number> {
  const name = requireName(args.name, 'rollback');
  const to = parseCount('to', args.to, 1, Number.MAX_SAFE_INTEGER);
  if (args.soft && args.hard) throw new CliError('--soft and --hard cannot be given together');
  const request = newBuildRequest(ctx.now());
  let target: FunctionVersion | undefined;
  const updated = await rewrite(ctx, name, async (live) => {
    const versions = (await ctx.client().list(functionVersionKind, { namespace: ctx.namespace, labelSelector: `minik8s.io/function=${name}` }))
      .items as FunctionVersion[];
    const mine = versions.filter((v) => v.metadata.ownerReferences?.some((r) => r.uid === live.metadata.uid));
    target = rollbackTarget(mine, live.status?.version, to);
    // The version's code and settings come back whole; scaling, triggers and the update strategy stay the function's own.
    const spec: Spec = { ...(live.spec as unknown as Spec) };
    for (const field of VERSION_FIELDS) delete spec[field];
    Object.assign(spec, versionTemplate(target.spec.template));
    if (args.soft) spec.updateStrategy = 'Soft';
    if (args.hard) spec.updateStrategy = 'Hard';
    return { ...live, metadata: withRequest(live, request), spec: spec as unknown as FunctionObject['spec'] };
  });
  ctx.out(`function/${name} rolling back to version ${target!.spec.version}\n`);
  if (!args.wait) return 0;
  return follow(ctx, updated, request, 'rolled back', target!.spec.version);
}

export async function runFunctionDelete(ctx: CliContext, args: { names: string[]; wait: boolean }): Promise<number> {
  if (args.names.length === 0) throw new CliError('function delete needs a name: minik8s function delete NAME');
  const { runDelete } = await import('./delete.js');
  // Foreground: the Function goes once its versions, ReplicaSets and pods are gone, so "deleted" means all of it.
  return runDelete(ctx, { resources: ['function', ...args.names], cascade: 'foreground', wait: args.wait });
}
