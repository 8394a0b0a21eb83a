// The function controller's decision: which version the spec means (made, built or reused), its ReplicaSet, the soft or hard handover from the old one, history, and status.
import { BUILD_REQUEST_ANNOTATION, FUNCTION_LABEL, FUNCTION_VERSION_LABEL, type FunctionObject, type FunctionStatus } from '../../core/api/function.js';
import { versionMatches, versionObjectName, type FunctionVersion, type FunctionVersionStatus } from '../../core/api/function-version.js';
import type { Condition, OwnerReference } from '../../core/api/meta.js';
import type { ReplicaSet } from '../../core/api/replicaset.js';
import { buildInputsHash, FUNCTION_PORT } from '../../runtime/image-factory/build-context.js';

/** Old versions (and their ReplicaSets, at 0) kept for rollback, as a Deployment's revisionHistoryLimit. */
export const VERSION_HISTORY_LIMIT = 10;
/** Seconds a stopping pod gets beyond the request timeout, to finish its last request and exit. */
export const DRAIN_MARGIN_SECONDS = 5;

export type FunctionEvent = { type: 'Normal' | 'Warning'; reason: string; message: string };

export type FunctionAction =
  /** Create the FunctionVersion, then write its first status (a build to start, or an image reused). */
  | { type: 'createVersion'; body: Record<string, unknown>; status: FunctionVersionStatus; build: boolean; events: FunctionEvent[] }
  /** Start (or restart) the build of an existing version. */
  | { type: 'build'; version: FunctionVersion; request?: string; events: FunctionEvent[] }
  /** Give an existing version the image of an earlier one (its status was never written: a master stopped between the two writes). */
  | { type: 'reuseImage'; version: FunctionVersion; status: FunctionVersionStatus; events: FunctionEvent[] }
  | { type: 'createReplicaSet'; body: Record<string, unknown> }
  | { type: 'scale'; rs: ReplicaSet; replicas: number; events: FunctionEvent[] }
  | { type: 'deleteVersion'; version: FunctionVersion; rs?: ReplicaSet };

export interface FunctionPlan {
  actions: FunctionAction[];
  status: FunctionStatus;
}

export interface FunctionInputs {
  /** This function's versions (controller-owned by it). */
  versions: readonly FunctionVersion[];
  /** This function's ReplicaSets (controller-owned by it). */
  replicaSets: readonly ReplicaSet[];
  /** Names of versions this process is building right now (a version Building without a build here lost it to a restart). */
  building: ReadonlySet<string>;
  /** The runtime template's hash (part of every build-inputs hash). */
  templateHash: string;
  /** The HTTP trigger, e.g. http://10.0.0.1:8090/function/hello. */
  url?: string;
  now: Date;
}

export function ownerReferenceToFunction(fn: FunctionObject): OwnerReference {
  return { apiVersion: 'minik8s.io/v1', kind: 'Function', name: fn.metadata.name!, uid: fn.metadata.uid!, controller: true, blockOwnerDeletion: true };
}

function versionLabels(fn: FunctionObject, version: number): Record<string, string> {
  return { [FUNCTION_LABEL]: fn.metadata.name!, [FUNCTION_VERSION_LABEL]: String(version) };
}

/** The FunctionVersion for version N of the function's current spec. */
export function versionBody(fn: FunctionObject, version: number, buildHash: string): Record<string, unknown> {
  return {
    apiVersion: 'minik8s.io/v1',
    kind: 'FunctionVersion',
    metadata: {
      name: versionObjectName(fn.metadata.name!, version),
      namespace: fn.metadata.namespace,
      labels: versionLabels(fn, version),
      ownerReferences: [ownerReferenceToFunction(fn)],
    },
    spec: { function: fn.metadata.name, version, template: fn.spec, buildHash },
  };
}

