// The layers hold: every import of every source file against the rule in DESIGN.md, and no import circle among the compiled modules.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { checkImports, findCycles, layerOf, parseImports, type ImportEdge } from './import-boundaries.js';

// Compiled to dist/scripts/: the sources are two levels up, the compiled tree one.
const here = dirname(fileURLToPath(import.meta.url));
const repo = resolve(here, '../..');
const dist = resolve(here, '..');

function walk(dir: string, suffix: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) walk(path, suffix, out);
    else if (name.endsWith(suffix) && !name.endsWith('.d.ts')) out.push(path);
  }
  return out;
}

function edgesOf(root: string, dirs: string[], suffix: string): ImportEdge[] {
  const edges: ImportEdge[] = [];
  for (const file of dirs.flatMap((d) => (existsSync(join(root, d)) ? walk(join(root, d), suffix) : []))) {
    const from = relative(root, file);
    for (const spec of parseImports(readFileSync(file, 'utf8'))) {
      if (!spec.specifier.startsWith('.')) continue;
      const to = relative(root, resolve(dirname(file), spec.specifier)).replace(/\.js$/, suffix);
      edges.push({ from, to, typeOnly: spec.typeOnly });
    }
  }
  return edges;
}

describe('import boundaries', () => {
  it('puts every source file in a layer', () => {
    const files = ['src', 'bin'].flatMap((d) => walk(join(repo, d), '.ts')).map((f) => relative(repo, f));
    const homeless = files.filter((f) => layerOf(f) === undefined);
    assert.deepEqual(homeless, []);
  });

  it('finds no import against the layers in the sources', () => {
    const problems = checkImports(edgesOf(repo, ['src', 'bin'], '.ts'));
    assert.deepEqual(problems, [], `forbidden imports:\n${problems.join('\n')}`);
  });

  it('finds no import circle among the compiled modules (what Node loads)', () => {
    const edges = edgesOf(dist, ['src', 'bin'], '.js').filter((e) => !e.from.endsWith('.test.js'));
    const cycles = findCycles(edges);
    assert.deepEqual(cycles, [], `import circles:\n${cycles.map((c) => c.join(' -> ')).join('\n')}`);
  });
});

describe('checkImports', () => {
  const edge = (from: string, to: string): ImportEdge => ({ from, to, typeOnly: false });

  it('lets each layer import its own and the floors below', () => {
    assert.deepEqual(
      checkImports([
        edge('src/core/api/pod.ts', 'src/core/api/meta.ts'),
        edge('src/net/dns/dns-server.ts', 'src/core/api/service.ts'),
        edge('src/control-plane/master.ts', 'src/net/pod-routes.ts'),
        edge('src/node/worker.ts', 'src/runtime/provider.ts'),
        edge('src/cli/get.ts', 'src/core/client/api-client.ts'),
        edge('src/daemon/daemon.ts', 'src/node/worker.ts'),
        edge('bin/minik8s.ts', 'src/cli/main.ts'),
      ]),
      [],
    );
  });

  it('refuses upward and sideways edges, type imports too', () => {
    assert.deepEqual(
      checkImports([
        edge('src/core/api/pod.ts', 'src/cli/printers.ts'),
        { from: 'src/net/proxy/proxy-iptables.ts', to: 'src/node/proxy/proxy.ts', typeOnly: true },
        edge('src/runtime/docker-provider.ts', 'src/net/pod-routes.ts'),
        edge('src/control-plane/master.ts', 'src/node/worker.ts'),
        edge('src/node/kubelet/kubelet.ts', 'src/control-plane/api-server/auth.ts'),
        edge('src/cli/rollout.ts', 'src/control-plane/reconcilers/deployment.ts'),
        edge('src/daemon/daemon.ts', 'src/cli/main.ts'),
        edge('src/core/store/store.ts', 'test/helpers/etcd.ts'),
      ]),
      [
        'src/core/api/pod.ts imports src/cli/printers.ts: core may import only core',
        'src/net/proxy/proxy-iptables.ts imports src/node/proxy/proxy.ts: net may import only core, net',
        'src/runtime/docker-provider.ts imports src/net/pod-routes.ts: runtime may import only core, runtime',
        'src/control-plane/master.ts imports src/node/worker.ts: control-plane may import only core, net, runtime, control-plane',
        'src/node/kubelet/kubelet.ts imports src/control-plane/api-server/auth.ts: node may import only core, net, runtime, node',
        'src/cli/rollout.ts imports src/control-plane/reconcilers/deployment.ts: cli may import only core, net, runtime, cli',
        'src/daemon/daemon.ts imports src/cli/main.ts: daemon may import only core, net, runtime, control-plane, node, daemon',
        'src/core/store/store.ts imports test/helpers/etcd.ts: core may import only core',
      ],
    );
  });

  it('lets a test beside the source start the other component side and use the test helpers', () => {
    assert.deepEqual(
      checkImports([
        edge('src/node/kubelet/kubelet.test.ts', 'src/control-plane/api-server/server.ts'),
        edge('src/control-plane/api-server/node-proxy.test.ts', 'src/node/kubelet/kubelet-server.ts'),
        edge('src/runtime/image-factory/code-archive.test.ts', 'test/helpers/zip.ts'),
      ]),
      [],
    );
    assert.deepEqual(checkImports([edge('src/core/client/api-client.test.ts', 'src/cli/resolve-kind.ts')]), [
      'src/core/client/api-client.test.ts imports src/cli/resolve-kind.ts: core may import only core',
    ]);
  });
});

describe('parseImports', () => {
  it('reads static, re-export, side-effect and dynamic imports, and which are types only', () => {
    const text = [
      "import { a } from './a.js';",
      "import type { B } from '../b.js';",
      "import {\n  type C,\n  type D,\n} from './cd.js';",
      "import { type E, f } from './ef.js';",
      "export { g } from './g.js';",
      "export type { H } from './h.js';",
      "import './side-effect.js';",
      "const m = await import('./lazy.js');",
      "// import { x } from './commented.js';",
      'const s = "import { y } from \'./in-a-string.js\'";',
      "import yargs from 'yargs';",
    ].join('\n');
    assert.deepEqual(parseImports(text), [
      { specifier: './a.js', typeOnly: false },
      { specifier: '../b.js', typeOnly: true },
      { specifier: './cd.js', typeOnly: true },
      { specifier: './ef.js', typeOnly: false },
      { specifier: './g.js', typeOnly: false },
      { specifier: './h.js', typeOnly: true },
      { specifier: './side-effect.js', typeOnly: false },
      { specifier: './lazy.js', typeOnly: false },
      { specifier: 'yargs', typeOnly: false },
    ]);
  });
});

describe('findCycles', () => {
  const edge = (from: string, to: string, typeOnly = false): ImportEdge => ({ from, to, typeOnly });

  it('finds each circle once, and ignores type-only edges (erased before Node loads anything)', () => {
    assert.deepEqual(findCycles([edge('a', 'b'), edge('b', 'c'), edge('c', 'a'), edge('c', 'd'), edge('d', 'e'), edge('e', 'd', true)]), [
      ['a', 'b', 'c', 'a'],
    ]);
    assert.deepEqual(findCycles([edge('x', 'y'), edge('y', 'x'), edge('z', 'z')]), [
      ['x', 'y', 'x'],
      ['z', 'z'],
    ]);
    assert.deepEqual(findCycles([edge('a', 'b'), edge('b', 'c')]), []);
  });
});
