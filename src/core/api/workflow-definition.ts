// A workflow's definition (a subset of the Amazon States Language): its types, and the checks run when it is applied.
import type { FieldProblem } from './validate.js';
import { pathProblem } from './workflow-path.js';

export type StateType = 'Task' | 'Choice' | 'Pass' | 'Wait' | 'Succeed' | 'Fail';
export const STATE_TYPES: readonly StateType[] = ['Task', 'Choice', 'Pass', 'Wait', 'Succeed', 'Fail'];

export interface Retrier {
  ErrorEquals: string[];
  /** Seconds before the first retry (default 1). */
  IntervalSeconds?: number;
  /** Retries after the first attempt (default 3; 0: none). */
  MaxAttempts?: number;
  /** Each retry waits this many times longer than the one before (default 2.0). */
  BackoffRate?: number;
  /** A cap on the wait between retries. */
  MaxDelaySeconds?: number;
}

export interface Catcher {
  ErrorEquals: string[];
  Next: string;
  /** Where the error output `{Error, Cause}` goes in the state's input (default `$`: replaces it; null: dropped). */
  ResultPath?: string | null;
}

/** A Choice rule: one comparison on Variable, or And/Or/Not of nested rules; only top-level rules have Next. */
export interface ChoiceRule {
  Variable?: string;
  And?: ChoiceRule[];
  Or?: ChoiceRule[];
  Not?: ChoiceRule;
  Next?: string;
  [operator: string]: unknown;
}

export interface State {
  Type: StateType;
  Comment?: string;
  Next?: string;
  End?: boolean;
  InputPath?: string | null;
  OutputPath?: string | null;
  ResultPath?: string | null;
  Parameters?: unknown;
  ResultSelector?: unknown;
  // Task
  Resource?: string;
  TimeoutSeconds?: number;
  Retry?: Retrier[];
  Catch?: Catcher[];
  // Pass
  Result?: unknown;
  // Wait
  Seconds?: number;
  SecondsPath?: string;
  Timestamp?: string;
  TimestampPath?: string;
  // Choice
  Choices?: ChoiceRule[];
  Default?: string;
  // Fail
  Error?: string;
  Cause?: string;
}

export interface WorkflowDefinition {
  Comment?: string;
  StartAt: string;
  States: Record<string, State>;
  /** The whole execution's limit; past it the execution ends TIMED_OUT. */
  TimeoutSeconds?: number;
  Version?: string;
}

/** What the right-hand side of each comparison operator must be. */
export type OperandKind = 'string' | 'number' | 'boolean' | 'timestamp' | 'path' | 'true-or-false';

/** Choice comparison operators and their operands (the `...Path` forms compare with a value read from the input). */
export const CHOICE_OPERATORS: Readonly<Record<string, OperandKind>> = {
  StringEquals: 'string',
  StringLessThan: 'string',
  StringGreaterThan: 'string',
  StringLessThanEquals: 'string',
  StringGreaterThanEquals: 'string',
  StringMatches: 'string',
  StringEqualsPath: 'path',
  StringLessThanPath: 'path',
  StringGreaterThanPath: 'path',
  StringLessThanEqualsPath: 'path',
  StringGreaterThanEqualsPath: 'path',
  NumericEquals: 'number',
  NumericLessThan: 'number',
  NumericGreaterThan: 'number',
  NumericLessThanEquals: 'number',
  NumericGreaterThanEquals: 'number',
  NumericEqualsPath: 'path',
  NumericLessThanPath: 'path',
  NumericGreaterThanPath: 'path',
  NumericLessThanEqualsPath: 'path',
  NumericGreaterThanEqualsPath: 'path',
  BooleanEquals: 'boolean',
  BooleanEqualsPath: 'path',
  TimestampEquals: 'timestamp',
  TimestampLessThan: 'timestamp',
  TimestampGreaterThan: 'timestamp',
  TimestampLessThanEquals: 'timestamp',
  TimestampGreaterThanEquals: 'timestamp',
  TimestampEqualsPath: 'path',
  TimestampLessThanPath: 'path',
  TimestampGreaterThanPath: 'path',
  TimestampLessThanEqualsPath: 'path',
  TimestampGreaterThanEqualsPath: 'path',
  IsPresent: 'true-or-false',
  IsNull: 'true-or-false',
  IsString: 'true-or-false',
  IsNumeric: 'true-or-false',
  IsBoolean: 'true-or-false',
  IsTimestamp: 'true-or-false',
};

