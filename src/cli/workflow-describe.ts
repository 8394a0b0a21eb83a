// `minik8s describe workflow`: its definition's states as a table, and its latest executions; the execution table `workflow executions` prints too.
import type { State, Workflow } from '../core/api/workflow.js';
import type { WorkflowExecutionSummary } from '../core/api/workflow-execution.js';
import type { DescribeWriter } from './describe-writer.js';
import { ageSince, alignColumns } from './printers.js';

/** How many executions describe lists. */
export const DESCRIBED_EXECUTIONS = 5;

/** `850ms`, `1.2s`, `3m4s`, `2h5m`. */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.round(ms))}ms`;
  if (ms < 60_000) return `${(Math.round(ms / 100) / 10).toFixed(1).replace(/\.0$/, '')}s`;
  const s = Math.round(ms / 1000);
  if (s < 3600) return `${Math.floor(s / 60)}m${s % 60 ? `${s % 60}s` : ''}`;
  const m = Math.floor(s / 60);
  return `${Math.floor(m / 60)}h${m % 60 ? `${m % 60}m` : ''}`;
}

export function duration(e: { startTime: string; stopTime?: string }, now: Date): string {
  const start = Date.parse(e.startTime);
  const stop = e.stopTime ? Date.parse(e.stopTime) : now.getTime();
  if (Number.isNaN(start) || Number.isNaN(stop)) return '<unknown>';
  return formatDuration(stop - start) + (e.stopTime ? '' : '+');
}

/** One line of JSON, cut to `max` characters. */
export function brief(value: unknown, max = 60): string {
  if (value === undefined) return '';
  const text = typeof value === 'string' ? JSON.stringify(value) : (JSON.stringify(value) ?? 'null');
  return text.length > max ? `${text.slice(0, max - 3)}...` : text;
}

/** `workflow executions NAME`: NAME STATUS DURATION ERROR AGE (wide adds START, STOP, EVENTS), newest first. */
export function executionsTable(items: readonly WorkflowExecutionSummary[], now: Date, options: { wide?: boolean; noHeaders?: boolean } = {}): string {
  const header = ['NAME', 'STATUS', 'DURATION', 'ERROR', 'AGE', ...(options.wide ? ['START', 'STOP', 'EVENTS'] : [])];
  const rows = items.map((e) => [
    e.metadata.name,
    e.status,
    duration(e, now),
    e.error ?? '<none>',
    ageSince(e.startTime, now),
    ...(options.wide ? [e.startTime, e.stopTime ?? '<none>', String(e.events)] : []),
  ]);
  return alignColumns(options.noHeaders ? rows : [header, ...rows]);
}

/** Where a state goes: its Next, its Choices' and Catchers' targets, or how it ends. */
export function stateFlow(state: State): string {
  if (state.Type === 'Succeed') return '(succeed)';
  if (state.Type === 'Fail') return '(fail)';
  if (state.Type === 'Choice') {
    const targets = [...(state.Choices ?? []).map((c) => c.Next ?? '?'), ...(state.Default ? [`default ${state.Default}`] : [])];
    return targets.join(', ');
  }
  const out = state.End ? ['(end)'] : [state.Next ?? '?'];
  for (const c of state.Catch ?? []) out.push(`catch ${c.ErrorEquals.join('|')} ${c.Next}`);
  return out.join(', ');
}

/** What a state does, in a cell. */
export function stateDetail(state: State): string {
  switch (state.Type) {
    case 'Task': {
      const parts = [state.Resource ?? ''];
      if (state.TimeoutSeconds !== undefined) parts.push(`timeout ${state.TimeoutSeconds}s`);
      for (const r of state.Retry ?? []) parts.push(`retry ${r.ErrorEquals.join('|')} x${r.MaxAttempts ?? 3}`);
      return parts.join(', ');
    }
    case 'Choice':
      return `${(state.Choices ?? []).length} rule(s)`;
    case 'Wait':
      return state.Seconds !== undefined ? `${state.Seconds}s` : (state.SecondsPath ?? state.Timestamp ?? state.TimestampPath ?? '');
    case 'Pass':
      return state.Result !== undefined ? `result ${brief(state.Result, 40)}` : '';
    case 'Fail':
      return [state.Error, state.Cause].filter(Boolean).join(': ');
    default:
      return '';
  }
}

export function describeWorkflow(w: DescribeWriter, wf: Workflow, executions: readonly WorkflowExecutionSummary[] | undefined, now: Date): void {
  const def = wf.spec.definition;
  w.field(0, 'CreationTimestamp', wf.metadata.creationTimestamp ? new Date(wf.metadata.creationTimestamp).toUTCString().replace(/GMT$/, '+0000') : undefined);
  if (def.Comment) w.field(0, 'Comment', def.Comment);
  w.field(0, 'Start At', def.StartAt);
  if (def.TimeoutSeconds !== undefined) w.field(0, 'Timeout', `${def.TimeoutSeconds}s`);
  w.section(0, 'States');
  const rows = [['NAME', 'TYPE', 'NEXT', 'DETAIL'], ...Object.entries(def.States).map(([name, s]) => [name, s.Type, stateFlow(s), stateDetail(s)])];
  w.raw(1, alignColumns(rows));
  if (executions === undefined) return;
  if (executions.length === 0) {
    w.field(0, 'Executions', '<none>');
    return;
  }
  w.section(0, `Executions (latest ${Math.min(DESCRIBED_EXECUTIONS, executions.length)} of ${executions.length})`);
  w.raw(1, executionsTable(executions.slice(0, DESCRIBED_EXECUTIONS), now));
}
