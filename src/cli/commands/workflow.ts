// `minik8s workflow executions|execution`: the command lines; the work is in ../workflow.ts.
import type { GroupCommand, LeafCommand } from './command.js';
import { headersFlag, str } from './flags.js';

const executionsCommand: LeafCommand = {
  command: 'executions [name]',
  describe: "List a workflow's executions, newest first",
  builder: (y) =>
    y
      .positional('name', { type: 'string', describe: 'the workflow' })
      .option('o', { alias: 'output', type: 'string', requiresArg: true, describe: 'wide, json or yaml' })
      .option('headers', headersFlag),
  run: async (ctx, a) => (await import('../workflow.js')).runWorkflowExecutions(ctx, { name: str(a.name), output: str(a.o), noHeaders: a.headers === false }),
};

const executionCommand: LeafCommand = {
  command: 'execution [name] [execution]',
  describe: 'Show one execution with its history (state entered, exited, failed, retried, caught)',
  builder: (y) =>
    y
      .positional('name', { type: 'string', describe: 'the workflow' })
      .positional('execution', { type: 'string', describe: 'the execution, as `workflow executions` lists it' })
      .option('o', { alias: 'output', type: 'string', requiresArg: true, describe: 'json or yaml' }),
  run: async (ctx, a) => (await import('../workflow.js')).runWorkflowExecution(ctx, { name: str(a.name), execution: str(a.execution), output: str(a.o) }),
};

export const workflowCommand: GroupCommand = {
  command: 'workflow',
  describe: 'Workflow executions: minik8s workflow executions NAME | workflow execution NAME EXECUTION',
  subcommands: [executionsCommand, executionCommand],
  required: 'minik8s workflow needs a command: executions or execution',
};
