// Unit tests of the Workflow kind: the definition's checks (fields, paths, unknown and unreachable states, dead ends) with their field paths, and the admission check of Task functions.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { InvalidError } from '../errors.js';
import { kindByName } from './registry.js';
import { validateObject } from './validate.js';
import { workflowAdmission, workflowKind } from './workflow.js';
import { taskFunctionName } from './workflow-definition.js';
import { parsePath, pathProblem } from './workflow-path.js';
import type { AdmissionLookup } from './kind.js';

const good = {
  Comment: 'route orders by size',
  StartAt: 'Check',
  States: {
    Check: { Type: 'Choice', Choices: [{ Variable: '$.amount', NumericGreaterThan: 100, Next: 'Big' }], Default: 'Small' },
    Big: {
      Type: 'Task',
      Resource: 'function:big-order',
      Retry: [{ ErrorEquals: ['States.ALL'], MaxAttempts: 2 }],
      Catch: [{ ErrorEquals: ['States.ALL'], ResultPath: '$.error', Next: 'Failed' }],
      Next: 'Done',
    },
    Small: { Type: 'Pass', Result: { small: true }, ResultPath: '$.result', Next: 'Done' },
    Done: { Type: 'Succeed' },
    Failed: { Type: 'Fail', Error: 'OrderFailed' },
  },
};

function wf(definition: unknown) {
  return { apiVersion: 'minik8s.io/v1', kind: 'Workflow', metadata: { name: 'orders', namespace: 'default' }, spec: { definition } };
}

/** `field: reason` of every cause, for a definition changed by `edit`. */
function causes(definition: unknown): string[] {
  try {
    validateObject(workflowKind, wf(definition));
  } catch (err) {
    assert.ok(err instanceof InvalidError, String(err));
    return (err as InvalidError).toStatus().details?.causes?.map((c) => `${c.field}: ${c.reason}`) ?? [];
  }
  return [];
}

function edit(change: (d: typeof good & Record<string, unknown>) => void): unknown {
  const d = structuredClone(good) as typeof good & Record<string, unknown>;
  change(d);
  return d;
}

