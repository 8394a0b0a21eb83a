// `minik8s rollout status|history|undo|pause|resume deploy/NAME`: follow and steer Deployment rollouts, as kubectl rollout.
import { stringify } from 'yaml';
import { daemonSetKind, type DaemonSet } from '../core/api/daemonset.js';
import { deploymentKind, type Deployment } from '../core/api/deployment.js';
import type { PodTemplateSpec } from '../core/api/pod.js';
import { replicaSetKind, type ReplicaSet } from '../core/api/replicaset.js';
import { kindCollectionPath, kindObjectPath } from '../core/client/api-client.js';
import { CHANGE_CAUSE_ANNOTATION, POD_TEMPLATE_HASH_LABEL, revisionOf } from '../core/api/deployment.js';
import { canonicalJson } from '../core/api/canonical-json.js';
import { CliError } from './cli-error.js';
import type { CliContext } from './context.js';
import { parseResourceArgs } from './resolve-kind.js';

export const ROLLOUT_COMMANDS = ['status', 'history', 'undo', 'pause', 'resume'] as const;
export type RolloutCommand = (typeof ROLLOUT_COMMANDS)[number];

export interface RolloutArgs {
  command: RolloutCommand;
  resources: string[];
  /** undo: the revision to go back to (default: the one before the current). */
  toRevision?: string;
  /** history: show this revision's pod template instead of the list. */
  revision?: string;
  /** status: keep waiting (default) or report once. */
  watch?: boolean;
  /** status: give up after this many seconds (0: never). */
  timeoutSeconds?: string;
}

/** The one Deployment named: `deploy/NAME` or `deployment NAME`. */
export function rolloutTarget(resources: readonly string[]): string {
  const targets = parseResourceArgs(resources).targets.flatMap((t) => t.names.map((name) => ({ def: t.def, name })));
  if (targets.length !== 1) throw new CliError('rollout needs exactly one resource: deploy/NAME');
  const { def, name } = targets[0]!;
  if (def.kind !== 'Deployment') throw new CliError(`no rollout for ${def.resource}: only deployments have rollouts`);
  return name;
}

/** `rollout status ds/NAME`: the DaemonSet named, or undefined when the target is something else. */
export function daemonSetRolloutTarget(resources: readonly string[]): string | undefined {
  const targets = parseResourceArgs(resources).targets.flatMap((t) => t.names.map((name) => ({ def: t.def, name })));
  return targets.length === 1 && targets[0]!.def.kind === 'DaemonSet' ? targets[0]!.name : undefined;
}

/** What `rollout status` says about a DaemonSet now, as kubectl's DaemonSetStatusViewer. */
export function daemonSetRolloutStatusMessage(ds: DaemonSet): { done: boolean; message: string } {
  const name = ds.metadata.name;
  const s = ds.status ?? {};
  if ((ds.metadata.generation ?? 0) > (s.observedGeneration ?? 0)) return { done: false, message: 'Waiting for daemon set spec update to be observed...' };
  const desired = s.desiredNumberScheduled ?? 0;
  const updated = s.updatedNumberScheduled ?? 0;
  if (updated < desired)
    return { done: false, message: `Waiting for daemon set "${name}" rollout to finish: ${updated} out of ${desired} new pods have been updated...` };
  const available = s.numberAvailable ?? 0;
  if (available < desired)
    return { done: false, message: `Waiting for daemon set "${name}" rollout to finish: ${available} of ${desired} updated pods are available...` };
  return { done: true, message: `daemon set "${name}" successfully rolled out` };
}

/**
 * What `rollout status` says about a Deployment now, as kubectl's DeploymentStatusViewer:
 * done when the controller has seen the latest spec and every replica is updated and available.
 */
export function rolloutStatusMessage(d: Deployment): { done: boolean; message: string; failed?: boolean } {
  const name = d.metadata.name;
  const s = d.status ?? {};
  if ((d.metadata.generation ?? 0) > (s.observedGeneration ?? 0)) return { done: false, message: 'Waiting for deployment spec update to be observed...' };
  const progressing = s.conditions?.find((c) => c.type === 'Progressing');
  if (progressing?.reason === 'ProgressDeadlineExceeded') return { done: false, failed: true, message: `deployment "${name}" exceeded its progress deadline` };
  const updated = s.updatedReplicas ?? 0;
  const want = d.spec.replicas;
  if (updated < want)
    return { done: false, message: `Waiting for deployment "${name}" rollout to finish: ${updated} out of ${want} new replicas have been updated...` };
  if ((s.replicas ?? 0) > updated)
    return {
      done: false,
      message: `Waiting for deployment "${name}" rollout to finish: ${(s.replicas ?? 0) - updated} old replicas are pending termination...`,
    };
  if ((s.availableReplicas ?? 0) < updated)
    return {
      done: false,
      message: `Waiting for deployment "${name}" rollout to finish: ${s.availableReplicas ?? 0} of ${updated} updated replicas are available...`,
    };
  return { done: true, message: `deployment "${name}" successfully rolled out` };
}

