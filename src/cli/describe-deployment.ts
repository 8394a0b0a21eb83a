// `minik8s describe deployment`: kubectl's layout for a Deployment: replicas, strategy, the pod template, conditions, its ReplicaSets and events.
import { canonicalJson } from '../core/api/canonical-json.js';
import { POD_TEMPLATE_HASH_LABEL, type Deployment } from '../core/api/deployment.js';
import type { Event } from '../core/api/event.js';
import type { Container, PodSpec, Probe, Volume } from '../core/api/pod.js';
import type { ReplicaSet } from '../core/api/replicaset.js';
import { ageSince } from '../core/api/table.js';
import { describeTime } from './describe-writer.js';
import { alignTabs } from './tab-writer.js';
import { LAST_APPLIED_ANNOTATION } from './three-way-patch.js';

/** kubectl hides its own last-applied annotation from describe; ours too. */
const HIDDEN_ANNOTATIONS = [LAST_APPLIED_ANNOTATION, 'kubectl.kubernetes.io/last-applied-configuration'];

/** Lines of `title:\tk=v`, one pair a line, the rest under the first value (kubectl's printLabelsMultiline). */
export function multiline(
  indent: string,
  title: string,
  map: Record<string, string> | undefined,
  separator: '=' | ': ',
  skip: readonly string[] = [],
): string[] {
  const keys = Object.keys(map ?? {})
    .filter((k) => !skip.includes(k))
    .sort();
  if (keys.length === 0) return [`${indent}${title}:\t<none>`];
  return keys.map((k, i) => `${i === 0 ? `${indent}${title}:` : indent}\t${k}${separator}${map![k]}`);
}

/** metav1.FormatLabelSelector: `a=b,c in (d,e)`, `<none>` for an empty one. */
export function formatLabelSelector(selector: Deployment['spec']['selector'] | undefined): string {
  const parts: string[] = [];
  const labels = selector?.matchLabels ?? {};
  for (const k of Object.keys(labels).sort()) parts.push(`${k}=${labels[k]}`);
  for (const e of selector?.matchExpressions ?? []) {
    const values = [...(e.values ?? [])].sort().join(',');
    if (e.operator === 'In') parts.push(`${e.key} in (${values})`);
    else if (e.operator === 'NotIn') parts.push(`${e.key} notin (${values})`);
    else if (e.operator === 'Exists') parts.push(e.key);
    else parts.push(`!${e.key}`);
  }
  return parts.length ? parts.join(',') : '<none>';
}

function envValue(e: NonNullable<Container['env']>[number]): string {
  const from = e.valueFrom;
  if (!from) return e.value ?? '';
  if (from.fieldRef) return ` (${from.fieldRef.apiVersion ?? 'v1'}:${from.fieldRef.fieldPath})`;
  if (from.secretKeyRef)
    return `<set to the key '${from.secretKeyRef.key}' in secret '${from.secretKeyRef.name}'>  Optional: ${Boolean(from.secretKeyRef.optional)}`;
  if (from.configMapKeyRef)
    return `<set to the key '${from.configMapKeyRef.key}' of config map '${from.configMapKeyRef.name}'>  Optional: ${Boolean(from.configMapKeyRef.optional)}`;
  return '';
}

/** kubectl's probe line: `http-get http://:8080/healthz delay=0s timeout=1s period=10s #success=1 #failure=3`. */
export function describeProbe(p: Probe): string {
  let handler = '<unknown>';
  if (p.httpGet) handler = `http-get ${String(p.httpGet.scheme ?? 'HTTP').toLowerCase()}://${p.httpGet.host ?? ''}:${p.httpGet.port}${p.httpGet.path ?? '/'}`;
  else if (p.tcpSocket) handler = `tcp-socket ${p.tcpSocket.host ?? ''}:${p.tcpSocket.port}`;
  else if (p.exec) handler = `exec [${(p.exec.command ?? []).join(' ')}]`;
  return `${handler} delay=${p.initialDelaySeconds ?? 0}s timeout=${p.timeoutSeconds ?? 1}s period=${p.periodSeconds ?? 10}s #success=${p.successThreshold ?? 1} #failure=${p.failureThreshold ?? 3}`;
}