/** The error names the interpreter raises itself (ASL's), besides a function's own error types. */
export const STATES_ERRORS = [
  'States.ALL',
  'States.Timeout',
  'States.TaskFailed',
  'States.Permissions',
  'States.ResultPathMatchFailure',
  'States.ParameterPathFailure',
  'States.NoChoiceMatched',
  'States.Runtime',
] as const;

const COMMON_FIELDS = ['Type', 'Comment'];
const IO_FIELDS = ['InputPath', 'OutputPath'];
const FLOW_FIELDS = ['Next', 'End'];
/** Which fields each state type takes (as ASL's table of state fields). */
const FIELDS: Readonly<Record<StateType, readonly string[]>> = {
  Task: [...COMMON_FIELDS, ...IO_FIELDS, ...FLOW_FIELDS, 'Resource', 'Parameters', 'ResultSelector', 'ResultPath', 'TimeoutSeconds', 'Retry', 'Catch'],
  Pass: [...COMMON_FIELDS, ...IO_FIELDS, ...FLOW_FIELDS, 'Parameters', 'Result', 'ResultPath'],
  Wait: [...COMMON_FIELDS, ...IO_FIELDS, ...FLOW_FIELDS, 'Seconds', 'SecondsPath', 'Timestamp', 'TimestampPath'],
  Choice: [...COMMON_FIELDS, ...IO_FIELDS, 'Choices', 'Default'],
  Succeed: [...COMMON_FIELDS, ...IO_FIELDS],
  Fail: [...COMMON_FIELDS, 'Error', 'Cause'],
};
const DEFINITION_FIELDS = ['Comment', 'StartAt', 'States', 'TimeoutSeconds', 'Version'];

/** AWS's limit on state names. */
const MAX_STATE_NAME = 80;
const FUNCTION_NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

/**
 * The function a Task's Resource names: `NAME`, `function:NAME`, or anything ending in
 * `function:NAME` (an AWS-style ARN reads the same); undefined when it names none.
 */
export function taskFunctionName(resource: string): string | undefined {
  const at = resource.lastIndexOf('function:');
  const name = at >= 0 ? resource.slice(at + 'function:'.length) : resource;
  return name.length > 0 && name.length <= 253 && FUNCTION_NAME.test(name) ? name : undefined;
}

/** Whether a string is an RFC 3339 timestamp, as ASL's Timestamp fields and comparisons want. */
export function isTimestamp(value: unknown): value is string {
  return typeof value === 'string' && RFC3339.test(value) && !Number.isNaN(Date.parse(value));
}

type Path = (string | number)[];

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function isPositiveInt(value: unknown): boolean {
  return typeof value === 'number' && Number.isInteger(value) && value > 0;
}

/** Collects problems with their paths relative to the definition. */
class Checker {
  readonly problems: FieldProblem[] = [];

  add(path: Path, reason: FieldProblem['reason'], detail?: string, value?: unknown): void {
    this.problems.push({ path, reason, ...(detail !== undefined ? { detail } : {}), ...(value !== undefined ? { value } : {}) });
  }

  required(path: Path, detail?: string): void {
    this.add(path, 'FieldValueRequired', detail);
  }

  unknownFields(obj: Record<string, unknown>, allowed: readonly string[], at: Path, what: string): void {
    for (const key of Object.keys(obj)) {
      if (!allowed.includes(key)) this.add([...at, key], 'FieldValueForbidden', `not a field of ${what}`);
    }
  }

  string(obj: Record<string, unknown>, key: string, at: Path, options: { required?: boolean; nonEmpty?: boolean } = {}): string | undefined {
    const value = obj[key];
    if (value === undefined) {
      if (options.required) this.required([...at, key]);
      return undefined;
    }
    if (typeof value !== 'string') {
      this.add([...at, key], 'FieldValueTypeInvalid', 'must be a string');
      return undefined;
    }
    if (options.nonEmpty && value === '') this.add([...at, key], 'FieldValueInvalid', 'must not be empty');
    return value;
  }

