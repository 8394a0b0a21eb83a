// Workflow (minik8s.io/v1, short name wf): a state machine in a subset of the Amazon States Language whose Tasks call functions.
import * as v from 'valibot';
import type { AdmissionLookup, KindDefinition } from './kind.js';
import { kindSchema, type KubeObject } from './meta.js';
import { withChecks, type FieldProblem } from './validate.js';
import { definitionProblems, taskFunctions, type WorkflowDefinition } from './workflow-definition.js';

export type { WorkflowDefinition, State, ChoiceRule, Retrier, Catcher } from './workflow-definition.js';

/** Where Functions are stored (FN's kind), named here so this file does not depend on it being registered. */
export const FUNCTION_RESOURCE = { group: 'minik8s.io', resource: 'functions' } as const;

const workflowSpecSchema = withChecks(
  v.strictObject({
    /** The ASL document: StartAt, States, and optionally Comment, TimeoutSeconds, Version. */
    definition: v.custom<WorkflowDefinition>((x) => x !== null && typeof x === 'object' && !Array.isArray(x), 'must be an object with StartAt and States'),
  }),
  (spec): FieldProblem[] => definitionProblems(spec.definition).map((p) => ({ ...p, path: ['definition', ...p.path] })),
);

export const workflowSchema = kindSchema('minik8s.io/v1', 'Workflow', {
  spec: workflowSpecSchema,
});
export type Workflow = v.InferOutput<typeof workflowSchema>;

/**
 * Each Task must call a Function of the workflow's namespace that exists now (a function deleted
 * later makes that Task fail at run time with States.TaskFailed).
 */
export async function workflowAdmission(obj: KubeObject, lookup: AdmissionLookup): Promise<FieldProblem[]> {
  const wf = obj as Workflow;
  const namespace = wf.metadata.namespace ?? 'default';
  const problems: FieldProblem[] = [];
  const checked = new Map<string, boolean>();
  for (const { name, path } of taskFunctions(wf.spec.definition)) {
    if (!checked.has(name)) checked.set(name, (await lookup.get({ ...FUNCTION_RESOURCE, namespace, name })) !== undefined);
    if (!checked.get(name)) {
      const resource = wf.spec.definition.States[path[1] as string]!.Resource;
      problems.push({
        path: ['spec', 'definition', ...path],
        reason: 'FieldValueNotFound',
        value: resource,
        detail: `no function "${name}" in namespace "${namespace}"`,
      });
    }
  }
  return problems;
}

export const workflowKind: KindDefinition = {
  kind: 'Workflow',
  group: 'minik8s.io',
  version: 'v1',
  resource: 'workflows',
  singular: 'workflow',
  shortNames: ['wf'],
  namespaced: true,
  schema: workflowSchema,
  statusSubresource: false,
  subresources: [{ name: 'executions', kind: 'WorkflowExecution', verbs: ['get', 'list'] }],
  admit: workflowAdmission,
  columns: [
    { name: 'STATES', value: (o) => String(Object.keys((o as Workflow).spec.definition.States ?? {}).length) },
    { name: 'START', value: (o) => (o as Workflow).spec.definition.StartAt },
  ],
};
