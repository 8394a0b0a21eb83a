// Label selectors (string form and LabelSelector objects, one representation) and field selectors.
import * as v from 'valibot';
import { mapSchema } from './meta.js';
import { withChecks, type FieldProblem } from './validate.js';

export type SelectorOperator = 'In' | 'NotIn' | 'Exists' | 'DoesNotExist' | 'Gt' | 'Lt';

/** One requirement; `a=b` is `In [b]` and `a!=b` is `NotIn [b]`, as in Kubernetes' own representation. */
export interface LabelRequirement {
  key: string;
  operator: SelectorOperator;
  values: readonly string[];
}

/** A conjunction of requirements; the empty selector matches everything. */
export interface Selector {
  requirements: readonly LabelRequirement[];
}

/** Label keys: optional DNS-subdomain prefix and `/`, then a name of at most 63 characters. */
const LABEL_KEY = /^(([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*)\/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]{0,61})?[A-Za-z0-9])?$/;

const KEY_MESSAGE =
  "a valid label key must be a name of at most 63 alphanumeric characters, '-', '_' or '.' (starting and ending with an alphanumeric), with an optional DNS subdomain prefix and '/'";
const VALUE_MESSAGE =
  "a valid label value must be an empty string or at most 63 alphanumeric characters, '-', '_' or '.', starting and ending with an alphanumeric character";

function checkKey(key: string): void {
  if (!LABEL_KEY.test(key) || key.length > 317) throw new Error(`invalid label key "${key}": ${KEY_MESSAGE}`);
}

function checkValue(value: string): void {
  if (!LABEL_VALUE.test(value)) throw new Error(`invalid label value "${value}": ${VALUE_MESSAGE}`);
}

/** Builds one requirement, applying the same rules to parsed strings and to LabelSelector objects. */
export function requirement(key: string, operator: SelectorOperator, values: readonly string[] = []): LabelRequirement {
  checkKey(key);
  switch (operator) {
    case 'In':
    case 'NotIn':
      if (values.length === 0) throw new Error(`for 'in', 'notin' operators, values set can't be empty (key "${key}")`);
      values.forEach(checkValue);
      break;
    case 'Exists':
    case 'DoesNotExist':
      if (values.length > 0) throw new Error(`values set must be empty for exists and does not exist (key "${key}")`);
      break;
    case 'Gt':
    case 'Lt':
      if (values.length !== 1 || !/^-?\d+$/.test(values[0])) throw new Error(`for 'Gt', 'Lt' operators, exactly one integer value is required (key "${key}")`);
      break;
  }
  return { key, operator, values: [...values] };
}

// ---- String parsing ------------------------------------------------------------------------

type Token =
  | { type: 'id'; text: string; pos: number }
  | { type: 'op'; text: '=' | '==' | '!=' | '!' | '>' | '<' | ',' | '(' | ')'; pos: number }
  | { type: 'end'; pos: number };

const SPECIAL = new Set([',', '(', ')', '!', '=', '<', '>']);

function tokenize(input: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < input.length) {
    const c = input[i];
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    if (c === '=' && input[i + 1] === '=') {
      tokens.push({ type: 'op', text: '==', pos: i });
      i += 2;
    } else if (c === '!' && input[i + 1] === '=') {
      tokens.push({ type: 'op', text: '!=', pos: i });
      i += 2;
    } else if (SPECIAL.has(c)) {
      tokens.push({ type: 'op', text: c as '=' | '!' | '>' | '<' | ',' | '(' | ')', pos: i });
      i++;
    } else {
      const start = i;
      while (i < input.length && !SPECIAL.has(input[i]) && !/\s/.test(input[i])) i++;
      tokens.push({ type: 'id', text: input.slice(start, i), pos: start });
    }
  }
  tokens.push({ type: 'end', pos: input.length });
  return tokens;
}

function describe(t: Token): string {
  return t.type === 'end' ? 'end of string' : `"${t.text}"`;
}