  /** InputPath/OutputPath/ResultPath and friends: a path, or null where `nullable`. */
  path(obj: Record<string, unknown>, key: string, at: Path, options: { nullable?: boolean; allowContext?: boolean } = {}): void {
    const value = obj[key];
    if (value === undefined) return;
    if (value === null) {
      if (!options.nullable) this.add([...at, key], 'FieldValueTypeInvalid', 'must be a path such as $.field');
      return;
    }
    if (typeof value !== 'string') {
      this.add([...at, key], 'FieldValueTypeInvalid', options.nullable ? 'must be a path such as $.field, or null' : 'must be a path such as $.field');
      return;
    }
    const problem = pathProblem(value, { allowContext: options.allowContext });
    if (problem) this.add([...at, key], 'FieldValueInvalid', `not a valid path: ${problem}`);
  }

  /** Parameters and ResultSelector: any JSON, where keys ending in `.$` take a path. */
  template(value: unknown, at: Path): void {
    if (Array.isArray(value)) {
      value.forEach((item, i) => {
        this.template(item, [...at, i]);
      });
      return;
    }
    if (!isObject(value)) return;
    for (const [key, inner] of Object.entries(value)) {
      if (!key.endsWith('.$')) {
        this.template(inner, [...at, key]);
        continue;
      }
      if (typeof inner !== 'string') {
        this.add([...at, key], 'FieldValueTypeInvalid', 'a field ending in .$ must be a path such as $.field');
        continue;
      }
      const problem = pathProblem(inner, { allowContext: true });
      if (problem) this.add([...at, key], 'FieldValueInvalid', `not a valid path: ${problem}`);
    }
  }

  errorEquals(obj: Record<string, unknown>, at: Path, isLast: boolean): void {
    const list = obj.ErrorEquals;
    if (list === undefined) {
      this.required([...at, 'ErrorEquals']);
      return;
    }
    if (!Array.isArray(list) || list.length === 0 || list.some((e) => typeof e !== 'string' || e === '')) {
      this.add([...at, 'ErrorEquals'], 'FieldValueInvalid', 'must be a non-empty list of error names', list);
      return;
    }
    if (list.includes('States.ALL')) {
      if (list.length > 1) this.add([...at, 'ErrorEquals'], 'FieldValueInvalid', 'States.ALL must appear alone', list);
      else if (!isLast) this.add([...at, 'ErrorEquals'], 'FieldValueInvalid', 'States.ALL must be in the last entry', list);
    }
  }
}

function checkRetry(c: Checker, value: unknown, at: Path): void {
  if (!Array.isArray(value)) {
    c.add(at, 'FieldValueTypeInvalid', 'must be a list of retriers');
    return;
  }
  value.forEach((r, i) => {
    const p = [...at, i];
    if (!isObject(r)) {
      c.add(p, 'FieldValueTypeInvalid', 'must be an object');
      return;
    }
    c.unknownFields(r, ['ErrorEquals', 'IntervalSeconds', 'MaxAttempts', 'BackoffRate', 'MaxDelaySeconds', 'Comment'], p, 'a retrier');
    c.errorEquals(r, p, i === value.length - 1);
    if (r.IntervalSeconds !== undefined && !isPositiveInt(r.IntervalSeconds))
      c.add([...p, 'IntervalSeconds'], 'FieldValueInvalid', 'must be a positive integer');
    if (
      r.MaxAttempts !== undefined &&
      !(typeof r.MaxAttempts === 'number' && Number.isInteger(r.MaxAttempts) && r.MaxAttempts >= 0 && r.MaxAttempts <= 99_999_999)
    ) {
      c.add([...p, 'MaxAttempts'], 'FieldValueInvalid', 'must be an integer from 0 to 99999999');
    }
    if (r.BackoffRate !== undefined && !(typeof r.BackoffRate === 'number' && r.BackoffRate >= 1))
      c.add([...p, 'BackoffRate'], 'FieldValueInvalid', 'must be a number of at least 1.0');
    if (r.MaxDelaySeconds !== undefined && !isPositiveInt(r.MaxDelaySeconds))
      c.add([...p, 'MaxDelaySeconds'], 'FieldValueInvalid', 'must be a positive integer');
  });
}

function checkCatch(c: Checker, value: unknown, at: Path): void {
  if (!Array.isArray(value)) {
    c.add(at, 'FieldValueTypeInvalid', 'must be a list of catchers');
    return;
  }
  value.forEach((r, i) => {
    const p = [...at, i];
    if (!isObject(r)) {
      c.add(p, 'FieldValueTypeInvalid', 'must be an object');
      return;
    }
    c.unknownFields(r, ['ErrorEquals', 'Next', 'ResultPath', 'Comment'], p, 'a catcher');
    c.errorEquals(r, p, i === value.length - 1);
    c.string(r, 'Next', p, { required: true });
    c.path(r, 'ResultPath', p, { nullable: true });
  });
}

