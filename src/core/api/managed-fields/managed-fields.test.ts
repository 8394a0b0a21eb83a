// Field sets, FieldsV1, merge and ownership as tables: what each write leaves managers owning, what an apply conflicts on, what it removes.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { podPatchMeta, workloadPatchMeta } from '../patch-meta.js';
import { fieldValues, formatPath, fromFieldsV1, joinPath, toFieldsV1 } from './field-set.js';
import { conflictMessage, findConflicts, trackWrite, type ManagedFieldsEntry, type Writer } from './managed-fields.js';
import { mergeApplied, removeField } from './merge.js';

const deployMeta = workloadPatchMeta();
const NOW = new Date('2026-01-01T00:00:00Z');
const path = (...elements: string[]) => joinPath(elements);

function deploy(spec: Record<string, unknown>, labels?: Record<string, string>): Record<string, unknown> {
  return { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: 'ns', uid: 'u', ...(labels ? { labels } : {}) }, spec };
}

const containers = (...items: Record<string, unknown>[]) => ({ template: { spec: { containers: items } } });

describe('field sets', () => {
  const cases: { name: string; obj: Record<string, unknown>; fieldsV1: unknown }[] = [
    {
      name: "server metadata is no one's; labels are a map that is itself owned",
      obj: deploy({ replicas: 2 }, { app: 'web' }),
      fieldsV1: { 'f:metadata': { 'f:labels': { '.': {}, 'f:app': {} } }, 'f:spec': { 'f:replicas': {} } },
    },
    {
      name: 'containers by name, each item owned with its fields; an atomic list of args whole',
      obj: deploy(containers({ name: 'c', image: 'nginx', args: ['a', 'b'] })),
      fieldsV1: {
        'f:spec': { 'f:template': { 'f:spec': { 'f:containers': { 'k:{"name":"c"}': { '.': {}, 'f:args': {}, 'f:image': {}, 'f:name': {} } } } } },
      },
    },
    {
      name: 'a label selector is atomic; finalizers are a set of values',
      obj: { ...deploy({ selector: { matchLabels: { app: 'web' } } }), metadata: { name: 'web', finalizers: ['x'] } },
      fieldsV1: { 'f:metadata': { 'f:finalizers': { 'v:"x"': {} } }, 'f:spec': { 'f:selector': {} } },
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const keys = [...fieldValues(c.obj, deployMeta).keys()];
      const encoded = toFieldsV1(keys);
      assert.deepEqual(encoded, c.fieldsV1);
      assert.deepEqual(new Set(keys), fromFieldsV1(encoded));
    });
  }

  it('scopes: a status write owns only status, a spec write all but status', () => {
    const obj = { ...deploy({ replicas: 1 }), status: { replicas: 1 } };
    assert.deepEqual([...fieldValues(obj, deployMeta, 'status').keys()], [path('f:status', 'f:replicas')]);
    assert.deepEqual([...fieldValues(obj, deployMeta, 'spec').keys()], [path('f:spec', 'f:replicas')]);
  });

  it('prints paths as Kubernetes does', () => {
    assert.equal(
      formatPath(path('f:spec', 'f:template', 'f:spec', 'f:containers', 'k:{"name":"c"}', 'f:image')),
      '.spec.template.spec.containers[name="c"].image',
    );
    assert.equal(formatPath(path('f:metadata', 'f:finalizers', 'v:"x"')), '.metadata.finalizers[="x"]');
  });
});

describe('merge of an applied configuration', () => {
  const cases: { name: string; live: unknown; config: unknown; meta?: typeof deployMeta; want: unknown }[] = [
    { name: 'maps merge', live: { a: 1, m: { x: 1 } }, config: { m: { y: 2 } }, want: { a: 1, m: { x: 1, y: 2 } } },
    {
      name: 'keyed lists merge by key, new items last',
      live: {
        spec: {
          containers: [
            { name: 'a', image: '1' },
            { name: 'b', image: '1' },
          ],
        },
      },
      config: {
        spec: {
          containers: [
            { name: 'b', image: '2' },
            { name: 'c', image: '3' },
          ],
        },
      },
      meta: podPatchMeta,
      want: {
        spec: {
          containers: [
            { name: 'a', image: '1' },
            { name: 'b', image: '2' },
            { name: 'c', image: '3' },
          ],
        },
      },
    },
    { name: 'lists without merge metadata are replaced', live: { args: ['a', 'b'] }, config: { args: ['c'] }, want: { args: ['c'] } },
    { name: 'null removes', live: { a: 1, b: 2 }, config: { a: null }, want: { b: 2 } },
  ];
  for (const c of cases) {
    it(c.name, () => assert.deepEqual(mergeApplied(c.live, c.config, c.meta), c.want));
  }

  it('removes a keyed item, a field, a set value', () => {
    const obj = { metadata: { finalizers: ['x', 'y'] }, spec: { containers: [{ name: 'a' }, { name: 'b', image: 'i' }] } };
    removeField(obj, path('f:spec', 'f:containers', 'k:{"name":"a"}'), podPatchMeta);
    removeField(obj, path('f:spec', 'f:containers', 'k:{"name":"b"}', 'f:image'), podPatchMeta);
    removeField(obj, path('f:metadata', 'f:finalizers', 'v:"x"'), podPatchMeta);
    assert.deepEqual(obj, { metadata: { finalizers: ['y'] }, spec: { containers: [{ name: 'b' }] } });
  });
});