/** One container of a template, as kubectl's describeContainers writes it (name one space in). */
function containerLines(c: Container): string[] {
  const lines = [`   ${c.name}:`, `    Image:\t${c.image}`];
  const ports = (c.ports ?? []).map((p) => `${p.containerPort}/${p.protocol ?? 'TCP'}`);
  const hostPorts = (c.ports ?? []).map((p) => `${p.hostPort ?? 0}/${p.protocol ?? 'TCP'}`);
  lines.push(`    ${ports.length > 1 ? 'Ports' : 'Port'}:\t${ports.join(', ') || '<none>'}`);
  lines.push(`    ${hostPorts.length > 1 ? 'Host Ports' : 'Host Port'}:\t${hostPorts.join(', ') || '<none>'}`);
  for (const [label, list] of [
    ['Command', c.command],
    ['Args', c.args],
  ] as const) {
    if (!list?.length) continue;
    lines.push(`    ${label}:`);
    for (const arg of list) for (const part of arg.split('\n')) lines.push(`      ${part}`);
  }
  for (const [label, list] of [
    ['Limits', c.resources?.limits],
    ['Requests', c.resources?.requests],
  ] as const) {
    if (!list || Object.keys(list).length === 0) continue;
    lines.push(`    ${label}:`);
    for (const k of Object.keys(list).sort()) lines.push(`      ${k}:\t${String(list[k])}`);
  }
  for (const [label, probe] of [
    ['Liveness', c.livenessProbe],
    ['Readiness', c.readinessProbe],
    ['Startup', c.startupProbe],
  ] as const) {
    if (probe) lines.push(`    ${label}:\t${describeProbe(probe)}`);
  }
  if (c.env?.length) {
    lines.push('    Environment:');
    for (const e of c.env) lines.push(`      ${e.name}:\t${envValue(e)}`);
  } else {
    lines.push('    Environment:\t<none>');
  }
  const mounts = c.volumeMounts ?? [];
  if (mounts.length) {
    lines.push('    Mounts:');
    for (const m of mounts) lines.push(`      ${m.mountPath} from ${m.name} (${m.readOnly ? 'ro' : 'rw'}${m.subPath ? `,path="${m.subPath}"` : ''})`);
  } else {
    lines.push('    Mounts:\t<none>');
  }
  return lines;
}

function volumeLines(v: Volume): string[] {
  const lines = [`   ${v.name}:`];
  if (v.emptyDir) {
    lines.push("    Type:\tEmptyDir (a temporary directory that shares a pod's lifetime)");
    lines.push(`    Medium:\t${v.emptyDir.medium ?? ''}`);
    lines.push(`    SizeLimit:\t${v.emptyDir.sizeLimit ?? '<unset>'}`);
  } else if (v.hostPath) {
    lines.push('    Type:\tHostPath (bare host directory volume)');
    lines.push(`    Path:\t${v.hostPath.path}`);
    lines.push(`    HostPathType:\t${v.hostPath.type ?? ''}`);
  } else if (v.configMap) {
    lines.push('    Type:\tConfigMap (a volume populated by a ConfigMap)');
    lines.push(`    Name:\t${v.configMap.name}`);
    lines.push(`    Optional:\t${Boolean(v.configMap.optional)}`);
  } else if (v.secret) {
    lines.push('    Type:\tSecret (a volume populated by a Secret)');
    lines.push(`    SecretName:\t${v.secret.secretName}`);
    lines.push(`    Optional:\t${Boolean(v.secret.optional)}`);
  } else if (v.persistentVolumeClaim) {
    lines.push('    Type:\tPersistentVolumeClaim (a reference to a PersistentVolumeClaim in the same namespace)');
    lines.push(`    ClaimName:\t${v.persistentVolumeClaim.claimName}`);
    lines.push(`    ReadOnly:\t${Boolean(v.persistentVolumeClaim.readOnly)}`);
  }
  return lines;
}