function checkRule(c: Checker, rule: unknown, at: Path, topLevel: boolean): void {
  if (!isObject(rule)) {
    c.add(at, 'FieldValueTypeInvalid', 'must be a choice rule (an object)');
    return;
  }
  const operators = Object.keys(rule).filter((k) => k in CHOICE_OPERATORS);
  const combinators = ['And', 'Or', 'Not'].filter((k) => k in rule);
  const allowed = ['Variable', 'Comment', ...(topLevel ? ['Next'] : []), ...Object.keys(CHOICE_OPERATORS), 'And', 'Or', 'Not'];
  for (const key of Object.keys(rule)) {
    if (!allowed.includes(key)) {
      c.add([...at, key], 'FieldValueForbidden', key === 'Next' ? 'only top-level choice rules have Next' : 'not a choice operator');
    }
  }
  if (topLevel) c.string(rule, 'Next', at, { required: true });
  if (operators.length + combinators.length !== 1) {
    c.add(at, 'FieldValueInvalid', 'a choice rule needs exactly one comparison operator, or one of And, Or, Not');
    return;
  }
  if (combinators.length === 1) {
    if ('Variable' in rule) c.add([...at, 'Variable'], 'FieldValueForbidden', `not allowed with ${combinators[0]}`);
    const key = combinators[0]!;
    const inner = rule[key];
    if (key === 'Not') {
      checkRule(c, inner, [...at, 'Not'], false);
    } else if (!Array.isArray(inner) || inner.length === 0) {
      c.add([...at, key], 'FieldValueInvalid', 'must be a non-empty list of choice rules', inner);
    } else {
      inner.forEach((r, i) => {
        checkRule(c, r, [...at, key, i], false);
      });
    }
    return;
  }
  const op = operators[0]!;
  if (c.string(rule, 'Variable', at, { required: true }) !== undefined) c.path(rule, 'Variable', at, { allowContext: true });
  const operand = rule[op];
  const kind = CHOICE_OPERATORS[op]!;
  const fail = (detail: string) => c.add([...at, op], 'FieldValueInvalid', detail, operand);
  switch (kind) {
    case 'string':
      if (typeof operand !== 'string') fail('must be a string');
      break;
    case 'number':
      if (typeof operand !== 'number' || !Number.isFinite(operand)) fail('must be a number');
      break;
    case 'boolean':
      if (typeof operand !== 'boolean') fail('must be true or false');
      break;
    case 'true-or-false':
      if (typeof operand !== 'boolean') fail('must be true or false');
      break;
    case 'timestamp':
      if (!isTimestamp(operand)) fail('must be an RFC 3339 timestamp such as 2024-01-31T12:00:00Z');
      break;
    case 'path': {
      const problem = typeof operand === 'string' ? pathProblem(operand, { allowContext: true }) : 'must be a path such as $.field';
      if (problem) fail(typeof operand === 'string' ? `not a valid path: ${problem}` : problem);
    }
  }
}