/** The ReplicaSet `NAME-vN` running version N's image (the contract's pod shape: port 8080 `http`, /healthz readiness, drain time). */
export function replicaSetBody(fn: FunctionObject, version: FunctionVersion, replicas: number): Record<string, unknown> {
  const n = version.spec.version;
  const t = version.spec.template;
  const labels = versionLabels(fn, n);
  const env = [
    ...(t.env ?? []).map((e) => ({ name: e.name, value: e.value })),
    { name: 'MINIK8S_FUNCTION_NAME', value: fn.metadata.name! },
    { name: 'MINIK8S_FUNCTION_VERSION', value: String(n) },
    { name: 'MINIK8S_HANDLER', value: t.handler },
  ];
  return {
    apiVersion: 'apps/v1',
    kind: 'ReplicaSet',
    metadata: { name: versionObjectName(fn.metadata.name!, n), namespace: fn.metadata.namespace, labels, ownerReferences: [ownerReferenceToFunction(fn)] },
    spec: {
      replicas,
      selector: { matchLabels: labels },
      template: {
        metadata: { labels },
        spec: {
          containers: [
            {
              name: 'function',
              image: version.status?.image,
              ports: [{ name: 'http', containerPort: FUNCTION_PORT, protocol: 'TCP' }],
              env,
              ...(t.resources ? { resources: t.resources } : {}),
              readinessProbe: { httpGet: { path: '/healthz', port: FUNCTION_PORT }, periodSeconds: 1, timeoutSeconds: 1, failureThreshold: 3 },
            },
          ],
          // The runtime drains on SIGTERM: a request in flight may take up to the timeout.
          terminationGracePeriodSeconds: t.timeoutSeconds + DRAIN_MARGIN_SECONDS,
        },
      },
    },
  };
}

/** The version the spec means: the serving one when it matches, else the newest matching. */
export function matchingVersion(fn: FunctionObject, versions: readonly FunctionVersion[]): FunctionVersion | undefined {
  const matching = versions.filter((v) => !v.metadata.deletionTimestamp && versionMatches(v, fn.spec));
  return matching.find((v) => v.spec.version === fn.status?.version) ?? matching.sort((a, b) => b.spec.version - a.spec.version)[0];
}

function setCondition(conditions: readonly Condition[], next: Condition, now: string): Condition[] {
  const prev = conditions.find((c) => c.type === next.type);
  const same = prev && prev.status === next.status && prev.reason === next.reason && prev.message === next.message;
  const merged: Condition = same ? prev : { ...next, lastTransitionTime: prev && prev.status === next.status ? (prev.lastTransitionTime ?? now) : now };
  return [...conditions.filter((c) => c.type !== next.type), merged].sort((a, b) => a.type.localeCompare(b.type));
}