type Toleration = NonNullable<PodSpec['tolerations']>[number];

function formatToleration(t: Toleration): string {
  let s = t.key ?? '';
  if (t.value) s += `=${t.value}`;
  if (t.effect) s += `:${t.effect}`;
  if (t.operator === 'Exists' && !t.value) s += ' op=Exists';
  if (t.tolerationSeconds !== undefined) s += ` for ${t.tolerationSeconds}s`;
  return s;
}

/** kubectl's DescribePodTemplate, at the two-space indent a Deployment gives it. */
export function podTemplateLines(template: Deployment['spec']['template']): string[] {
  const spec: Partial<PodSpec> = template.spec ?? {};
  const lines = ['Pod Template:', ...multiline('  ', 'Labels', template.metadata?.labels, '=')];
  if (Object.keys(template.metadata?.annotations ?? {}).length) lines.push(...multiline('  ', 'Annotations', template.metadata?.annotations, ': '));
  if (spec.serviceAccountName) lines.push(`  Service Account:\t${spec.serviceAccountName}`);
  if (spec.initContainers?.length) {
    lines.push('  Init Containers:');
    for (const c of spec.initContainers) lines.push(...containerLines(c));
  }
  lines.push(spec.containers?.length ? '  Containers:' : '  Containers: <none>');
  for (const c of spec.containers ?? []) lines.push(...containerLines(c));
  if (spec.volumes?.length) {
    lines.push('  Volumes:');
    for (const v of spec.volumes) lines.push(...volumeLines(v));
  } else {
    lines.push('  Volumes:\t<none>');
  }
  if (spec.priorityClassName) lines.push(`  Priority Class Name:\t${spec.priorityClassName}`);
  lines.push(...multiline('  ', 'Node-Selectors', spec.nodeSelector, '='));
  const tolerations = spec.tolerations ?? [];
  if (tolerations.length === 0) lines.push('  Tolerations:\t<none>');
  else for (const [i, t] of tolerations.entries()) lines.push(`${i === 0 ? '  Tolerations:' : ''}\t${formatToleration(t)}`);
  return lines;
}

/** The template without the hash label the Deployment put on its ReplicaSet. */
function withoutHashLabel(template: ReplicaSet['spec']['template']): unknown {
  const labels = { ...(template.metadata?.labels ?? {}) };
  delete labels[POD_TEMPLATE_HASH_LABEL];
  return { ...template, metadata: { ...template.metadata, labels } };
}

/**
 * The Deployment's ReplicaSets (controlled by it), split as kubectl does: the new one runs its
 * current template (the oldest such, should there be two), the old ones are the rest that still
 * have pods or want some.
 */
export function splitOwnedReplicaSets(d: Deployment, all: readonly ReplicaSet[]): { newRs?: ReplicaSet; old: ReplicaSet[] } {
  const owned = all
    .filter((rs) => rs.metadata.ownerReferences?.some((r) => r.controller && r.uid === d.metadata.uid))
    .sort((a, b) => String(a.metadata.creationTimestamp ?? '').localeCompare(String(b.metadata.creationTimestamp ?? '')));
  const want = canonicalJson(d.spec.template);
  const newRs = owned.find((rs) => canonicalJson(withoutHashLabel(rs.spec.template)) === want);
  const old = owned.filter((rs) => rs !== newRs && ((rs.spec.replicas ?? 0) > 0 || (rs.status?.replicas ?? 0) > 0));
  return { ...(newRs ? { newRs } : {}), old };
}

function replicaSetsLine(rses: readonly ReplicaSet[]): string {
  if (rses.length === 0) return '<none>';
  return rses.map((rs) => `${rs.metadata.name} (${rs.status?.replicas ?? 0}/${rs.spec.replicas ?? 0} replicas created)`).join(', ');
}

