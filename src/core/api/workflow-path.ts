// The JSONPath subset of workflow definitions (`$`, `$.a.b`, `$.a[0]`, `$['a b']`, `$$.` for the context object): parse, read, write.

export type PathStep = string | number;

export interface ParsedPath {
  /** `$$...`: the path reads the execution's context object rather than the state's input. */
  context: boolean;
  steps: PathStep[];
}

/** A path that does not follow the subset; the message says where. */
export class PathSyntaxError extends Error {}

const NAME = /^[A-Za-z_][A-Za-z0-9_-]*/;

/**
 * Parses a reference path. The subset has no wildcards, filters, slices or recursive descent:
 * every path names at most one value, which is what ASL's reference paths require and all that
 * InputPath, ResultPath, OutputPath, Variable and `.$` parameters need here.
 */
export function parsePath(text: string): ParsedPath {
  if (typeof text !== 'string' || !text.startsWith('$')) throw new PathSyntaxError('must start with $');
  const context = text.startsWith('$$');
  let rest = text.slice(context ? 2 : 1);
  const steps: PathStep[] = [];
  while (rest.length > 0) {
    if (rest.startsWith('.')) {
      const m = NAME.exec(rest.slice(1));
      if (!m) throw new PathSyntaxError(`expected a field name after "." at "${rest}"`);
      steps.push(m[0]);
      rest = rest.slice(1 + m[0].length);
    } else if (rest.startsWith('[')) {
      const index = /^\[(\d+)\]/.exec(rest);
      const quoted = /^\['((?:[^'\\]|\\.)*)'\]/.exec(rest) ?? /^\["((?:[^"\\]|\\.)*)"\]/.exec(rest);
      if (index) {
        steps.push(Number(index[1]));
        rest = rest.slice(index[0].length);
      } else if (quoted) {
        steps.push(quoted[1]!.replace(/\\(.)/g, '$1'));
        rest = rest.slice(quoted[0].length);
      } else {
        throw new PathSyntaxError(`expected [N] or ['name'] at "${rest}" (wildcards, slices and filters are not supported)`);
      }
    } else {
      throw new PathSyntaxError(`unexpected "${rest[0]}" at "${rest}"`);
    }
  }
  return { context, steps };
}

/** The syntax problem of a path, or undefined when it parses; `allowContext` false refuses `$$` paths. */
export function pathProblem(text: string, options: { allowContext?: boolean } = {}): string | undefined {
  try {
    const parsed = parsePath(text);
    if (parsed.context && !options.allowContext) return 'must be a path into the state input ($...), not the context object ($$...)';
    return undefined;
  } catch (err) {
    return err instanceof PathSyntaxError ? err.message : String(err);
  }
}

export type ReadResult = { found: true; value: unknown } | { found: false };

/** The value a path names in `root`, or found: false when some step is missing. */
export function readSteps(root: unknown, steps: readonly PathStep[]): ReadResult {
  let cur: unknown = root;
  for (const step of steps) {
    if (typeof step === 'number') {
      if (!Array.isArray(cur) || step >= cur.length) return { found: false };
      cur = cur[step];
    } else {
      if (cur === null || typeof cur !== 'object' || Array.isArray(cur) || !Object.hasOwn(cur, step)) return { found: false };
      cur = (cur as Record<string, unknown>)[step];
    }
  }
  return { found: true, value: cur };
}

/**
 * `root` with `value` placed at `steps`, as ResultPath does: objects on the way are copied (the
 * input is never changed in place) and missing fields are created as objects. Returns undefined
 * when the path runs into something that is not an object (a string, a number, an index past an
 * array's end): ASL's States.ResultPathMatchFailure.
 */
export function writeSteps(root: unknown, steps: readonly PathStep[], value: unknown): { ok: true; value: unknown } | { ok: false } {
  if (steps.length === 0) return { ok: true, value };
  const [head, ...tail] = steps as [PathStep, ...PathStep[]];
  if (typeof head === 'number') {
    if (!Array.isArray(root) || head >= root.length) return { ok: false };
    const inner = writeSteps(root[head], tail, value);
    if (!inner.ok) return inner;
    const copy = [...root];
    copy[head] = inner.value;
    return { ok: true, value: copy };
  }
  if (root === null || typeof root !== 'object' || Array.isArray(root)) return { ok: false };
  const obj = root as Record<string, unknown>;
  const child = Object.hasOwn(obj, head) ? obj[head] : {};
  const inner = writeSteps(child, tail, value);
  if (!inner.ok) return inner;
  return { ok: true, value: { ...obj, [head]: inner.value } };
}
