// `minik8s describe KIND NAME`: a readable key/value view of an object (Pods in detail) and its Events.
import type { KindDefinition } from '../core/api/kind.js';
import type { KubeObject } from '../core/api/meta.js';
import { ApiError } from '../core/errors.js';
import type { ApiClient } from '../core/client/api-client.js';
import type { Event } from '../core/api/event.js';
import type { Node } from '../core/api/node.js';
import { podKind, type ContainerState, type ContainerStatus, type Pod, type PodSpec, type PodStatus } from '../core/api/pod.js';
import { describeNode } from './describe-node.js';
import { describeHpa } from './describe-hpa.js';
import type { HorizontalPodAutoscaler } from '../core/api/horizontalpodautoscaler.js';
import { describeFunction } from './function-describe.js';
import { functionVersionKind, type FunctionVersion } from '../core/api/function-version.js';
import type { FunctionObject } from '../core/api/function.js';
import { describeService } from './describe-service.js';
import { describeDeployment, describeProbe } from './describe-deployment.js';
import { describeJob } from './describe-job.js';
import type { Job } from '../core/api/job.js';
import { deploymentKind, type Deployment } from '../core/api/deployment.js';
import { replicaSetKind, type ReplicaSet } from '../core/api/replicaset.js';
import { describeGpuJob, describeSecret } from './gpujob-describe.js';
import type { GpuJob } from '../core/api/gpujob.js';
import type { Secret } from '../core/api/secret.js';
import { workflowKind, type Workflow } from '../core/api/workflow.js';
import { kindObjectPath } from '../core/client/api-client.js';
import type { WorkflowExecutionSummary } from '../core/api/workflow-execution.js';
import { describeWorkflow } from './workflow-describe.js';
import { endpointsKind, type Endpoints } from '../core/api/endpoints.js';
import type { Service } from '../core/api/service.js';
import { ConnectionError, formatError } from './cli-error.js';
import type { CliContext } from './context.js';
import { describeTime, DescribeWriter } from './describe-writer.js';
import { ageSince, alignColumns } from './printers.js';
import { parseResourceArgs } from './resolve-kind.js';
import { LAST_APPLIED_ANNOTATION } from './three-way-patch.js';

export interface DescribeArgs {
  resources: string[];
  selector?: string;
  allNamespaces?: boolean;
}

function keyValues(map: Record<string, string> | undefined, skip: readonly string[] = []): string[] {
  return Object.keys(map ?? {})
    .filter((k) => !skip.includes(k))
    .sort()
    .map((k) => `${k}=${map![k]}`);
}

function scalar(v: unknown): string {
  return typeof v === 'string' ? v : JSON.stringify(v);
}

/** Spec and status of kinds without a dedicated layout: nested maps as indented sections. */
function describeValue(w: DescribeWriter, indent: number, key: string, value: unknown): void {
  if (value === null || value === undefined) return;
  if (Array.isArray(value)) {
    if (value.every((v) => typeof v !== 'object' || v === null)) {
      w.field(indent, key, value.map(scalar).join(', '));
      return;
    }
    w.section(indent, key);
    // Named items (containers, ports) are headed by their name, as kubectl does; others by index.
    value.forEach((item, idx) => {
      const name = (item as { name?: unknown } | null)?.name;
      describeValue(w, indent + 1, typeof name === 'string' ? name : `[${idx}]`, item);
    });
    return;
  }
  if (typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>);
    if (entries.length === 0) {
      w.field(indent, key, '<none>');
      return;
    }
    w.section(indent, key);
    for (const [k, v] of entries) describeValue(w, indent + 1, k, v);
    return;
  }
  w.field(indent, key, scalar(value));
}

function capitalize(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}

