// Tests for kubectl-style ages, column alignment and table rows.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KindDefinition } from '../core/api/kind.js';
import type { KubeObject } from '../core/api/meta.js';
import { ageSince, alignColumns, formatAge, kindRef, parseOutputFormat, printTable } from './printers.js';

const S = 1000;
const M = 60 * S;
const H = 60 * M;
const D = 24 * H;
const Y = 365 * D;

describe('formatAge (kubectl HumanDuration)', () => {
  const cases: [number, string][] = [
    [-3 * S, '<invalid>'],
    [-1 * S, '0s'],
    [-500, '0s'],
    [0, '0s'],
    [45 * S, '45s'],
    [119 * S, '119s'],
    [2 * M, '2m'],
    [3 * M + 12 * S, '3m12s'],
    [9 * M + 59 * S, '9m59s'],
    [10 * M + 30 * S, '10m'],
    [179 * M, '179m'],
    [3 * H, '3h'],
    [3 * H + 4 * M, '3h4m'],
    [7 * H + 59 * M, '7h59m'],
    [8 * H + 30 * M, '8h'],
    [47 * H, '47h'],
    [2 * D, '2d'],
    [2 * D + 3 * H, '2d3h'],
    [7 * D + 23 * H, '7d23h'],
    [8 * D + 5 * H, '8d'],
    [400 * D, '400d'],
    [2 * Y, '2y'],
    [2 * Y + 10 * D, '2y10d'],
    [8 * Y + 100 * D, '8y'],
  ];
  for (const [ms, want] of cases) {
    it(`${ms} ms -> ${want}`, () => assert.equal(formatAge(ms), want));
  }

  it('ageSince handles missing and bad timestamps', () => {
    const now = new Date('2024-01-01T00:10:00Z');
    assert.equal(ageSince(undefined, now), '<unknown>');
    assert.equal(ageSince('not a time', now), '<unknown>');
    assert.equal(ageSince('2024-01-01T00:00:00Z', now), '10m');
  });
});

describe('alignColumns', () => {
  it('pads to the widest cell plus three, min width 6, last column unpadded', () => {
    const text = alignColumns([
      ['NAME', 'READY', 'AGE'],
      ['nginx', '1/1', '5s'],
      ['a-much-longer-name', '0/1', '10m'],
    ]);
    assert.equal(text, ['NAME                 READY   AGE', 'nginx                1/1     5s', 'a-much-longer-name   0/1     10m', ''].join('\n'));
  });

  it('applies the minimum width to narrow columns and leaves no trailing spaces', () => {
    assert.equal(
      alignColumns([
        ['A', 'B', ''],
        ['x', 'y', ''],
      ]),
      'A     B\nx     y\n',
    );
  });
});

describe('tables', () => {
  const def = {
    kind: 'Pod',
    group: '',
    version: 'v1',
    resource: 'pods',
    singular: 'pod',
    shortNames: ['po'],
    namespaced: true,
    columns: [
      { name: 'STATUS', value: (o: KubeObject) => String((o.status as { phase?: string } | undefined)?.phase ?? '') },
      { name: 'IP', wide: true, value: (o: KubeObject) => String((o.status as { podIP?: string } | undefined)?.podIP ?? '') },
    ],
  } as unknown as KindDefinition;
  const now = new Date('2024-01-01T01:00:00Z');
  const pods: KubeObject[] = [
    {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'web', namespace: 'default', creationTimestamp: '2024-01-01T00:55:00Z', labels: { app: 'web' } },
      status: { phase: 'Running', podIP: '10.244.1.2' },
    },
    { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'db', namespace: 'prod', creationTimestamp: '2024-01-01T00:59:30Z' }, status: {} },
  ];

  it('prints NAME, the kind columns and AGE', () => {
    assert.equal(printTable(def, pods, { now }), 'NAME   STATUS    AGE\nweb    Running   5m\ndb     <none>    30s\n');
  });

  it('-A adds NAMESPACE first, -o wide the wide columns after AGE, --show-labels LABELS', () => {
    assert.equal(
      printTable(def, pods, { now, withNamespace: true, wide: true, showLabels: true }),
      [
        'NAMESPACE   NAME   STATUS    AGE   IP           LABELS',
        'default     web    Running   5m    10.244.1.2   app=web',
        'prod        db     <none>    30s   <none>       <none>',
        '',
      ].join('\n'),
    );
  });

  it('names carry the kind when asked', () => {
    assert.match(printTable(def, pods.slice(0, 1), { now, withKind: true, noHeaders: true }), /^pod\/web {3}/);
  });

  it('kindRef names group kinds as kubectl does', () => {
    assert.equal(kindRef({ kind: 'Deployment', group: 'apps' }), 'deployment.apps');
    assert.equal(kindRef({ kind: 'Pod', group: '' }), 'pod');
  });

  it("rejects unknown output formats with kubectl's message", () => {
    assert.equal(parseOutputFormat('yaml'), 'yaml');
    assert.equal(parseOutputFormat(undefined), undefined);
    assert.throws(() => parseOutputFormat('xml'), /unable to match a printer suitable for the output format "xml", allowed formats are: json,name,wide,yaml/);
  });
});
