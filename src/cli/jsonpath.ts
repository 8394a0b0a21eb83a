// kubectl's JSONPath templates (`-o jsonpath=...`, custom-columns, wait --for=jsonpath): a small parser and evaluator for its dialect.
import { CliError } from './cli-error.js';

/** One step of a path: a field, an index or slice, a wildcard, a recursive descent, or a filter. */
type Step =
  | { type: 'field'; name: string }
  | { type: 'index'; index: number }
  | { type: 'slice'; start?: number; end?: number; step?: number }
  | { type: 'wildcard' }
  | { type: 'recursive'; name?: string }
  | { type: 'filter'; path: Step[]; op?: string; value?: unknown };

type Node = { type: 'text'; text: string } | { type: 'path'; steps: Step[] } | { type: 'range'; steps: Step[]; body: Node[] };

/** A parsed template; execute() renders it against a value. */
export interface JsonPathTemplate {
  nodes: Node[];
}

function unquote(text: string): string {
  const quote = text[0];
  let out = '';
  for (let i = 1; i < text.length - 1; i++) {
    const c = text[i]!;
    if (c !== '\\') {
      out += c;
      continue;
    }
    const n = text[++i];
    out += n === 'n' ? '\n' : n === 't' ? '\t' : n === 'r' ? '\r' : n === quote || n === '\\' ? n : `\\${n ?? ''}`;
  }
  return out;
}