describe('Workflow kind', () => {
  it('accepts a definition with every state type, and is wf/workflow/workflows on the command line', () => {
    const obj = validateObject(workflowKind, wf(good));
    assert.deepEqual(
      workflowKind.columns!.map((c) => [c.name, c.value(obj)]),
      [
        ['STATES', '5'],
        ['START', 'Check'],
      ],
    );
    for (const name of ['wf', 'workflow', 'workflows', 'Workflow']) assert.equal(kindByName(name), workflowKind, name);
  });

  const bad: [string, unknown, string[]][] = [
    [
      'StartAt naming no state',
      edit((d) => {
        d.StartAt = 'Nope';
      }),
      ['spec.definition.StartAt: FieldValueNotFound'],
    ],
    [
      'Next naming no state',
      edit((d) => {
        (d.States.Small as Record<string, unknown>).Next = 'Nowhere';
      }),
      ['spec.definition.States.Small.Next: FieldValueNotFound'],
    ],
    [
      "a Choice rule's Next naming no state",
      edit((d) => {
        d.States.Check.Choices[0]!.Next = 'X';
      }),
      ['spec.definition.States.Check.Choices[0].Next: FieldValueNotFound'],
    ],
    [
      'Default naming no state',
      edit((d) => {
        d.States.Check.Default = 'X';
      }),
      ['spec.definition.States.Check.Default: FieldValueNotFound'],
    ],
    [
      'a Catch naming no state',
      edit((d) => {
        d.States.Big.Catch[0]!.Next = 'X';
      }),
      ['spec.definition.States.Big.Catch[0].Next: FieldValueNotFound'],
    ],
    [
      'an unreachable state',
      edit((d) => {
        (d.States as Record<string, unknown>).Orphan = { Type: 'Succeed' };
      }),
      ['spec.definition.States.Orphan: FieldValueInvalid'],
    ],
    [
      'states that can never end',
      {
        StartAt: 'A',
        States: { A: { Type: 'Pass', Next: 'B' }, B: { Type: 'Choice', Choices: [{ Variable: '$.x', IsPresent: true, Next: 'A' }], Default: 'A' } },
      },
      ['spec.definition.States.A: FieldValueInvalid', 'spec.definition.States.B: FieldValueInvalid'],
    ],
    [
      'no StartAt',
      edit((d) => {
        delete (d as Record<string, unknown>).StartAt;
      }),
      ['spec.definition.StartAt: FieldValueRequired'],
    ],
    ['no States', { StartAt: 'A' }, ['spec.definition.States: FieldValueRequired']],
    ['a definition that is no object', 'StartAt: A', ['spec.definition: FieldValueTypeInvalid']],
    [
      'an unknown state type',
      edit((d) => {
        (d.States.Done as Record<string, unknown>).Type = 'Parallel';
      }),
      ['spec.definition.States.Done.Type: FieldValueNotSupported'],
    ],
    [
      'a field the state type does not take',
      edit((d) => {
        (d.States.Done as Record<string, unknown>).Next = 'Big';
      }),
      ['spec.definition.States.Done.Next: FieldValueForbidden'],
    ],
    [
      'neither Next nor End',
      edit((d) => {
        delete (d.States.Small as Record<string, unknown>).Next;
      }),
      ['spec.definition.States.Small.Next: FieldValueRequired'],
    ],
    [
      'both Next and End',
      edit((d) => {
        (d.States.Small as Record<string, unknown>).End = true;
      }),
      ['spec.definition.States.Small.End: FieldValueForbidden'],
    ],
    [
      'a Task without Resource',
      edit((d) => {
        delete (d.States.Big as Record<string, unknown>).Resource;
      }),
      ['spec.definition.States.Big.Resource: FieldValueRequired'],
    ],
    [
      'a Resource naming no function',
      edit((d) => {
        d.States.Big.Resource = 'function:Not_A_Name';
      }),
      ['spec.definition.States.Big.Resource: FieldValueInvalid'],
    ],
    [
      'a bad InputPath',
      edit((d) => {
        (d.States.Small as Record<string, unknown>).InputPath = 'amount';
      }),
      ['spec.definition.States.Small.InputPath: FieldValueInvalid'],
    ],
    [
      'a wildcard path',
      edit((d) => {
        (d.States.Small as Record<string, unknown>).OutputPath = '$.items[*]';
      }),
      ['spec.definition.States.Small.OutputPath: FieldValueInvalid'],
    ],
    [
      'a ResultPath into the context',
      edit((d) => {
        d.States.Small.ResultPath = '$$.Execution';
      }),
      ['spec.definition.States.Small.ResultPath: FieldValueInvalid'],
    ],
    [
      'a bad Parameters path',
      edit((d) => {
        (d.States.Big as Record<string, unknown>).Parameters = { 'x.$': 'x' };
      }),
      ['spec.definition.States.Big.Parameters.x.$: FieldValueInvalid'],
    ],
    [
      'a Choice operand of the wrong type',
      edit((d) => {
        (d.States.Check.Choices[0] as Record<string, unknown>).NumericGreaterThan = '100';
      }),
      ['spec.definition.States.Check.Choices[0].NumericGreaterThan: FieldValueInvalid'],
    ],
    [
      'a Choice rule with two operators',
      edit((d) => {
        (d.States.Check.Choices[0] as Record<string, unknown>).StringEquals = 'a';
      }),
      ['spec.definition.States.Check.Choices[0]: FieldValueInvalid'],
    ],
    [
      'a Choice rule without Variable',
      edit((d) => {
        delete (d.States.Check.Choices[0] as Record<string, unknown>).Variable;
      }),
      ['spec.definition.States.Check.Choices[0].Variable: FieldValueRequired'],
    ],
    [
      'a nested rule with Next',
      edit((d) => {
        d.States.Check.Choices[0] = { Not: { Variable: '$.a', IsNull: true, Next: 'Big' }, Next: 'Big' } as never;
      }),
      ['spec.definition.States.Check.Choices[0].Not.Next: FieldValueForbidden'],
    ],
    [
      'an unknown operator',
      edit((d) => {
        d.States.Check.Choices[0] = { Variable: '$.a', StringContains: 'x', Next: 'Big' } as never;
      }),
      ['spec.definition.States.Check.Choices[0].StringContains: FieldValueForbidden', 'spec.definition.States.Check.Choices[0]: FieldValueInvalid'],
    ],
    [
      'an empty And',
      edit((d) => {
        d.States.Check.Choices[0] = { And: [], Next: 'Big' } as never;
      }),
      ['spec.definition.States.Check.Choices[0].And: FieldValueInvalid'],
    ],
    [
      'no Choices',
      edit((d) => {
        (d.States.Check as Record<string, unknown>).Choices = [];
      }),
      ['spec.definition.States.Check.Choices: FieldValueInvalid'],
    ],
    [
      'States.ALL not alone',
      edit((d) => {
        d.States.Big.Retry[0]!.ErrorEquals = ['States.ALL', 'ValueError'];
      }),
      ['spec.definition.States.Big.Retry[0].ErrorEquals: FieldValueInvalid'],
    ],
    [
      'States.ALL not last',
      edit((d) => {
        d.States.Big.Catch.push({ ErrorEquals: ['ValueError'], ResultPath: '$.e', Next: 'Failed' });
      }),
      ['spec.definition.States.Big.Catch[0].ErrorEquals: FieldValueInvalid'],
    ],
    [
      'a BackoffRate below 1',
      edit((d) => {
        (d.States.Big.Retry[0] as Record<string, unknown>).BackoffRate = 0.5;
      }),
      ['spec.definition.States.Big.Retry[0].BackoffRate: FieldValueInvalid'],
    ],
    [
      'a Wait with two durations',
      { StartAt: 'W', States: { W: { Type: 'Wait', Seconds: 1, SecondsPath: '$.s', End: true } } },
      ['spec.definition.States.W.SecondsPath: FieldValueForbidden'],
    ],
    ['a Wait with none', { StartAt: 'W', States: { W: { Type: 'Wait', End: true } } }, ['spec.definition.States.W: FieldValueRequired']],
    [
      'a Wait with a bad Timestamp',
      { StartAt: 'W', States: { W: { Type: 'Wait', Timestamp: 'tomorrow', End: true } } },
      ['spec.definition.States.W.Timestamp: FieldValueInvalid'],
    ],
    [
      'a TimeoutSeconds of 0',
      edit((d) => {
        (d as Record<string, unknown>).TimeoutSeconds = 0;
      }),
      ['spec.definition.TimeoutSeconds: FieldValueInvalid'],
    ],
  ];
  for (const [what, definition, want] of bad) {
    it(`refuses ${what}`, () => assert.deepEqual(causes(definition), want));
  }

  it('names the fields in the 422 message', () => {
    assert.throws(
      () =>
        validateObject(
          workflowKind,
          wf(
            edit((d) => {
              d.StartAt = 'Nope';
            }),
          ),
        ),
      (err: unknown) =>
        err instanceof InvalidError && /Workflow "orders" is invalid: spec\.definition\.StartAt: Not found: "Nope": no state has this name/.test(err.message),
    );
  });

  it('admission: each Task must name a Function of the namespace', async () => {
    const obj = validateObject(workflowKind, wf(good));
    const asked: string[] = [];
    const lookup = (have: string[]): AdmissionLookup => ({
      get: async (ref) => {
        asked.push(`${ref.group}/${ref.resource}/${ref.namespace}/${ref.name}`);
        return have.includes(ref.name) ? { apiVersion: 'minik8s.io/v1', kind: 'Function', metadata: { name: ref.name } } : undefined;
      },
    });
    assert.deepEqual(await workflowAdmission(obj, lookup(['big-order'])), []);
    assert.deepEqual(asked, ['minik8s.io/functions/default/big-order']);
    const problems = await workflowAdmission(obj, lookup([]));
    assert.deepEqual(
      problems.map((p) => [p.path.join('.'), p.reason, p.detail]),
      [['spec.definition.States.Big.Resource', 'FieldValueNotFound', 'no function "big-order" in namespace "default"']],
    );
  });

  it('Task Resource forms and the path subset', () => {
    assert.equal(taskFunctionName('hello'), 'hello');
    assert.equal(taskFunctionName('function:hello'), 'hello');
    assert.equal(taskFunctionName('arn:aws:lambda:us-east-1:1:function:hello'), 'hello');
    assert.equal(taskFunctionName('function:'), undefined);
    assert.deepEqual(parsePath("$.a[2]['b c'].d"), { context: false, steps: ['a', 2, 'b c', 'd'] });
    assert.deepEqual(parsePath('$$.Execution.Name'), { context: true, steps: ['Execution', 'Name'] });
    assert.deepEqual(parsePath('$'), { context: false, steps: [] });
    for (const badPath of ['a', '$.', '$..a', '$.a[*]', '$.a[0:2]', '$[?(@.a)]', '$a']) assert.ok(pathProblem(badPath), badPath);
  });
});