function describeMeta(w: DescribeWriter, def: KindDefinition, obj: KubeObject): void {
  w.field(0, 'Name', obj.metadata.name);
  if (def.namespaced) w.field(0, 'Namespace', obj.metadata.namespace);
  w.field(0, 'Labels', keyValues(obj.metadata.labels));
  // The last-applied configuration is a copy of the manifest: noise here, as kubectl agrees.
  w.field(0, 'Annotations', keyValues(obj.metadata.annotations, [LAST_APPLIED_ANNOTATION]));
}

function containerState(state: ContainerState | undefined): { text: string; details: [string, string | undefined][] } {
  if (!state || typeof state !== 'object') return { text: 'Waiting', details: [] };
  if (state.running) return { text: 'Running', details: [['Started', describeTime(state.running.startedAt)]] };
  if (state.terminated) {
    const t = state.terminated;
    return {
      text: 'Terminated',
      details: [
        ['Reason', t.reason],
        ['Exit Code', t.exitCode === undefined ? undefined : String(t.exitCode)],
        ['Started', describeTime(t.startedAt)],
        ['Finished', describeTime(t.finishedAt)],
      ],
    };
  }
  if (state.waiting)
    return {
      text: 'Waiting',
      details: [
        ['Reason', state.waiting.reason],
        ['Message', state.waiting.message],
      ],
    };
  return { text: 'Waiting', details: [] };
}

/** Describe reads what the server sent, though spec and status may be half filled: hence the Partials. */
function describePod(w: DescribeWriter, obj: KubeObject): void {
  const pod = obj as Pod;
  const spec: Partial<PodSpec> = pod.spec ?? {};
  const status: Partial<PodStatus> = pod.status ?? {};
  describeMetaPod(w, pod, spec, status);
  const statuses = status.containerStatuses ?? [];
  w.section(0, 'Containers');
  for (const c of spec.containers ?? []) {
    const cs: Partial<ContainerStatus> = statuses.find((s) => s.name === c.name) ?? {};
    w.section(1, c.name);
    w.field(2, 'Container ID', cs.containerID);
    w.field(2, 'Image', c.image);
    if (c.command?.length) w.field(2, 'Command', c.command);
    if (c.args?.length) w.field(2, 'Args', c.args);
    const ports = (c.ports ?? []).map((p) => `${p.containerPort}/${p.protocol ?? 'TCP'}${p.name ? ` (${p.name})` : ''}`);
    w.field(2, ports.length > 1 ? 'Ports' : 'Port', ports.length ? ports.join(', ') : '<none>');
    const state = containerState(cs.state);
    w.field(2, 'State', state.text);
    for (const [k, v] of state.details) if (v !== undefined) w.field(3, k, v);
    if (cs.lastState && Object.keys(cs.lastState).length) {
      const last = containerState(cs.lastState);
      w.field(2, 'Last State', last.text);
      for (const [k, v] of last.details) if (v !== undefined) w.field(3, k, v);
    }
    w.field(2, 'Ready', cs.ready === undefined ? 'False' : capitalize(String(cs.ready)));
    w.field(2, 'Restart Count', String(cs.restartCount ?? 0));
    for (const [label, list] of [
      ['Limits', c.resources?.limits],
      ['Requests', c.resources?.requests],
    ] as const) {
      if (list && Object.keys(list).length) {
        w.section(2, label);
        for (const k of Object.keys(list).sort()) w.field(3, k, String(list[k]));
      }
    }
    for (const [label, key] of [
      ['Liveness', 'livenessProbe'],
      ['Readiness', 'readinessProbe'],
      ['Startup', 'startupProbe'],
    ] as const) {
      if (c[key]) w.field(2, label, describeProbe(c[key]));
    }
    if (c.env?.length) {
      w.section(2, 'Environment');
      for (const e of c.env) w.field(3, e.name, e.value ?? JSON.stringify(e.valueFrom ?? ''));
    } else {
      w.field(2, 'Environment', '<none>');
    }
    const mounts = (c.volumeMounts ?? []).map((m) => `${m.mountPath} from ${m.name} (${m.readOnly ? 'ro' : 'rw'})`);
    if (mounts.length) {
      w.section(2, 'Mounts');
      for (const m of mounts) w.raw(3, `${m}\n`);
    } else {
      w.field(2, 'Mounts', '<none>');
    }
  }
  const conditions = status.conditions ?? [];
  if (conditions.length) {
    w.section(0, 'Conditions');
    w.raw(1, alignColumns([['Type', 'Status'], ...conditions.map((c) => [String(c.type), String(c.status)])]));
  }
  const volumes = spec.volumes ?? [];
  if (volumes.length) {
    w.section(0, 'Volumes');
    for (const v of volumes) {
      w.section(1, v.name);
      if (v.emptyDir) w.field(2, 'Type', "EmptyDir (a temporary directory that shares a pod's lifetime)");
      else if (v.hostPath) {
        w.field(2, 'Type', 'HostPath (bare host directory volume)');
        w.field(2, 'Path', v.hostPath.path);
      } else
        w.field(
          2,
          'Type',
          Object.keys(v)
            .filter((k) => k !== 'name')
            .join(', '),
        );
    }
  }
  w.field(0, 'QoS Class', status.qosClass);
}