class SelectorParser {
  #tokens: Token[];
  #i = 0;

  constructor(readonly input: string) {
    this.#tokens = tokenize(input);
  }

  #peek(): Token {
    return this.#tokens[this.#i];
  }

  #next(): Token {
    return this.#tokens[this.#i++];
  }

  #fail(t: Token, expected: string): never {
    throw new Error(`found ${describe(t)} at position ${t.pos} of "${this.input}", expected ${expected}`);
  }

  parse(): Selector {
    const requirements: LabelRequirement[] = [];
    if (this.#peek().type === 'end') return { requirements };
    for (;;) {
      requirements.push(this.#requirement());
      const t = this.#next();
      if (t.type === 'end') return { requirements };
      if (!(t.type === 'op' && t.text === ',')) this.#fail(t, "',' or end of string");
    }
  }

  #key(): string {
    const t = this.#next();
    if (t.type !== 'id') this.#fail(t, 'a label key');
    checkKey(t.text);
    return t.text;
  }

  /** A value may be empty (`a=` selects objects whose label `a` is the empty string). */
  #optionalValue(): string {
    const t = this.#peek();
    if (t.type === 'id') {
      this.#i++;
      return t.text;
    }
    return '';
  }

  #requirement(): LabelRequirement {
    const first = this.#peek();
    if (first.type === 'op' && first.text === '!') {
      this.#i++;
      return requirement(this.#key(), 'DoesNotExist');
    }
    const key = this.#key();
    const t = this.#peek();
    if (t.type === 'end' || (t.type === 'op' && t.text === ',')) return requirement(key, 'Exists');
    this.#i++;
    if (t.type === 'op') {
      switch (t.text) {
        case '=':
        case '==':
          return requirement(key, 'In', [this.#optionalValue()]);
        case '!=':
          return requirement(key, 'NotIn', [this.#optionalValue()]);
        case '>':
        case '<': {
          const value = this.#next();
          if (value.type !== 'id') this.#fail(value, 'an integer value');
          return requirement(key, t.text === '>' ? 'Gt' : 'Lt', [value.text]);
        }
        default:
          this.#fail(t, "an operator ('=', '==', '!=', 'in', 'notin', '>' or '<')");
      }
    }
    if (t.text === 'in' || t.text === 'notin') return requirement(key, t.text === 'in' ? 'In' : 'NotIn', this.#valueSet());
    return this.#fail(t, "an operator ('=', '==', '!=', 'in', 'notin', '>' or '<')");
  }

  #valueSet(): string[] {
    const open = this.#next();
    if (!(open.type === 'op' && open.text === '(')) this.#fail(open, "'('");
    const values: string[] = [];
    for (;;) {
      const t = this.#next();
      if (t.type === 'id') values.push(t.text);
      else this.#fail(t, 'a value');
      const sep = this.#next();
      if (sep.type === 'op' && sep.text === ')') return values;
      if (!(sep.type === 'op' && sep.text === ',')) this.#fail(sep, "',' or ')'");
    }
  }
}

/** Parses the string form: `app=web,tier!=db,env in (a,b),env notin (c),!legacy,release,n>3`. Throws with a clear message on bad syntax. */
export function parseSelector(input: string): Selector {
  return new SelectorParser(input).parse();
}

/** The empty selector, which matches every object. */
export const everything: Selector = { requirements: [] };

function matchesOne(r: LabelRequirement, labels: Readonly<Record<string, string>>): boolean {
  const has = Object.hasOwn(labels, r.key);
  const value = has ? labels[r.key] : undefined;
  switch (r.operator) {
    case 'In':
      return has && r.values.includes(value!);
    case 'NotIn':
      return !has || !r.values.includes(value!);
    case 'Exists':
      return has;
    case 'DoesNotExist':
      return !has;
    case 'Gt':
    case 'Lt': {
      if (!has || !/^-?\d+$/.test(value!)) return false;
      const [a, b] = [Number(value), Number(r.values[0])];
      return r.operator === 'Gt' ? a > b : a < b;
    }
  }
}

/** True when every requirement holds for the labels. */
export function matches(selector: Selector, labels: Readonly<Record<string, string>> | undefined): boolean {
  const l = labels ?? {};
  return selector.requirements.every((r) => matchesOne(r, l));
}

function formatOne(r: LabelRequirement): string {
  switch (r.operator) {
    case 'In':
      return r.values.length === 1 ? `${r.key}=${r.values[0]}` : `${r.key} in (${r.values.join(',')})`;
    case 'NotIn':
      return r.values.length === 1 ? `${r.key}!=${r.values[0]}` : `${r.key} notin (${r.values.join(',')})`;
    case 'Exists':
      return r.key;
    case 'DoesNotExist':
      return `!${r.key}`;
    case 'Gt':
      return `${r.key}>${r.values[0]}`;
    case 'Lt':
      return `${r.key}<${r.values[0]}`;
  }
}

/** Back to the string form; `parseSelector(formatSelector(s))` gives `s` again. */
export function formatSelector(selector: Selector): string {
  return selector.requirements.map(formatOne).join(',');
}

// ---- LabelSelector objects -------------------------------------------------------------------

const labelKeySchema = v.pipe(v.string(), v.maxLength(317), v.regex(LABEL_KEY, KEY_MESSAGE));
const labelValueSchema = v.pipe(v.string(), v.maxLength(63, 'must be no more than 63 characters'), v.regex(LABEL_VALUE, VALUE_MESSAGE));

export const labelSelectorRequirementSchema = withChecks(
  v.strictObject({
    key: labelKeySchema,
    operator: v.picklist(['In', 'NotIn', 'Exists', 'DoesNotExist']),
    values: v.optional(v.array(labelValueSchema)),
  }),
  (r): FieldProblem[] => {
    const n = r.values?.length ?? 0;
    const needsValues = r.operator === 'In' || r.operator === 'NotIn';
    if (needsValues && n === 0) return [{ path: ['values'], reason: 'FieldValueRequired', detail: "must be specified when `operator` is 'In' or 'NotIn'" }];
    if (!needsValues && n > 0)
      return [{ path: ['values'], reason: 'FieldValueForbidden', detail: "may not be specified when `operator` is 'Exists' or 'DoesNotExist'" }];
    return [];
  },
);

/** Kubernetes' LabelSelector: matchLabels and matchExpressions, ANDed. */
export const labelSelectorSchema = v.strictObject({
  matchLabels: v.optional(mapSchema(labelKeySchema, labelValueSchema)),
  matchExpressions: v.optional(v.array(labelSelectorRequirementSchema)),
});
export type LabelSelector = v.InferOutput<typeof labelSelectorSchema>;

/** The shape of matchExpressions entries, also used by node affinity terms (which add Gt and Lt). */
export interface SelectorExpression {
  key: string;
  operator: string;
  values?: readonly string[];
}

const OPERATORS = new Set<string>(['In', 'NotIn', 'Exists', 'DoesNotExist', 'Gt', 'Lt']);

/** Converts expressions (LabelSelector or node-selector terms) to requirements; throws on an unknown operator. */
export function requirementsFromExpressions(expressions: readonly SelectorExpression[]): LabelRequirement[] {
  return expressions.map((e) => {
    if (!OPERATORS.has(e.operator)) throw new Error(`"${e.operator}" is not a valid selector operator`);
    return requirement(e.key, e.operator as SelectorOperator, e.values ?? []);
  });
}

/**
 * Converts a LabelSelector object. An empty LabelSelector matches everything; callers decide what
 * an absent one means (Kubernetes: nothing, e.g. a Service without a selector has no endpoints).
 */
export function selectorFromLabelSelector(ls: { matchLabels?: Readonly<Record<string, string>>; matchExpressions?: readonly SelectorExpression[] }): Selector {
  const requirements: LabelRequirement[] = [];
  // Sorted so that the string form is stable whatever order the manifest used.
  for (const key of Object.keys(ls.matchLabels ?? {}).sort()) requirements.push(requirement(key, 'In', [ls.matchLabels![key]]));
  requirements.push(...requirementsFromExpressions(ls.matchExpressions ?? []));
  return { requirements };
}

/** A selector from a plain map (Service spec.selector, nodeSelector). */
export function selectorFromMap(map: Readonly<Record<string, string>>): Selector {
  return selectorFromLabelSelector({ matchLabels: map });
}

// ---- Field selectors -------------------------------------------------------------------------

export interface FieldRequirement {
  /** A dot path such as `spec.nodeName`. */
  field: string;
  operator: '=' | '!=';
  value: string;
}

const FIELD_PATH = /^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/;

/** Splits on an unescaped separator; `\,` `\=` `\\` escape them in values, as Kubernetes allows. */
function splitUnescaped(input: string, separator: string): string[] {
  const parts: string[] = [];
  let current = '';
  for (let i = 0; i < input.length; i++) {
    const c = input[i];
    if (c === '\\' && i + 1 < input.length) {
      current += c + input[i + 1];
      i++;
    } else if (c === separator) {
      parts.push(current);
      current = '';
    } else {
      current += c;
    }
  }
  parts.push(current);
  return parts;
}

/** Undoes `\\`, `\,` and `\=`; an unescaped `=` (as in `a=b=c`) or an unknown escape is an error. */
function unescapeValue(value: string, input: string): string {
  let out = '';
  for (let i = 0; i < value.length; i++) {
    const c = value[i];
    if (c === '\\') {
      const next = value[i + 1];
      if (next !== '\\' && next !== ',' && next !== '=') throw new Error(`invalid escape sequence in field selector '${input}'`);
      out += next;
      i++;
    } else if (c === '=') {
      throw new Error(`invalid field selector '${input}': unescaped '=' in a value`);
    } else {
      out += c;
    }
  }
  return out;
}

/** Parses `spec.nodeName=n1,status.phase!=Running` (`=`, `==`, `!=`). Throws on anything else. */
export function parseFieldSelector(input: string): FieldRequirement[] {
  if (input.trim() === '') return [];
  return splitUnescaped(input, ',').map((part) => {
    const m = /^\s*([^=!\s]+)\s*(==|=|!=)(.*)$/.exec(part);
    if (!m) throw new Error(`invalid selector: '${input}'; can't understand '${part}'`);
    const [, field, op, raw] = m;
    if (!FIELD_PATH.test(field)) throw new Error(`invalid field path "${field}" in '${input}'`);
    return { field, operator: op === '!=' ? '!=' : '=', value: unescapeValue(raw.trim(), input) };
  });
}

/** Reads a dot path; missing fields read as the empty string, as in Kubernetes field selectors. */
export function fieldValue(obj: unknown, path: string): string {
  let cur: unknown = obj;
  for (const part of path.split('.')) {
    if (cur === null || typeof cur !== 'object' || !Object.hasOwn(cur, part)) return '';
    cur = (cur as Record<string, unknown>)[part];
  }
  if (cur === undefined || cur === null) return '';
  return typeof cur === 'object' ? JSON.stringify(cur) : String(cur);
}

/** True when every field requirement holds for the object. */
export function matchesFields(requirements: readonly FieldRequirement[], obj: unknown): boolean {
  return requirements.every((r) => (fieldValue(obj, r.field) === r.value) === (r.operator === '='));
}

/** Back to the string form, escaping separators in values. */
export function formatFieldSelector(requirements: readonly FieldRequirement[]): string {
  return requirements.map((r) => `${r.field}${r.operator}${r.value.replace(/[\\,=]/g, (c) => `\\${c}`)}`).join(',');
}
