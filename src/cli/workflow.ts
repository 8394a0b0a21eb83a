// `minik8s workflow executions NAME` and `minik8s workflow execution NAME EXEC`: a workflow's execution records, and one with its history.
import { stringify } from 'yaml';
import { workflowKind } from '../core/api/workflow.js';
import { kindObjectPath } from '../core/client/api-client.js';
import type { HistoryEvent } from '../core/api/workflow-execution.js';
import type { WorkflowExecution, WorkflowExecutionSummary } from '../core/api/workflow-execution.js';
import { CliError } from './cli-error.js';
import type { CliContext } from './context.js';
import { DescribeWriter, describeTime } from './describe-writer.js';
import { alignColumns } from './printers.js';
import { brief, duration, executionsTable, formatDuration } from './workflow-describe.js';

export interface WorkflowExecutionsArgs {
  name?: string;
  output?: string;
  noHeaders?: boolean;
}

export interface WorkflowExecutionArgs {
  name?: string;
  execution?: string;
  output?: string;
}

const EXECUTION_OUTPUTS = ['json', 'yaml', 'wide'];

function outputFormat(value: string | undefined, allowed: readonly string[]): string | undefined {
  if (value === undefined || value === '') return undefined;
  if (!allowed.includes(value))
    throw new CliError(`unable to match a printer suitable for the output format "${value}", allowed formats are: ${allowed.join(',')}`);
  return value;
}

/** What one history event says, in a cell. */
export function eventDetail(e: HistoryEvent): string {
  switch (e.type) {
    case 'ExecutionStarted':
    case 'StateEntered':
      return brief(e.input);
    case 'StateExited':
      return `${brief(e.output, 50)}${e.next ? ` -> ${e.next}` : ''}`;
    case 'TaskScheduled':
      return `${e.function ?? ''} (attempt ${e.attempt ?? 1}) ${brief(e.input, 40)}`.trim();
    case 'TaskSucceeded':
    case 'ExecutionSucceeded':
      return brief(e.output);
    case 'TaskRetryScheduled':
      return `retry ${e.attempt ?? 1} in ${e.delaySeconds ?? 0}s after ${e.error ?? ''}`;
    case 'ErrorCaught':
      return `${e.error ?? ''} -> ${e.next ?? ''}`;
    default:
      return [e.error, e.cause].filter(Boolean).join(': ');
  }
}

/** `workflow execution NAME EXEC`: the record's fields, then its history as a table. */
export function renderExecution(e: WorkflowExecution, now: Date): string {
  const w = new DescribeWriter();
  w.field(0, 'Name', e.metadata.name);
  w.field(0, 'Namespace', e.metadata.namespace);
  w.field(0, 'Workflow', e.workflow);
  w.field(0, 'Status', e.status);
  w.field(0, 'Start Time', describeTime(e.startTime));
  if (e.stopTime) w.field(0, 'Stop Time', describeTime(e.stopTime));
  w.field(0, 'Duration', duration(e, now));
  w.field(0, 'Input', brief(e.input, 200) || '<none>');
  if (e.output !== undefined) w.field(0, 'Output', brief(e.output, 200));
  if (e.error !== undefined) w.field(0, 'Error', e.error);
  if (e.cause !== undefined) w.field(0, 'Cause', e.cause.split('\n'));
  const start = Date.parse(e.startTime);
  const rows = [
    ['ID', 'TYPE', 'STATE', 'ELAPSED', 'DETAIL'],
    ...e.history.map((h) => [String(h.id), h.type, h.state ?? '', `+${formatDuration(Date.parse(h.timestamp) - start)}`, eventDetail(h).replace(/\s+/g, ' ')]),
  ];
  let out = w.render();
  out += e.historyDropped ? `History (the oldest ${e.historyDropped} events were not kept):\n` : 'History:\n';
  out += alignColumns(rows)
    .split('\n')
    .filter(Boolean)
    .map((l) => `  ${l}`)
    .join('\n');
  return `${out}\n`;
}

function executionsPath(namespace: string, name: string): string {
  return `${kindObjectPath(workflowKind, name, namespace)}/executions`;
}

export async function runWorkflowExecutions(ctx: CliContext, args: WorkflowExecutionsArgs): Promise<number> {
  if (!args.name) throw new CliError("workflow executions needs the workflow's name: minik8s workflow executions NAME");
  const output = outputFormat(args.output, EXECUTION_OUTPUTS);
  const list = (await ctx.client().request('GET', executionsPath(ctx.namespace, args.name))) as { items?: WorkflowExecutionSummary[] };
  const items = list.items ?? [];
  if (output === 'json') ctx.out(`${JSON.stringify(list, null, 2)}\n`);
  else if (output === 'yaml') ctx.out(stringify(list));
  else if (items.length === 0) ctx.err(`No executions of workflow ${args.name} in ${ctx.namespace} namespace.\n`);
  else ctx.out(executionsTable(items, ctx.now(), { wide: output === 'wide', noHeaders: args.noHeaders }));
  return 0;
}

export async function runWorkflowExecution(ctx: CliContext, args: WorkflowExecutionArgs): Promise<number> {
  if (!args.name || !args.execution)
    throw new CliError("workflow execution needs the workflow's name and the execution's: minik8s workflow execution NAME EXECUTION");
  const output = outputFormat(args.output, ['json', 'yaml']);
  const record = (await ctx.client().request('GET', `${executionsPath(ctx.namespace, args.name)}/${encodeURIComponent(args.execution)}`)) as WorkflowExecution;
  if (output === 'json') ctx.out(`${JSON.stringify(record, null, 2)}\n`);
  else if (output === 'yaml') ctx.out(stringify(record));
  else ctx.out(renderExecution(record, ctx.now()));
  return 0;
}