function describeMetaPod(w: DescribeWriter, pod: Pod, spec: Partial<PodSpec>, status: Partial<PodStatus>): void {
  describeMeta(w, { namespaced: true } as KindDefinition, pod);
  const node = spec.nodeName ? (status.hostIP ? `${spec.nodeName}/${status.hostIP}` : spec.nodeName) : '<none>';
  // kubectl's order puts Node and Start Time before Labels; ours keeps metadata together for all kinds.
  w.field(0, 'Node', node);
  w.field(0, 'Start Time', describeTime(status.startTime));
  w.field(0, 'Status', pod.metadata?.deletionTimestamp ? 'Terminating' : (status.phase ?? 'Pending'));
  if (status.reason) w.field(0, 'Reason', status.reason);
  if (status.message) w.field(0, 'Message', status.message);
  w.field(0, 'IP', status.podIP);
  const owner = (pod.metadata?.ownerReferences ?? []).find((r) => r.controller);
  if (owner) w.field(0, 'Controlled By', `${owner.kind}/${owner.name}`);
}

function describeGeneric(w: DescribeWriter, def: KindDefinition, obj: KubeObject): void {
  describeMeta(w, def, obj);
  w.field(0, 'CreationTimestamp', describeTime(obj.metadata.creationTimestamp));
  const owner = (obj.metadata.ownerReferences ?? []).find((r) => r.controller);
  if (owner) w.field(0, 'Controlled By', `${owner.kind}/${owner.name}`);
  for (const [key, value] of Object.entries(obj)) {
    if (key === 'apiVersion' || key === 'kind' || key === 'metadata') continue;
    describeValue(w, 0, capitalize(key), value);
  }
}

/** kubectl's Age cell for events: `5m`, or `3m (x4 over 10m)` for repeated ones. */
export function eventAge(event: Event, now: Date): string {
  const last = event.lastTimestamp ?? event.eventTime ?? event.metadata?.creationTimestamp;
  const first = event.firstTimestamp ?? last;
  const count = Number(event.count ?? 1);
  const age = ageSince(last, now);
  return count > 1 ? `${age} (x${count} over ${ageSince(first, now)})` : age;
}

/** Renders an Events section (table or `<none>`). */
export function renderEvents(events: readonly Event[], now: Date): string {
  if (events.length === 0) return 'Events:  <none>\n';
  const sorted = [...events].sort((a, b) => String(a.lastTimestamp ?? a.eventTime ?? '').localeCompare(String(b.lastTimestamp ?? b.eventTime ?? '')));
  const rows = [
    ['Type', 'Reason', 'Age', 'From', 'Message'],
    ['----', '------', '----', '----', '-------'],
    ...sorted.map((e) => [
      String(e.type ?? 'Normal'),
      String(e.reason ?? ''),
      eventAge(e, now),
      [e.source?.component ?? e.reportingComponent, e.source?.host].filter(Boolean).join(', '),
      String(e.message ?? '').trim(),
    ]),
  ];
  return `Events:\n${alignColumns(rows)
    .split('\n')
    .filter(Boolean)
    .map((l) => `  ${l}`)
    .join('\n')}\n`;
}