/** The Deployment's ReplicaSets with a revision, oldest revision first. */
export function history(d: Deployment, rses: readonly ReplicaSet[]): ReplicaSet[] {
  return rses
    .filter((rs) => rs.metadata.ownerReferences?.some((r) => r.controller && r.uid === d.metadata.uid) && revisionOf(rs) > 0)
    .sort((a, b) => revisionOf(a) - revisionOf(b));
}

export function formatHistory(d: Deployment, rses: readonly ReplicaSet[]): string {
  const rows = history(d, rses).map((rs) => [String(revisionOf(rs)), rs.metadata.annotations?.[CHANGE_CAUSE_ANNOTATION] ?? '<none>']);
  const width = Math.max('REVISION'.length, ...rows.map((r) => r[0]!.length)) + 2;
  const lines = [['REVISION', 'CHANGE-CAUSE'], ...rows].map(([rev, cause]) => `${rev!.padEnd(width)}${cause}`);
  return `deployment.apps/${d.metadata.name}\n${lines.join('\n')}\n\n`;
}

/** One revision's pod template, as `kubectl rollout history --revision N` shows it. */
export function formatRevision(d: Deployment, rses: readonly ReplicaSet[], revision: number): string {
  const rs = history(d, rses).find((r) => revisionOf(r) === revision);
  if (!rs) throw new CliError(`unable to find the specified revision ${revision}`);
  const template = stringify(templateForUndo(rs))
    .trimEnd()
    .split('\n')
    .map((line) => `  ${line}`)
    .join('\n');
  const cause = rs.metadata.annotations?.[CHANGE_CAUSE_ANNOTATION];
  return `deployment.apps/${d.metadata.name} with revision #${revision}\n${cause ? `Change-Cause: ${cause}\n` : ''}Pod Template:\n${template}\n\n`;
}

/** The template of a ReplicaSet as the Deployment would hold it: without the hash label. */
export function templateForUndo(rs: ReplicaSet): PodTemplateSpec {
  const labels = { ...(rs.spec.template.metadata?.labels ?? {}) };
  delete labels[POD_TEMPLATE_HASH_LABEL];
  return { ...rs.spec.template, metadata: { ...rs.spec.template.metadata, labels } };
}

/** The revision `undo` goes back to: the one asked for, else the newest before the current. */
export function undoTarget(d: Deployment, rses: readonly ReplicaSet[], toRevision: number | undefined): ReplicaSet {
  const revs = history(d, rses);
  if (toRevision !== undefined && toRevision > 0) {
    const rs = revs.find((r) => revisionOf(r) === toRevision);
    if (!rs) throw new CliError(`unable to find specified revision ${toRevision} in history`);
    return rs;
  }
  if (revs.length < 2) throw new CliError(`no rollout history found for deployment "${d.metadata.name}"`);
  return revs[revs.length - 2]!;
}

/** --timeout: seconds, or a duration such as 30s, 5m, 1h (0: no limit). */
export function parseTimeout(value: string | undefined): number {
  if (value === undefined) return 0;
  const m = /^(\d+)(s|m|h)?$/.exec(value.trim());
  if (!m) throw new CliError(`invalid argument "${value}" for "--timeout" flag: use seconds or a duration such as 30s, 5m`);
  return Number(m[1]) * ({ s: 1, m: 60, h: 3600 } as Record<string, number>)[m[2] ?? 's']!;
}

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener(
      'abort',
      () => {
        clearTimeout(t);
        resolve();
      },
      { once: true },
    );
  });