/** The whole decision for one Function; see the contract in the README's "Functions" section. */
export function planFunction(fn: FunctionObject, inputs: FunctionInputs): FunctionPlan {
  const now = inputs.now.toISOString();
  const name = fn.metadata.name!;
  const request = fn.metadata.annotations?.[BUILD_REQUEST_ANNOTATION];
  const actions: FunctionAction[] = [];
  const versions = [...inputs.versions].sort((a, b) => a.spec.version - b.spec.version);
  const rsOf = (n: number) => inputs.replicaSets.find((rs) => rs.metadata.name === versionObjectName(name, n));
  const prev = fn.status ?? {};
  let serving = prev.version;
  let build: FunctionStatus['build'] = prev.build;
  let built: Condition;

  if (fn.metadata.deletionTimestamp) return { actions, status: prev };

  /** An earlier version built from the same inputs, whose image a version can take instead of a build. */
  const donorFor = (hash: string, except?: number) =>
    versions.filter((v) => v.spec.version !== except && v.spec.buildHash === hash && v.status?.phase === 'Succeeded' && v.status.image).pop();
  const reuseStatus = (donor: FunctionVersion): FunctionVersionStatus => ({
    phase: 'Succeeded',
    image: donor.status!.image!,
    tag: donor.status!.tag,
    reusedFrom: donor.spec.version,
    message: `reused the image of version ${donor.spec.version} (same code and requirements): no build`,
    ...(request ? { request } : {}),
    completionTime: now,
  });
  const target = matchingVersion(fn, versions);
  if (!target) {
    // A new version: reuse the image of an earlier one with the same build inputs, else build.
    const number = Math.max(0, serving ?? 0, ...versions.map((v) => v.spec.version)) + 1;
    const hash = buildInputsHash(fn.spec, inputs.templateHash);
    const donor = donorFor(hash);
    const events: FunctionEvent[] = [];
    let status: FunctionVersionStatus;
    if (donor) {
      status = reuseStatus(donor);
      events.push({ type: 'Normal', reason: 'VersionCreated', message: `Created version ${number}: ${status.message}` });
    } else {
      status = { phase: 'Building', step: 'queued', ...(request ? { request } : {}), startTime: now };
      events.push({ type: 'Normal', reason: 'VersionCreated', message: `Created version ${number}` });
      events.push({ type: 'Normal', reason: 'BuildStarted', message: `Building the image of version ${number}` });
    }
    actions.push({ type: 'createVersion', body: versionBody(fn, number, hash), status, build: !donor, events });
    build = {
      version: number,
      phase: status.phase!,
      ...(status.step ? { step: status.step } : {}),
      ...(status.message ? { message: status.message } : {}),
      ...(request ? { request } : {}),
    };
    built = donor
      ? { type: 'Built', status: 'True', reason: 'ImageReused', message: `version ${number}: ${status.message}` }
      : { type: 'Built', status: 'Unknown', reason: 'Building', message: `building version ${number}` };
  } else {
    const n = target.spec.version;
    let vs = target.status ?? {};
    const here = inputs.building.has(target.metadata.name!);
    const lost = vs.phase === 'Building' && !here;
    const retry = vs.phase === 'Failed' && request !== undefined && request !== vs.request && !here;
    const donor = vs.phase === undefined && !here ? donorFor(target.spec.buildHash, n) : undefined;
    if (donor) {
      vs = reuseStatus(donor);
      actions.push({
        type: 'reuseImage',
        version: target,
        status: vs,
        events: [{ type: 'Normal', reason: 'VersionCreated', message: `Version ${n}: ${vs.message}` }],
      });
    }
    // A build of ours in progress: Building, even before its first status write (an old failure is not this request's answer).
    const finished = vs.phase === 'Succeeded' || (vs.phase === 'Failed' && vs.request === request);
    if (here && !finished) {
      build = { version: n, phase: 'Building', step: vs.phase === 'Building' && vs.step ? vs.step : 'queued', ...(request ? { request } : {}) };
      built = { type: 'Built', status: 'Unknown', reason: 'Building', message: `building version ${n}${vs.step ? `: ${vs.step}` : ''}` };
    } else if ((vs.phase === undefined && !donor) || lost || retry) {
      // Never started (its status was not written), lost to a master restart, or asked for again after a failure.
      const why = retry ? 'again, as asked' : lost ? 'again (the build in progress was lost with a master restart)' : '';
      actions.push({
        type: 'build',
        version: target,
        ...(request ? { request } : {}),
        events: [{ type: 'Normal', reason: 'BuildStarted', message: `Building the image of version ${n}${why ? ` ${why}` : ''}` }],
      });
      build = { version: n, phase: 'Building', step: 'queued', ...(request ? { request } : {}) };
      built = { type: 'Built', status: 'Unknown', reason: 'Building', message: `building version ${n}` };
    } else {
      build = {
        version: n,
        phase: vs.phase ?? 'Building',
        ...(vs.step && vs.phase === 'Building' ? { step: vs.step } : {}),
        ...(vs.message ? { message: vs.message } : {}),
        ...(request ? { request } : {}),
      };
      built =
        vs.phase === 'Succeeded'
          ? { type: 'Built', status: 'True', reason: vs.reusedFrom ? 'ImageReused' : 'BuildSucceeded', message: `version ${n}: ${vs.tag ?? vs.image ?? ''}` }
          : vs.phase === 'Failed'
            ? { type: 'Built', status: 'False', reason: 'BuildFailed', message: `version ${n}: ${vs.message ?? 'the build failed'}` }
            : { type: 'Built', status: 'Unknown', reason: 'Building', message: `building version ${n}${vs.step ? `: ${vs.step}` : ''}` };
    }

    if (vs.phase === 'Succeeded' && vs.image && !retry) {
      // The target is built: it serves (or is rolled to) now.
      const rs = rsOf(n);
      const old = serving !== undefined && serving !== n ? rsOf(serving) : undefined;
      const hard = fn.spec.updateStrategy === 'Hard';
      const { minScale, maxScale } = fn.spec.scaling;
      // Soft: the new version starts with the old one's pods, so capacity carries over; Hard: from minScale (the next request cold-starts it).
      const initial = Math.min(maxScale, Math.max(minScale, hard || !old ? 0 : (old.spec.replicas ?? 0)));
      if (!rs) actions.push({ type: 'createReplicaSet', body: replicaSetBody(fn, target, initial) });
      else if (serving !== n && (rs.spec.replicas ?? 0) < initial) {
        // A rollback to a version whose ReplicaSet was kept at 0: it takes over the pods.
        actions.push({ type: 'scale', rs, replicas: initial, events: [] });
      }
      serving = n;
      const desired = rs ? (serving !== prev.version ? Math.max(rs.spec.replicas ?? 0, initial) : (rs.spec.replicas ?? 0)) : initial;
      const ready = rs?.status?.readyReplicas ?? 0;
      // Old versions go to 0: Hard at once; Soft once the new one serves (a Ready pod) or needs no pods at all.
      const handover = hard || ready >= 1 || desired === 0;
      for (const other of inputs.replicaSets) {
        if (other.metadata.name === versionObjectName(name, n) || (other.spec.replicas ?? 0) === 0) continue;
        if (!handover) continue;
        actions.push({
          type: 'scale',
          rs: other,
          replicas: 0,
          events: [
            { type: 'Normal', reason: 'ScaledOldVersion', message: `Scaled ${other.metadata.name} to 0 (${hard ? 'hard update' : `version ${n} is serving`})` },
          ],
        });
      }
    }
  }

  // History: the oldest versions beyond the limit go, with their ReplicaSets (never the serving or wanted one, nor one with pods).
  const keep = new Set([serving, target?.spec.version]);
  const old = versions.filter((v) => !keep.has(v.spec.version) && !v.metadata.deletionTimestamp && !inputs.building.has(v.metadata.name!));
  for (const v of old.slice(0, Math.max(0, old.length - VERSION_HISTORY_LIMIT))) {
    const rs = rsOf(v.spec.version);
    if (rs && ((rs.spec.replicas ?? 0) > 0 || (rs.status?.replicas ?? 0) > 0)) continue;
    actions.push({ type: 'deleteVersion', version: v, ...(rs ? { rs } : {}) });
  }

  // Status.
  const servingVersion = versions.find((v) => v.spec.version === serving) ?? (serving === target?.spec.version ? target : undefined);
  const servingRs = serving !== undefined ? rsOf(serving) : undefined;
  const created = actions.find((a): a is Extract<FunctionAction, { type: 'createReplicaSet' }> => a.type === 'createReplicaSet');
  const desired = servingRs?.spec.replicas ?? (created?.body.spec as { replicas?: number } | undefined)?.replicas ?? 0;
  const readyReplicas = servingRs?.status?.readyReplicas ?? 0;
  let readyCondition: Condition;
  if (serving === undefined) {
    readyCondition =
      build?.phase === 'Failed'
        ? { type: 'Ready', status: 'False', reason: 'BuildFailed', message: `no version can serve: the build of version ${build.version} failed` }
        : { type: 'Ready', status: 'False', reason: 'NoVersion', message: 'the first version is being built' };
  } else if (desired === 0) {
    readyCondition = { type: 'Ready', status: 'True', reason: 'ScaledToZero', message: `version ${serving} has no pods: the next request starts one` };
  } else if (readyReplicas >= 1) {
    readyCondition = { type: 'Ready', status: 'True', reason: 'PodsReady', message: `version ${serving}: ${readyReplicas} of ${desired} pods ready` };
  } else {
    readyCondition = { type: 'Ready', status: 'False', reason: 'PodsNotReady', message: `version ${serving}: 0 of ${desired} pods ready` };
  }
  let conditions = [...(prev.conditions ?? [])];
  conditions = setCondition(conditions, built, now);
  conditions = setCondition(conditions, readyCondition, now);
  const status: FunctionStatus = {
    ...(fn.metadata.generation !== undefined ? { observedGeneration: fn.metadata.generation } : {}),
    ...(serving !== undefined ? { version: serving } : {}),
    ...(servingVersion?.status?.image ? { image: servingVersion.status.image } : prev.image && serving === prev.version ? { image: prev.image } : {}),
    ...(inputs.url ? { url: inputs.url } : prev.url ? { url: prev.url } : {}),
    replicas: desired,
    readyReplicas,
    conditions,
    ...(build ? { build } : {}),
  };
  return { actions, status };
}