async function fetchEvents(client: ApiClient, def: KindDefinition, obj: KubeObject): Promise<Event[]> {
  const name = obj.metadata.name ?? '';
  const namespace = obj.metadata.namespace;
  const path = def.namespaced && namespace ? `/api/v1/namespaces/${encodeURIComponent(namespace)}/events` : '/api/v1/events';
  try {
    const list = (await client.request('GET', path, {
      query: { fieldSelector: `involvedObject.name=${name},involvedObject.kind=${def.kind}` },
    })) as { items?: Event[] } | undefined;
    // Filter here too, in case the server ignored a selector it does not index.
    return (list?.items ?? []).filter((e) => e.involvedObject?.name === name && e.involvedObject?.kind === def.kind);
  } catch (err) {
    // No Event kind on this server yet, or a selector it refuses: describe still shows the object.
    if (err instanceof ApiError) return [];
    throw err;
  }
}

/** What a layout needs besides the object: a Node's pods. */
export interface RenderContext {
  pods?: readonly Pod[];
  /** A Service's Endpoints (same name). */
  endpoints?: Endpoints;
  /** A Function's kept versions. */
  functionVersions?: readonly FunctionVersion[];
  /** A Workflow's executions, newest first (undefined: not fetched). */
  workflowExecutions?: readonly WorkflowExecutionSummary[];
  now?: Date;
}

/** The full text for one object. */
export function renderObject(def: KindDefinition, obj: KubeObject, context: RenderContext = {}): string {
  const w = new DescribeWriter();
  if (def.kind === 'Pod') describePod(w, obj);
  else if (def.kind === 'Node') {
    describeMeta(w, def, obj);
    describeNode(w, obj as Node, context.pods ?? [], context.now ?? new Date());
  } else if (def.kind === 'Service') {
    describeMeta(w, def, obj);
    describeService(w, obj as Service, context.endpoints);
  } else if (def.kind === 'HorizontalPodAutoscaler') {
    describeMeta(w, def, obj);
    describeHpa(w, obj as HorizontalPodAutoscaler);
  } else if (def.kind === 'Function') {
    describeMeta(w, def, obj);
    describeFunction(w, obj as FunctionObject, context.functionVersions ?? [], context.now ?? new Date());
  } else if (def.kind === 'Workflow') {
    describeMeta(w, def, obj);
    describeWorkflow(w, obj as Workflow, context.workflowExecutions, context.now ?? new Date());
  } else if (def.kind === 'GpuJob') {
    describeMeta(w, def, obj);
    describeGpuJob(w, obj as GpuJob);
  } else if (def.kind === 'Secret') {
    describeMeta(w, def, obj);
    describeSecret(w, obj as Secret);
  } else describeGeneric(w, def, obj);
  return w.render();
}

/** A Service's Endpoints, if there are any. */
async function endpointsOf(client: ApiClient, service: KubeObject): Promise<Endpoints | undefined> {
  try {
    return (await client.get(endpointsKind, { namespace: service.metadata.namespace, name: service.metadata.name ?? '' })) as Endpoints;
  } catch (err) {
    if (err instanceof ApiError) return undefined;
    throw err;
  }
}