export async function runRollout(ctx: CliContext, args: RolloutArgs): Promise<number> {
  if (!args.command) throw new CliError(`rollout needs a command: ${ROLLOUT_COMMANDS.join(', ')}`);
  if (!(ROLLOUT_COMMANDS as readonly string[]).includes(args.command))
    throw new CliError(`unknown rollout command "${args.command}": use one of ${ROLLOUT_COMMANDS.join(', ')}`);
  const daemonSet = args.command === 'status' ? daemonSetRolloutTarget(args.resources) : undefined;
  if (daemonSet !== undefined) return daemonSetRolloutStatus(ctx, args, daemonSet);
  const name = rolloutTarget(args.resources);
  const client = ctx.client();
  const path = kindObjectPath(deploymentKind, name, ctx.namespace);
  const get = async () => (await client.request('GET', path)) as Deployment;
  const replicaSets = async () => ((await client.request('GET', kindCollectionPath(replicaSetKind, ctx.namespace))) as { items: ReplicaSet[] }).items;

  switch (args.command) {
    case 'status': {
      const timeout = parseTimeout(args.timeoutSeconds);
      const deadline = timeout > 0 ? ctx.now().getTime() + timeout * 1000 : Infinity;
      let last = '';
      for (;;) {
        const state = rolloutStatusMessage(await get());
        if (state.failed) throw new CliError(state.message);
        if (state.message !== last) ctx.out(`${state.message}\n`);
        last = state.message;
        if (state.done) return 0;
        if (args.watch === false) return 1;
        if (ctx.signal?.aborted) return 1;
        if (ctx.now().getTime() >= deadline) throw new CliError('timed out waiting for the condition');
        await sleep(500, ctx.signal);
      }
    }
    case 'history': {
      const revision = args.revision === undefined ? undefined : Number(args.revision);
      if (revision !== undefined && (!Number.isSafeInteger(revision) || revision <= 0))
        throw new CliError(`invalid argument "${args.revision}" for "--revision" flag`);
      const d = await get();
      ctx.out(revision === undefined ? formatHistory(d, await replicaSets()) : formatRevision(d, await replicaSets(), revision));
      return 0;
    }
    case 'undo': {
      const toRevision = args.toRevision === undefined ? undefined : Number(args.toRevision);
      if (toRevision !== undefined && (!Number.isSafeInteger(toRevision) || toRevision < 0))
        throw new CliError(`invalid argument "${args.toRevision}" for "--to-revision" flag`);
      const d = await get();
      const rs = undoTarget(d, await replicaSets(), toRevision);
      const template = templateForUndo(rs);
      if (canonicalJson(template) === canonicalJson(d.spec.template)) {
        ctx.out(`deployment.apps/${name} skipped rollback (current template already matches revision ${revisionOf(rs)})\n`);
        return 0;
      }
      // A full replace guarded by resourceVersion: a merge patch would merge the old labels into the new ones.
      await client.request('PUT', path, { body: { ...d, spec: { ...d.spec, template } } });
      ctx.out(`deployment.apps/${name} rolled back\n`);
      return 0;
    }
    case 'pause':
    case 'resume': {
      const pause = args.command === 'pause';
      const d = await get();
      if (!!d.spec.paused === pause) throw new CliError(`deployments.apps "${name}" is ${pause ? 'already paused' : 'not paused'}`);
      await client.request('PATCH', path, { body: { spec: { paused: pause } }, contentType: 'application/merge-patch+json' });
      ctx.out(`deployment.apps/${name} ${pause ? 'paused' : 'resumed'}\n`);
      return 0;
    }
  }
}

async function daemonSetRolloutStatus(ctx: CliContext, args: RolloutArgs, name: string): Promise<number> {
  const client = ctx.client();
  const path = kindObjectPath(daemonSetKind, name, ctx.namespace);
  const timeout = parseTimeout(args.timeoutSeconds);
  const deadline = timeout > 0 ? ctx.now().getTime() + timeout * 1000 : Infinity;
  let last = '';
  for (;;) {
    const ds = (await client.request('GET', path)) as DaemonSet;
    if (ds.spec.updateStrategy.type !== 'RollingUpdate') throw new CliError('rollout status is only available for RollingUpdate strategy type');
    const state = daemonSetRolloutStatusMessage(ds);
    if (state.message !== last) ctx.out(`${state.message}\n`);
    last = state.message;
    if (state.done) return 0;
    if (args.watch === false) return 1;
    if (ctx.signal?.aborted) return 1;
    if (ctx.now().getTime() >= deadline) throw new CliError('timed out waiting for the condition');
    await sleep(500, ctx.signal);
  }
}
