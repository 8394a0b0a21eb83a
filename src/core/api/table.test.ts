// Tables from one column definition per kind: the columns and cells kubectl shows, and the meta.k8s.io Table the server answers with.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { podKind, type Pod } from './pod.js';
import { formatAge, tableColumns, toTable } from './table.js';

const now = new Date('2026-11-26T12:00:00Z');
const pod: Pod = {
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'web', namespace: 'default', uid: 'u1', creationTimestamp: '2026-11-26T11:55:00Z', labels: { app: 'web' } },
  spec: { containers: [{ name: 'c', image: 'nginx' }], nodeName: 'n1' },
  status: {
    phase: 'Running',
    podIP: '10.244.1.5',
    containerStatuses: [{ name: 'c', ready: true, restartCount: 2, image: 'nginx', imageID: '', state: { running: {} } }],
  },
} as unknown as Pod;

describe('tables', () => {
  it("orders a pod's columns as kubectl does: NAME, the kind's own, AGE, then the wide ones at priority 1", () => {
    assert.deepEqual(
      tableColumns(podKind, { wide: false }).map((c) => c.header),
      ['NAME', 'READY', 'STATUS', 'RESTARTS', 'AGE'],
    );
    const wide = tableColumns(podKind, { wide: true });
    assert.deepEqual(
      wide.slice(0, 5).map((c) => c.priority),
      [0, 0, 0, 0, 0],
    );
    assert.deepEqual(
      wide.slice(5).map((c) => [c.header, c.priority]),
      [
        ['IP', 1],
        ['NODE', 1],
        ['NOMINATED NODE', 1],
        ['READINESS GATES', 1],
      ],
    );
  });

  it('makes a meta.k8s.io/v1 Table whose rows carry the cells and, by default, the metadata', () => {
    const table = toTable(podKind, [pod], { now, listMeta: { resourceVersion: '42' } }) as {
      kind: string;
      apiVersion: string;
      metadata: { resourceVersion: string };
      columnDefinitions: { name: string; type: string; format: string; priority: number }[];
      rows: { cells: string[]; object: { kind: string; metadata: { uid: string } } }[];
    };
    assert.equal(table.kind, 'Table');
    assert.equal(table.apiVersion, 'meta.k8s.io/v1');
    assert.equal(table.metadata.resourceVersion, '42');
    assert.deepEqual(table.columnDefinitions[0], {
      name: 'Name',
      type: 'string',
      format: 'name',
      description: 'Name must be unique within a namespace.',
      priority: 0,
    });
    assert.deepEqual(table.rows[0]!.cells, ['web', '1/1', 'Running', '2', '5m', '10.244.1.5', 'n1', '<none>', '<none>']);
    assert.equal(table.rows[0]!.object.kind, 'PartialObjectMetadata');
    assert.equal(table.rows[0]!.object.metadata.uid, 'u1');
  });

  it('includes the whole object, or none, as includeObject says', () => {
    const whole = toTable(podKind, [pod], { now, includeObject: 'Object' }) as { rows: { object: Pod }[] };
    assert.equal(whole.rows[0]!.object.spec.nodeName, 'n1');
    const none = toTable(podKind, [pod], { now, includeObject: 'None' }) as { rows: Record<string, unknown>[] };
    assert.equal('object' in none.rows[0]!, false);
  });

  it("writes ages as kubectl's HumanDuration", () => {
    assert.equal(formatAge(59_000), '59s');
    assert.equal(formatAge(5 * 60_000 + 3_000), '5m3s');
    assert.equal(formatAge(3 * 3600_000), '3h');
    assert.equal(formatAge(3 * 86400_000 + 4 * 3600_000), '3d4h');
  });
});