/** A Workflow's executions, newest first; undefined when the server does not serve them. */
async function executionsOf(client: ApiClient, wf: KubeObject): Promise<WorkflowExecutionSummary[] | undefined> {
  try {
    const list = (await client.request('GET', `${kindObjectPath(workflowKind, wf.metadata.name ?? '', wf.metadata.namespace)}/executions`)) as {
      items?: WorkflowExecutionSummary[];
    };
    return list.items ?? [];
  } catch (err) {
    if (err instanceof ApiError) return undefined;
    throw err;
  }
}

/** A Function's versions (labelled with its name, controlled by it). */
async function versionsOf(client: ApiClient, fn: KubeObject): Promise<FunctionVersion[]> {
  try {
    const list = await client.list(functionVersionKind, { namespace: fn.metadata.namespace, labelSelector: `minik8s.io/function=${fn.metadata.name}` });
    return (list.items as FunctionVersion[]).filter((v) => v.metadata.ownerReferences?.some((r) => r.uid === fn.metadata.uid));
  } catch (err) {
    if (err instanceof ApiError) return [];
    throw err;
  }
}

/** The pods bound to a node, from every namespace. */
async function podsOnNode(client: ApiClient, nodeName: string): Promise<Pod[]> {
  try {
    return (await client.list(podKind, { fieldSelector: `spec.nodeName=${nodeName}` })).items as Pod[];
  } catch (err) {
    if (err instanceof ApiError) return [];
    throw err;
  }
}

/** A Deployment in kubectl's layout, with the ReplicaSets it controls and its events. */
async function describeDeploymentOf(client: ApiClient, obj: KubeObject, now: Date): Promise<string> {
  let replicaSets: ReplicaSet[] | undefined;
  try {
    replicaSets = (await client.list(replicaSetKind, { namespace: obj.metadata.namespace })).items as ReplicaSet[];
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
  }
  const events = await fetchEvents(client, deploymentKind, obj);
  return describeDeployment({ deployment: obj as Deployment, replicaSets, events, now });
}

export async function runDescribe(ctx: CliContext, args: DescribeArgs): Promise<number> {
  const { targets } = parseResourceArgs(args.resources);
  const client = ctx.client();
  let failed = false;
  const blocks: string[] = [];
  for (const { def, names } of targets) {
    const namespace = def.namespaced && !args.allNamespaces ? ctx.namespace : undefined;
    let objects: KubeObject[] = [];
    if (names.length) {
      for (const name of names) {
        try {
          objects.push(await client.get(def, { namespace, name }));
        } catch (err) {
          if (err instanceof ConnectionError) throw err;
          failed = true;
          ctx.err(formatError(err));
        }
      }
    } else {
      objects = (await client.list(def, { namespace, labelSelector: args.selector })).items;
    }
    for (const obj of objects) {
      if (def.kind === 'Deployment') {
        blocks.push(await describeDeploymentOf(client, obj, ctx.now()));
        continue;
      }
      if (def.kind === 'Job') {
        blocks.push(describeJob({ job: obj as Job, events: await fetchEvents(client, def, obj), now: ctx.now() }));
        continue;
      }
      const pods = def.kind === 'Node' ? await podsOnNode(client, obj.metadata.name ?? '') : undefined;
      const endpoints = def.kind === 'Service' ? await endpointsOf(client, obj) : undefined;
      const functionVersions = def.kind === 'Function' ? await versionsOf(client, obj) : undefined;
      const workflowExecutions = def.kind === 'Workflow' ? await executionsOf(client, obj) : undefined;
      const text =
        renderObject(def, obj, { pods, endpoints, functionVersions, workflowExecutions, now: ctx.now() }) +
        renderEvents(await fetchEvents(client, def, obj), ctx.now());
      blocks.push(text);
    }
  }
  if (blocks.length === 0 && !failed) {
    ctx.err(targets.every((t) => t.def.namespaced) && !args.allNamespaces ? `No resources found in ${ctx.namespace} namespace.\n` : 'No resources found\n');
  }
  // kubectl separates several objects with a blank line.
  ctx.out(blocks.join('\n\n'));
  return failed ? 1 : 0;
}