/** kubectl's Age cell for an event: `5m`, or `3m (x4 over 10m)` when it repeated. */
function eventInterval(e: Event, now: Date): string {
  const last = e.lastTimestamp ?? e.eventTime ?? e.metadata?.creationTimestamp;
  const first = e.firstTimestamp ?? last;
  const count = Number(e.count ?? 1);
  return count > 1 ? `${ageSince(last, now)} (x${count} over ${ageSince(first, now)})` : ageSince(last, now);
}

/** kubectl's DescribeEvents, as tabbed lines. */
export function eventLines(events: readonly Event[], now: Date): string[] {
  if (events.length === 0) return ['Events:\t<none>'];
  const sorted = [...events].sort((a, b) => String(a.lastTimestamp ?? a.eventTime ?? '').localeCompare(String(b.lastTimestamp ?? b.eventTime ?? '')));
  return [
    'Events:',
    '  Type\tReason\tAge\tFrom\tMessage',
    '  ----\t------\t----\t----\t-------',
    ...sorted.map((e) => {
      const from = [e.source?.component ?? e.reportingComponent, e.source?.host].filter(Boolean).join(', ');
      return `  ${e.type ?? 'Normal'}\t${e.reason ?? ''}\t${eventInterval(e, now)}\t${from}\t${String(e.message ?? '').trim()}`;
    }),
  ];
}

export interface DeploymentDescribeInput {
  deployment: Deployment;
  /** The namespace's ReplicaSets (those the Deployment controls are picked out); undefined: not readable. */
  replicaSets?: readonly ReplicaSet[];
  events: readonly Event[];
  now: Date;
}

/** The whole `describe deployment` text. */
export function describeDeployment(input: DeploymentDescribeInput): string {
  const d = input.deployment;
  const meta = d.metadata;
  const status = d.status ?? {};
  const strategy = d.spec.strategy ?? {};
  const lines = [
    `Name:\t${meta.name}`,
    `Namespace:\t${meta.namespace}`,
    `CreationTimestamp:\t${describeTime(meta.creationTimestamp) ?? '<unknown>'}`,
    ...multiline('', 'Labels', meta.labels, '='),
    ...multiline('', 'Annotations', meta.annotations, ': ', HIDDEN_ANNOTATIONS),
    `Selector:\t${formatLabelSelector(d.spec.selector)}`,
    `Replicas:\t${d.spec.replicas ?? 1} desired | ${status.updatedReplicas ?? 0} updated | ${status.replicas ?? 0} total | ${status.availableReplicas ?? 0} available | ${status.unavailableReplicas ?? 0} unavailable`,
    `StrategyType:\t${strategy.type ?? 'RollingUpdate'}`,
    `MinReadySeconds:\t${d.spec.minReadySeconds ?? 0}`,
  ];
  if (strategy.rollingUpdate)
    lines.push(
      `RollingUpdateStrategy:\t${strategy.rollingUpdate.maxUnavailable ?? '25%'} max unavailable, ${strategy.rollingUpdate.maxSurge ?? '25%'} max surge`,
    );
  lines.push(...podTemplateLines(d.spec.template));
  const conditions = status.conditions ?? [];
  if (conditions.length) {
    // The space after the type is kubectl's: its tabwriter cell is one wider than the word.
    lines.push('Conditions:', '  Type\tStatus\tReason', '  ----\t------\t------');
    for (const c of conditions) lines.push(`  ${c.type} \t${c.status}\t${c.reason ?? ''}`);
  }
  if (input.replicaSets) {
    const { newRs, old } = splitOwnedReplicaSets(d, input.replicaSets);
    lines.push(`OldReplicaSets:\t${replicaSetsLine(old)}`, `NewReplicaSet:\t${replicaSetsLine(newRs ? [newRs] : [])}`);
  }
  lines.push(...eventLines(input.events, input.now));
  return alignTabs(`${lines.join('\n')}\n`);
}
