// Choice rules: which branch a Choice state takes for an input (comparisons, Is* tests, And/Or/Not), as ASL defines them.
import { CHOICE_OPERATORS, isTimestamp, type ChoiceRule, type State } from '../../core/api/workflow-definition.js';
import { parsePath, readSteps } from '../../core/api/workflow-path.js';
import { WorkflowError } from './workflow-error.js';

/** What paths read: the state's input (`$`), the context object (`$$`). */
export interface PathRoots {
  input: unknown;
  context: unknown;
}

export function readPath(path: string, roots: PathRoots): { found: true; value: unknown } | { found: false } {
  const parsed = parsePath(path);
  return readSteps(parsed.context ? roots.context : roots.input, parsed.steps);
}

type Compare = (a: unknown, b: unknown) => boolean;

function typed<T>(check: (x: unknown) => x is T, cmp: (a: T, b: T) => boolean): Compare {
  return (a, b) => check(a) && check(b) && cmp(a, b);
}
const isString = (x: unknown): x is string => typeof x === 'string';
const isNumber = (x: unknown): x is number => typeof x === 'number' && Number.isFinite(x);
const isBoolean = (x: unknown): x is boolean => typeof x === 'boolean';
const time = (x: string) => Date.parse(x);

/** `*` matches any run of characters; `\*` is a literal star (ASL's StringMatches). */
function wildcardMatch(value: string, pattern: string): boolean {
  let re = '';
  for (let i = 0; i < pattern.length; i++) {
    const ch = pattern[i]!;
    if (ch === '\\' && i + 1 < pattern.length) re += pattern[++i]!.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    else if (ch === '*') re += '.*';
    else re += ch.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${re}$`, 's').test(value);
}

/** Comparisons by their base name (the `...Path` forms share them). A value of another type never matches. */
const COMPARISONS: Readonly<Record<string, Compare>> = {
  StringEquals: typed(isString, (a, b) => a === b),
  StringLessThan: typed(isString, (a, b) => a < b),
  StringGreaterThan: typed(isString, (a, b) => a > b),
  StringLessThanEquals: typed(isString, (a, b) => a <= b),
  StringGreaterThanEquals: typed(isString, (a, b) => a >= b),
  StringMatches: typed(isString, (a, b) => wildcardMatch(a, b)),
  NumericEquals: typed(isNumber, (a, b) => a === b),
  NumericLessThan: typed(isNumber, (a, b) => a < b),
  NumericGreaterThan: typed(isNumber, (a, b) => a > b),
  NumericLessThanEquals: typed(isNumber, (a, b) => a <= b),
  NumericGreaterThanEquals: typed(isNumber, (a, b) => a >= b),
  BooleanEquals: typed(isBoolean, (a, b) => a === b),
  TimestampEquals: typed(isTimestamp, (a, b) => time(a) === time(b)),
  TimestampLessThan: typed(isTimestamp, (a, b) => time(a) < time(b)),
  TimestampGreaterThan: typed(isTimestamp, (a, b) => time(a) > time(b)),
  TimestampLessThanEquals: typed(isTimestamp, (a, b) => time(a) <= time(b)),
  TimestampGreaterThanEquals: typed(isTimestamp, (a, b) => time(a) >= time(b)),
};

/** The Is* tests: on a missing variable all but IsPresent are false, as is IsPresent itself. */
const TESTS: Readonly<Record<string, (found: boolean, value: unknown) => boolean>> = {
  IsPresent: (found) => found,
  IsNull: (found, value) => found && value === null,
  IsString: (found, value) => found && typeof value === 'string',
  IsNumeric: (found, value) => found && isNumber(value),
  IsBoolean: (found, value) => found && typeof value === 'boolean',
  IsTimestamp: (found, value) => found && isTimestamp(value),
};

function invalidPath(path: string, what: string): WorkflowError {
  return new WorkflowError('States.Runtime', `Invalid path '${path}': the choice rule's ${what} names no value in the input`);
}

/** Whether a rule holds. A comparison whose Variable (or operand path) names nothing fails the execution (States.Runtime), as in ASL. */
export function evaluateRule(rule: ChoiceRule, roots: PathRoots): boolean {
  if (rule.And) return rule.And.every((r) => evaluateRule(r, roots));
  if (rule.Or) return rule.Or.some((r) => evaluateRule(r, roots));
  if (rule.Not) return !evaluateRule(rule.Not, roots);
  const op = Object.keys(rule).find((k) => k in CHOICE_OPERATORS);
  if (!op) throw new WorkflowError('States.Runtime', 'a choice rule has no operator');
  const variable = rule.Variable!;
  const read = readPath(variable, roots);
  const expected = rule[op];
  const test = TESTS[op];
  if (test) return test(read.found, read.found ? read.value : undefined) === expected;
  if (!read.found) throw invalidPath(variable, 'Variable');
  let operand = expected;
  let base = op;
  if (op.endsWith('Path')) {
    base = op.slice(0, -'Path'.length);
    const other = readPath(String(expected), roots);
    if (!other.found) throw invalidPath(String(expected), `${op} operand`);
    operand = other.value;
  }
  return COMPARISONS[base]!(read.value, operand);
}

/** The state a Choice goes to: the Next of the first rule that holds, else Default; States.NoChoiceMatched without one. */
export function chooseNext(state: State, roots: PathRoots): string {
  for (const rule of state.Choices ?? []) {
    if (evaluateRule(rule, roots)) return rule.Next!;
  }
  if (state.Default !== undefined) return state.Default;
  throw new WorkflowError('States.NoChoiceMatched', 'no choice rule matched the input and the state has no Default');
}