function literal(text: string): unknown {
  const t = text.trim();
  if (/^(['"]).*\1$/s.test(t)) return unquote(t);
  if (t === 'true' || t === 'false') return t === 'true';
  if (t !== '' && !Number.isNaN(Number(t))) return Number(t);
  throw new CliError(`unrecognized filter value ${t}`);
}

/** Parses a path such as `.items[*].metadata.name` or `@.status.phase`. */
export function parsePath(source: string): Step[] {
  const steps: Step[] = [];
  let i = 0;
  const s = source.trim();
  if (s[0] === '$' || s[0] === '@') i = 1;
  const name = (): string => {
    const m = /^[^.[\]\s()=!<>]*/.exec(s.slice(i))![0];
    i += m.length;
    return m;
  };
  while (i < s.length) {
    if (s.startsWith('..', i)) {
      i += 2;
      if (s[i] === '*') {
        i++;
        steps.push({ type: 'recursive' });
      } else steps.push({ type: 'recursive', name: name() });
    } else if (s[i] === '.') {
      i++;
      if (s[i] === '*') {
        i++;
        steps.push({ type: 'wildcard' });
      } else {
        const n = name();
        if (n) steps.push({ type: 'field', name: n });
      }
    } else if (s[i] === '[') {
      // Find the matching bracket, skipping quoted text.
      let depth = 0;
      let j = i;
      let quote = '';
      for (; j < s.length; j++) {
        const c = s[j]!;
        if (quote) {
          if (c === '\\') j++;
          else if (c === quote) quote = '';
        } else if (c === '"' || c === "'") quote = c;
        else if (c === '[') depth++;
        else if (c === ']' && --depth === 0) break;
      }
      if (j >= s.length) throw new CliError(`unterminated array in ${source}`);
      const inner = s.slice(i + 1, j).trim();
      i = j + 1;
      if (inner === '*') steps.push({ type: 'wildcard' });
      else if (/^(['"]).*\1$/s.test(inner)) steps.push({ type: 'field', name: unquote(inner) });
      else if (inner.startsWith('?(') && inner.endsWith(')')) {
        const m = /^(@[^=!<>]*?)\s*(==|!=|<=|>=|<|>)\s*(.+)$/s.exec(inner.slice(2, -1).trim());
        if (m) steps.push({ type: 'filter', path: parsePath(m[1]!), op: m[2]!, value: literal(m[3]!) });
        else steps.push({ type: 'filter', path: parsePath(inner.slice(2, -1)) });
      } else if (/^-?\d+$/.test(inner)) steps.push({ type: 'index', index: Number(inner) });
      else if (/^(-?\d*):(-?\d*)(:(-?\d*))?$/.test(inner)) {
        const [a, b, c] = inner.split(':').map((x) => (x === '' || x === undefined ? undefined : Number(x)));
        steps.push({ type: 'slice', start: a, end: b, step: c });
      } else throw new CliError(`invalid array index ${inner}`);
    } else {
      const n = name();
      if (!n) throw new CliError(`unrecognized character in action: ${s[i]}`);
      steps.push({ type: 'field', name: n });
    }
  }
  return steps;
}

function compare(a: unknown, op: string, b: unknown): boolean {
  if (op === '==') return a === b || (a !== undefined && String(a) === String(b) && typeof b !== 'string');
  if (op === '!=') return !compare(a, '==', b);
  if (typeof a !== 'number' || typeof b !== 'number') return false;
  return op === '<' ? a < b : op === '>' ? a > b : op === '<=' ? a <= b : a >= b;
}

function descend(value: unknown, out: unknown[], name?: string): void {
  if (Array.isArray(value)) for (const v of value) descend(v, out, name);
  else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      if (name === undefined || k === name) out.push(v);
      descend(v, out, name);
    }
  }
}

/** Every value the path reaches from `root`; missing fields reach nothing. */
export function evaluate(steps: readonly Step[], root: unknown): unknown[] {
  let values: unknown[] = [root];
  for (const step of steps) {
    const next: unknown[] = [];
    for (const v of values) {
      if (step.type === 'field') {
        if (v && typeof v === 'object' && !Array.isArray(v) && step.name in v) next.push((v as Record<string, unknown>)[step.name]);
      } else if (step.type === 'wildcard') {
        if (Array.isArray(v)) next.push(...v);
        else if (v && typeof v === 'object') next.push(...Object.values(v));
      } else if (step.type === 'index') {
        if (Array.isArray(v)) {
          const i = step.index < 0 ? v.length + step.index : step.index;
          if (i >= 0 && i < v.length) next.push(v[i]);
          else throw new CliError(`array index out of bounds: index ${step.index}, length ${v.length}`);
        }
      } else if (step.type === 'slice') {
        if (Array.isArray(v)) {
          const norm = (x: number | undefined, d: number) => (x === undefined ? d : x < 0 ? Math.max(0, v.length + x) : Math.min(x, v.length));
          const by = step.step ?? 1;
          for (let i = norm(step.start, 0); i < norm(step.end, v.length); i += by > 0 ? by : 1) next.push(v[i]);
        }
      } else if (step.type === 'recursive') {
        descend(v, next, step.name);
      } else {
        const items = Array.isArray(v) ? v : [v];
        for (const item of items) {
          const found = evaluate(step.path, item);
          if (step.op === undefined ? found.length > 0 && found[0] !== false : found.some((f) => compare(f, step.op!, step.value))) next.push(item);
        }
      }
    }
    values = next;
  }
  return values;
}

/** Splits `{...}` actions from text and nests range...end blocks. */
export function parseTemplate(template: string): JsonPathTemplate {
  const stack: Node[][] = [[]];
  const ranges: { steps: Step[] }[] = [];
  let i = 0;
  while (i < template.length) {
    const open = template.indexOf('{', i);
    if (open < 0) {
      stack.at(-1)!.push({ type: 'text', text: template.slice(i) });
      break;
    }
    if (open > i) stack.at(-1)!.push({ type: 'text', text: template.slice(i, open) });
    // The action ends at the first } outside quotes.
    let j = open + 1;
    let quote = '';
    for (; j < template.length; j++) {
      const c = template[j]!;
      if (quote) {
        if (c === '\\') j++;
        else if (c === quote) quote = '';
      } else if (c === '"' || c === "'") quote = c;
      else if (c === '}') break;
    }
    if (j >= template.length) throw new CliError(`unclosed action in template ${JSON.stringify(template)}`);
    const action = template.slice(open + 1, j).trim();
    i = j + 1;
    if (/^(['"]).*\1$/s.test(action)) stack.at(-1)!.push({ type: 'text', text: unquote(action) });
    else if (action.startsWith('range ')) {
      const body: Node[] = [];
      ranges.push({ steps: parsePath(action.slice(6)) });
      stack.push(body);
    } else if (action === 'end') {
      const range = ranges.pop();
      if (!range) throw new CliError('not in range, nothing to end');
      const body = stack.pop()!;
      stack.at(-1)!.push({ type: 'range', steps: range.steps, body });
    } else if (action === '' || action === '@' || action === '$') stack.at(-1)!.push({ type: 'path', steps: [] });
    else stack.at(-1)!.push({ type: 'path', steps: parsePath(action) });
  }
  if (ranges.length) throw new CliError('unclosed range: {range} needs an {end}');
  return { nodes: stack[0]! };
}

/** How kubectl prints one value: strings raw, everything else as compact JSON. */
export function formatValue(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === null) return 'null';
  return typeof value === 'object' ? JSON.stringify(value) : String(value);
}

function render(nodes: readonly Node[], value: unknown): string {
  let out = '';
  for (const node of nodes) {
    if (node.type === 'text') out += node.text;
    else if (node.type === 'path') out += evaluate(node.steps, value).map(formatValue).join(' ');
    else {
      for (const v of evaluate(node.steps, value)) {
        for (const item of Array.isArray(v) && node.steps.at(-1)?.type !== 'wildcard' ? v : [v]) out += render(node.body, item);
      }
    }
  }
  return out;
}

/** Renders a template against a value (an object, or a List for several). */
export function executeJsonPath(template: string | JsonPathTemplate, value: unknown): string {
  const parsed = typeof template === 'string' ? parseTemplate(template) : template;
  return render(parsed.nodes, value);
}

/** custom-columns=HEADER:PATH,...: the columns, each path as kubectl takes it (with or without braces and leading dot). */
export function parseCustomColumns(spec: string): { header: string; steps: Step[] }[] {
  if (spec.trim() === '') throw new CliError('custom-columns format specified but no custom columns given');
  return spec.split(',').map((column) => {
    const colon = column.indexOf(':');
    if (colon <= 0) throw new CliError(`unexpected custom-columns spec: ${column}, expected <header>:<json-path-expr>`);
    let path = column.slice(colon + 1).trim();
    if (path.startsWith('{') && path.endsWith('}')) path = path.slice(1, -1);
    if (!path.startsWith('.') && !path.startsWith('[') && !path.startsWith('@') && !path.startsWith('$')) path = `.${path}`;
    return { header: column.slice(0, colon), steps: parsePath(path) };
  });
}

/** One custom-columns cell: the values joined by commas, <none> when there are none. */
export function customColumnCell(steps: readonly Step[], obj: unknown): string {
  const values = evaluate(steps, obj).filter((v) => v !== undefined && v !== null);
  return values.length ? values.map(formatValue).join(',') : '<none>';
}
