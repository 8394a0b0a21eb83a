// The layer rule of DESIGN.md as data, with the import reader and circle finder its test uses.

/**
 * Lowest first. Each layer may import itself and what it lists; nothing imports upward, and the
 * two component trees (what the master runs, what a worker runs) never import each other.
 */
export const LAYERS = {
  core: [],
  net: ['core'],
  runtime: ['core'],
  'control-plane': ['core', 'net', 'runtime'],
  node: ['core', 'net', 'runtime'],
  cli: ['core', 'net', 'runtime'],
  daemon: ['core', 'net', 'runtime', 'control-plane', 'node'],
  bin: ['core', 'net', 'runtime', 'control-plane', 'node', 'cli', 'daemon'],
} as const satisfies Record<string, readonly string[]>;

export type Layer = keyof typeof LAYERS;

export interface ImportEdge {
  /** Repository-relative paths. */
  from: string;
  to: string;
  /** `import type` / `export type`, or every named specifier marked `type`. */
  typeOnly: boolean;
}

/** The layer of a repository-relative path; undefined outside src/ and bin/. */
export function layerOf(path: string): Layer | 'test' | undefined {
  if (path.startsWith('bin/')) return 'bin';
  if (path.startsWith('test/')) return 'test';
  const top = /^src\/([^/]+)\//.exec(path)?.[1];
  return top !== undefined && top in LAYERS ? (top as Layer) : undefined;
}

/** Tests beside the source: the node side's tests start an API server, the control plane's a kubelet, and all may use test/helpers. */
function isTest(path: string): boolean {
  return /\.test\.[jt]s$/.test(path);
}

function allowedFor(from: string, layer: Layer): readonly string[] {
  const allowed: string[] = [layer, ...LAYERS[layer]];
  if (isTest(from) && (layer === 'control-plane' || layer === 'node')) allowed.push(layer === 'node' ? 'control-plane' : 'node', 'test');
  else if (isTest(from) && layer !== 'core') allowed.push('test');
  return allowed;
}

/** One line per import against the rule, `FROM imports TO: LAYER may import only ...`. */
export function checkImports(edges: readonly ImportEdge[]): string[] {
  const problems: string[] = [];
  for (const { from, to } of edges) {
    const layer = layerOf(from);
    if (layer === undefined || layer === 'test') continue;
    const target = layerOf(to);
    if (target !== undefined && allowedFor(from, layer).includes(target)) continue;
    problems.push(`${from} imports ${to}: ${layer} may import only ${[...LAYERS[layer], layer].join(', ')}`);
  }
  return problems;
}

/** The module specifiers a TypeScript or JavaScript file imports, comments and strings aside. */
export function parseImports(text: string): { specifier: string; typeOnly: boolean }[] {
  // Blank out comments and string contents other than module specifiers' own, so that neither counts.
  const code = text.replace(/\/\*[\s\S]*?\*\/|\/\/[^\n]*/g, (m) => m.replace(/[^\n]/g, ' '));
  const found: { at: number; specifier: string; typeOnly: boolean }[] = [];
  const statement = /(?:^|[;\n}])\s*(import|export)\s+(type\s+)?([\w*\s{},$]*?)\s*from\s*(['"])([^'"\n]+)\4/g;
  for (const m of code.matchAll(statement)) {
    const names = m[3] ?? '';
    const braced = /^\{([\s\S]*)\}$/.exec(names.trim());
    const specifiers = braced
      ? braced[1]!
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean)
      : [];
    const allTyped = specifiers.length > 0 && specifiers.every((s) => s.startsWith('type '));
    found.push({ at: m.index!, specifier: m[5]!, typeOnly: m[2] !== undefined || allTyped });
  }
  for (const m of code.matchAll(/(?:^|[;\n])\s*import\s*(['"])([^'"\n]+)\1/g)) found.push({ at: m.index!, specifier: m[2]!, typeOnly: false });
  for (const m of code.matchAll(/\bimport\(\s*(['"])([^'"\n]+)\1\s*\)/g)) found.push({ at: m.index!, specifier: m[2]!, typeOnly: false });
  return found.sort((a, b) => a.at - b.at).map(({ specifier, typeOnly }) => ({ specifier, typeOnly }));
}

/**
 * The import circles Node would meet, one per strongly connected component (Tarjan), each as a
 * path from its first module (by name) back to itself. Type-only edges are erased by the compiler.
 */
export function findCycles(edges: readonly ImportEdge[]): string[][] {
  const next = new Map<string, string[]>();
  for (const e of edges) {
    if (e.typeOnly) continue;
    next.set(e.from, [...(next.get(e.from) ?? []), e.to]);
    if (!next.has(e.to)) next.set(e.to, []);
  }
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    onStack.add(v);
    for (const w of next.get(v)!) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v)!, index.get(w)!));
      }
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    for (;;) {
      const w = stack.pop()!;
      onStack.delete(w);
      component.push(w);
      if (w === v) break;
    }
    if (component.length > 1 || next.get(v)!.includes(v)) components.push(component);
  };
  for (const v of [...next.keys()].sort()) if (!index.has(v)) visit(v);
  return components.map((component) => pathBack(component, next)).sort((a, b) => a[0]!.localeCompare(b[0]!));
}

/** The shortest way from the component's first module back to itself (breadth first, inside the component). */
function pathBack(component: string[], next: Map<string, string[]>): string[] {
  const members = new Set(component);
  const start = [...component].sort()[0]!;
  const cameFrom = new Map<string, string>();
  const queue = [start];
  while (queue.length > 0) {
    const v = queue.shift()!;
    for (const w of [...next.get(v)!].sort()) {
      if (!members.has(w)) continue;
      if (w === start) {
        const path = [start];
        for (let at: string | undefined = v; at !== undefined && at !== start; at = cameFrom.get(at)) path.splice(1, 0, at);
        return [...path, start];
      }
      if (!cameFrom.has(w)) {
        cameFrom.set(w, v);
        queue.push(w);
      }
    }
  }
  return [start, start];
}
