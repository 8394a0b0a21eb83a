// kubectl's JSONPath dialect, case by case: what each template prints for the same objects kubectl would print it for.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { customColumnCell, executeJsonPath, parseCustomColumns } from './jsonpath.js';

const list = {
  kind: 'List',
  items: [
    { metadata: { name: 'a', labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'x:1' }] }, status: { phase: 'Running', ready: true, n: 3 } },
    {
      metadata: { name: 'b' },
      spec: {
        containers: [
          { name: 'c', image: 'y:1' },
          { name: 'd', image: 'z:1' },
        ],
      },
      status: { phase: 'Pending', n: 1 },
    },
  ],
};

describe('jsonpath templates', () => {
  const cases: [string, string][] = [
    ['{.items[*].metadata.name}', 'a b'],
    ['{.items[0].metadata.name}', 'a'],
    ['{.items[-1].metadata.name}', 'b'],
    ['{.items[0:1].metadata.name}', 'a'],
    ['{.items[*].spec.containers[*].image}', 'x:1 y:1 z:1'],
    ['{range .items[*]}{.metadata.name}{"\\t"}{.status.phase}{"\\n"}{end}', 'a\tRunning\nb\tPending\n'],
    ['{range .items}{.metadata.name},{end}', 'a,b,'],
    ['{.items[?(@.status.phase=="Running")].metadata.name}', 'a'],
    ["{.items[?(@.status.phase!='Running')].metadata.name}", 'b'],
    ['{.items[?(@.status.n>2)].metadata.name}', 'a'],
    ['{.items[?(@.metadata.labels)].metadata.name}', 'a'],
    ['{.items[0].metadata.labels}', '{"app":"web"}'],
    ['{.items[0].status.ready} {.items[0].status.n}', 'true 3'],
    ["{.items[0].metadata.labels['app']}", 'web'],
    ['{..image}', 'x:1 y:1 z:1'],
    ['{.items[*].missing}', ''],
    ['names: {.items[*].metadata.name}!', 'names: a b!'],
    ['{.kind}', 'List'],
  ];
  for (const [template, want] of cases) {
    it(template, () => assert.equal(executeJsonPath(template, list), want));
  }

  it('refuses malformed templates with a message', () => {
    assert.throws(() => executeJsonPath('{.items[0}', list), /unterminated array|unclosed action/);
    assert.throws(() => executeJsonPath('{range .items[*]}{.x}', list), /unclosed range/);
    assert.throws(() => executeJsonPath('{end}', list), /not in range/);
    assert.throws(() => executeJsonPath('{.items[5]}', list), /out of bounds/);
  });
});

describe('custom-columns', () => {
  it('takes paths with or without braces and the leading dot; cells join values by commas, <none> when empty', () => {
    const columns = parseCustomColumns('NAME:.metadata.name,IMAGES:{.spec.containers[*].image},APP:metadata.labels.app');
    assert.deepEqual(
      columns.map((c) => c.header),
      ['NAME', 'IMAGES', 'APP'],
    );
    assert.deepEqual(
      list.items.map((o) => columns.map((c) => customColumnCell(c.steps, o))),
      [
        ['a', 'x:1', 'web'],
        ['b', 'y:1,z:1', '<none>'],
      ],
    );
    assert.throws(() => parseCustomColumns('NAME'), /expected <header>:<json-path-expr>/);
  });
});