function checkState(c: Checker, state: unknown, at: Path): void {
  if (!isObject(state)) {
    c.add(at, 'FieldValueTypeInvalid', 'must be a state (an object)');
    return;
  }
  const type = state.Type;
  if (type === undefined) {
    c.required([...at, 'Type']);
    return;
  }
  if (!STATE_TYPES.includes(type as StateType)) {
    const detail =
      type === 'Parallel' || type === 'Map'
        ? `${String(type)} states are not supported; supported values: ${STATE_TYPES.join(', ')}`
        : `supported values: ${STATE_TYPES.join(', ')}`;
    c.add([...at, 'Type'], 'FieldValueNotSupported', detail);
    return;
  }
  const t = type as StateType;
  c.unknownFields(state, FIELDS[t], at, `a ${t} state`);
  c.string(state, 'Comment', at);
  for (const key of ['InputPath', 'OutputPath']) if (FIELDS[t].includes(key)) c.path(state, key, at, { nullable: true });
  if (FIELDS[t].includes('ResultPath')) c.path(state, 'ResultPath', at, { nullable: true });
  if (state.Parameters !== undefined) c.template(state.Parameters, [...at, 'Parameters']);
  if (state.ResultSelector !== undefined) c.template(state.ResultSelector, [...at, 'ResultSelector']);

  if (FIELDS[t].includes('Next')) {
    const hasNext = state.Next !== undefined;
    const ends = state.End === true;
    if (state.End !== undefined && typeof state.End !== 'boolean') c.add([...at, 'End'], 'FieldValueTypeInvalid', 'must be true or false');
    if (hasNext) c.string(state, 'Next', at, { nonEmpty: true });
    if (hasNext && ends) c.add([...at, 'End'], 'FieldValueForbidden', 'a state has either Next or End: true, not both');
    if (!hasNext && !ends) c.required([...at, 'Next'], `a ${t} state needs Next or End: true`);
  }

  switch (t) {
    case 'Task': {
      const resource = c.string(state, 'Resource', at, { required: true });
      if (resource !== undefined && taskFunctionName(resource) === undefined) {
        c.add([...at, 'Resource'], 'FieldValueInvalid', 'must name a function: NAME or function:NAME');
      }
      if (state.TimeoutSeconds !== undefined && !isPositiveInt(state.TimeoutSeconds))
        c.add([...at, 'TimeoutSeconds'], 'FieldValueInvalid', 'must be a positive integer');
      if (state.Retry !== undefined) checkRetry(c, state.Retry, [...at, 'Retry']);
      if (state.Catch !== undefined) checkCatch(c, state.Catch, [...at, 'Catch']);
      break;
    }
    case 'Wait': {
      const given = ['Seconds', 'SecondsPath', 'Timestamp', 'TimestampPath'].filter((k) => state[k] !== undefined);
      if (given.length !== 1) {
        c.add(
          given.length ? [...at, given[1]!] : at,
          given.length ? 'FieldValueForbidden' : 'FieldValueRequired',
          'a Wait state needs exactly one of Seconds, SecondsPath, Timestamp, TimestampPath',
        );
      }
      if (state.Seconds !== undefined && !(typeof state.Seconds === 'number' && Number.isInteger(state.Seconds) && state.Seconds >= 0)) {
        c.add([...at, 'Seconds'], 'FieldValueInvalid', 'must be a non-negative integer');
      }
      if (state.Timestamp !== undefined && !isTimestamp(state.Timestamp))
        c.add([...at, 'Timestamp'], 'FieldValueInvalid', 'must be an RFC 3339 timestamp such as 2024-01-31T12:00:00Z');
      c.path(state, 'SecondsPath', at, { allowContext: true });
      c.path(state, 'TimestampPath', at, { allowContext: true });
      break;
    }
    case 'Choice': {
      const choices = state.Choices;
      if (choices === undefined) c.required([...at, 'Choices']);
      else if (!Array.isArray(choices) || choices.length === 0)
        c.add([...at, 'Choices'], 'FieldValueInvalid', 'must be a non-empty list of choice rules', choices);
      else for (const [i, r] of choices.entries()) checkRule(c, r, [...at, 'Choices', i], true);
      c.string(state, 'Default', at);
      break;
    }
    case 'Fail':
      c.string(state, 'Error', at);
      c.string(state, 'Cause', at);
      break;
    case 'Pass':
    case 'Succeed':
      break;
  }
}

/** Every transition out of a state: [path of the field, target]. */
export function transitions(state: State): [Path, string][] {
  const out: [Path, string][] = [];
  if (typeof state.Next === 'string') out.push([['Next'], state.Next]);
  if (typeof state.Default === 'string') out.push([['Default'], state.Default]);
  if (Array.isArray(state.Choices))
    state.Choices.forEach((r, i) => {
      if (isObject(r) && typeof r.Next === 'string') out.push([['Choices', i, 'Next'], r.Next]);
    });
  if (Array.isArray(state.Catch))
    state.Catch.forEach((r, i) => {
      if (isObject(r) && typeof r.Next === 'string') out.push([['Catch', i, 'Next'], r.Next]);
    });
  return out;
}

/** A state where an execution may end: End: true, Succeed, Fail. */
function isTerminal(state: State): boolean {
  return state.End === true || state.Type === 'Succeed' || state.Type === 'Fail';
}