describe('ownership', () => {
  const alice: Writer = { manager: 'alice', operation: 'Apply' };
  const scaler: Writer = { manager: 'scaler', operation: 'Update' };
  const values = (o: Record<string, unknown>) => fieldValues(o, deployMeta);
  const owned = (entries: ManagedFieldsEntry[], manager: string) => entries.find((e) => e.manager === manager)?.fieldsV1;
  const applied = (o: Record<string, unknown>) => new Set(values(o).keys());

  const v1 = deploy({ replicas: 1 }, { app: 'web' });
  const created = trackWrite({ entries: [], writer: alice, apiVersion: 'apps/v1', before: new Map(), after: values(v1), now: NOW, applied: applied(v1) });
  const v2 = deploy({ replicas: 3 }, { app: 'web' });
  const scaled = trackWrite({ entries: created, writer: scaler, apiVersion: 'apps/v1', before: values(v1), after: values(v2), now: NOW });

  it('a create by apply: the applier owns what it applied, with the time of the write', () => {
    assert.equal(created.length, 1);
    assert.equal(created[0]!.time, '2026-01-01T00:00:00Z');
    assert.deepEqual(created[0]!.fieldsV1, { 'f:metadata': { 'f:labels': { '.': {}, 'f:app': {} } }, 'f:spec': { 'f:replicas': {} } });
  });

  it('an update takes the fields it changes from their owners, without conflict', () => {
    assert.deepEqual(owned(scaled, 'scaler'), { 'f:spec': { 'f:replicas': {} } });
    assert.deepEqual(owned(scaled, 'alice'), { 'f:metadata': { 'f:labels': { '.': {}, 'f:app': {} } } });
  });

  it('an apply changing a field another manager owns conflicts; one applying the same value does not', () => {
    const v3 = deploy({ replicas: 5 }, { app: 'web' });
    const conflicts = findConflicts(scaled, alice, applied(v3), values(v2), values(v3));
    assert.equal(conflictMessage(conflicts), 'Apply failed with 1 conflict: conflict with "scaler" using apps/v1: .spec.replicas');
    assert.deepEqual(findConflicts(scaled, alice, applied(v2), values(v2), values(v2)), []);
  });

  it('a forced apply takes the field; a manager left with nothing leaves the list', () => {
    const v3 = deploy({ replicas: 5 }, { app: 'web' });
    const forced = trackWrite({ entries: scaled, writer: alice, apiVersion: 'apps/v1', before: values(v2), after: values(v3), now: NOW, applied: applied(v3) });
    assert.deepEqual(
      forced.map((e) => e.manager),
      ['alice'],
    );
  });

  it('a write that changes nothing leaves the entries as they were (same time)', () => {
    const later = new Date('2026-02-01T00:00:00Z');
    const same = trackWrite({ entries: scaled, writer: scaler, apiVersion: 'apps/v1', before: values(v2), after: values(v2), now: later });
    assert.deepEqual(same, scaled);
  });

  it('several conflicts are listed by manager', () => {
    const entries: ManagedFieldsEntry[] = [
      { manager: 'a', operation: 'Update', apiVersion: 'v1', fieldsType: 'FieldsV1', fieldsV1: { 'f:spec': { 'f:x': {}, 'f:y': {} } } },
    ];
    const conflicts = findConflicts(
      entries,
      alice,
      new Set([path('f:spec', 'f:x'), path('f:spec', 'f:y')]),
      values({ spec: { x: 1, y: 1 } }),
      values({ spec: { x: 2, y: 2 } }),
    );
    assert.equal(conflictMessage(conflicts), 'Apply failed with 2 conflicts: conflicts with "a" using v1:\n- .spec.x\n- .spec.y');
  });
});