/**
 * The graph checks, on a definition whose states are well-formed: transitions to unknown states,
 * states StartAt never leads to (refused, as AWS Step Functions refuses them: they are always a
 * mistake), and states from which no path leads to an end (an execution entering one could
 * never finish).
 */
function checkGraph(c: Checker, startAt: string | undefined, states: Record<string, State>, wellFormed: boolean): void {
  const names = new Set(Object.keys(states));
  let unknown = 0;
  if (startAt !== undefined && !names.has(startAt)) {
    c.add(['StartAt'], 'FieldValueNotFound', 'no state has this name', startAt);
    unknown++;
  }
  const edges = new Map<string, string[]>();
  for (const [name, state] of Object.entries(states)) {
    const targets: string[] = [];
    if (!isObject(state)) continue;
    for (const [path, target] of transitions(state)) {
      if (names.has(target)) {
        targets.push(target);
        continue;
      }
      c.add(['States', name, ...path], 'FieldValueNotFound', 'no state has this name', target);
      unknown++;
    }
    edges.set(name, targets);
  }
  // A transition to nowhere would also make states look unreachable or endless: that one problem is enough.
  if (!wellFormed || unknown > 0 || startAt === undefined) return;

  const reachable = new Set<string>([startAt]);
  const queue = [startAt];
  while (queue.length)
    for (const next of edges.get(queue.shift()!) ?? [])
      if (!reachable.has(next)) {
        reachable.add(next);
        queue.push(next);
      }

  // Backwards from the ends: the states some path leads to an end from.
  const canEnd = new Set<string>([...names].filter((n) => isTerminal(states[n]!)));
  for (let grew = true; grew; ) {
    grew = false;
    for (const [name, targets] of edges) {
      if (!canEnd.has(name) && targets.some((t) => canEnd.has(t))) {
        canEnd.add(name);
        grew = true;
      }
    }
  }
  for (const name of names) {
    if (!reachable.has(name)) c.add(['States', name], 'FieldValueInvalid', `state "${name}" is not reachable from StartAt`);
    else if (!canEnd.has(name))
      c.add(['States', name], 'FieldValueInvalid', `no path from state "${name}" leads to an end (End: true, a Succeed or a Fail state)`);
  }
}

/** Every problem of a definition, with paths relative to it (the kind's schema prefixes `spec.definition`). */
export function definitionProblems(definition: unknown): FieldProblem[] {
  const c = new Checker();
  if (!isObject(definition)) {
    c.add([], 'FieldValueTypeInvalid', 'must be an object with StartAt and States');
    return c.problems;
  }
  c.unknownFields(definition, DEFINITION_FIELDS, [], 'a workflow definition');
  c.string(definition, 'Comment', []);
  c.string(definition, 'Version', []);
  const startAt = c.string(definition, 'StartAt', [], { required: true, nonEmpty: true });
  if (definition.TimeoutSeconds !== undefined && !isPositiveInt(definition.TimeoutSeconds))
    c.add(['TimeoutSeconds'], 'FieldValueInvalid', 'must be a positive integer');
  const states = definition.States;
  if (states === undefined) {
    c.required(['States']);
    return c.problems;
  }
  if (!isObject(states) || Object.keys(states).length === 0) {
    c.add(['States'], 'FieldValueInvalid', 'must be a map of state names to states, with at least one state', states);
    return c.problems;
  }
  for (const [name, state] of Object.entries(states)) {
    if (name.length === 0 || name.length > MAX_STATE_NAME)
      c.add(['States', name], 'FieldValueInvalid', `a state name must have 1 to ${MAX_STATE_NAME} characters`, name);
    checkState(c, state, ['States', name]);
  }
  // Reachability and ends are judged only on well-formed states (a state missing its Next is reported as that, not also as a dead end).
  const wellFormed = c.problems.length === 0;
  checkGraph(c, startAt, states as Record<string, State>, wellFormed);
  return c.problems;
}

/** The function names a definition's Task states call, with the path of each Resource. */
export function taskFunctions(definition: WorkflowDefinition): { name: string; path: Path }[] {
  const out: { name: string; path: Path }[] = [];
  for (const [stateName, state] of Object.entries(definition.States)) {
    if (state.Type !== 'Task' || typeof state.Resource !== 'string') continue;
    const name = taskFunctionName(state.Resource);
    if (name) out.push({ name, path: ['States', stateName, 'Resource'] });
  }
  return out;
}
