// Label selectors (string and object forms) and field selectors, table-driven.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as v from 'valibot';
import {
  formatFieldSelector,
  formatSelector,
  labelSelectorSchema,
  matches,
  matchesFields,
  parseFieldSelector,
  parseSelector,
  selectorFromLabelSelector,
  selectorFromMap,
} from './selector.js';

describe('parseSelector', () => {
  it('parses every operator into one representation', () => {
    const s = parseSelector('app=web,tier!=db,env in (a,b),track notin (canary),!legacy,release,x==y,n>3,m<10');
    assert.deepEqual(s.requirements, [
      { key: 'app', operator: 'In', values: ['web'] },
      { key: 'tier', operator: 'NotIn', values: ['db'] },
      { key: 'env', operator: 'In', values: ['a', 'b'] },
      { key: 'track', operator: 'NotIn', values: ['canary'] },
      { key: 'legacy', operator: 'DoesNotExist', values: [] },
      { key: 'release', operator: 'Exists', values: [] },
      { key: 'x', operator: 'In', values: ['y'] },
      { key: 'n', operator: 'Gt', values: ['3'] },
      { key: 'm', operator: 'Lt', values: ['10'] },
    ]);
  });
  it('accepts spaces, prefixed keys, empty values and the empty selector', () => {
    assert.deepEqual(
      parseSelector(' app.kubernetes.io/name = web , env in ( a , b ) ').requirements.map((r) => r.values),
      [['web'], ['a', 'b']],
    );
    assert.deepEqual(parseSelector('a=').requirements, [{ key: 'a', operator: 'In', values: [''] }]);
    assert.deepEqual(parseSelector('').requirements, []);
  });
  const bad: [string, RegExp][] = [
    ['a in (', /expected a value/],
    ['a in ()', /expected a value/],
    ['a ~ b', /expected an operator/],
    ['a b', /expected an operator/],
    ['=b', /expected a label key/],
    ['a=b,', /expected a label key/],
    ['a in b', /expected '\('/],
    ['a in (b c)', /expected ',' or '\)'/],
    ['a=b c', /expected ',' or end of string/],
    ['bad key!=x', /expected an operator/],
    ['-a=b', /invalid label key/],
    ['a=b c d', /expected/],
    ['a=-x', /invalid label value/],
    ['n>x', /integer/],
    ['a,,b', /expected a label key/],
    ['!', /expected a label key/],
  ];
  for (const [input, want] of bad) it(`rejects ${JSON.stringify(input)}`, () => assert.throws(() => parseSelector(input), want));
});

describe('matches', () => {
  const labels = { app: 'web', tier: 'front', n: '5' };
  const cases: [string, boolean][] = [
    ['', true],
    ['app=web', true],
    ['app=db', false],
    ['app!=db', true],
    ['missing!=x', true],
    ['app in (db,web)', true],
    ['app notin (web)', false],
    ['missing notin (x)', true],
    ['tier', true],
    ['missing', false],
    ['!missing', true],
    ['!tier', false],
    ['app=web,tier=back', false],
    ['n>3', true],
    ['n<3', false],
    ['tier>3', false],
  ];
  for (const [sel, want] of cases) it(`${JSON.stringify(sel)} -> ${want}`, () => assert.equal(matches(parseSelector(sel), labels), want));
  it('treats missing labels as empty', () => assert.equal(matches(parseSelector('!a'), undefined), true));
});

describe('formatSelector', () => {
  for (const s of ['app=web', 'a!=b', 'env in (a,b)', 'env notin (a,b)', 'x', '!x', 'n>3', 'a=b,!c,d in (e,f)']) {
    it(`round-trips ${s}`, () => assert.equal(formatSelector(parseSelector(s)), s));
  }
});

describe('LabelSelector objects', () => {
  it('converts matchLabels (sorted) and matchExpressions', () => {
    const s = selectorFromLabelSelector({
      matchLabels: { tier: 'front', app: 'web' },
      matchExpressions: [
        { key: 'env', operator: 'NotIn', values: ['dev'] },
        { key: 'x', operator: 'Exists' },
      ],
    });
    assert.equal(formatSelector(s), 'app=web,tier=front,env!=dev,x');
    assert.equal(matches(s, { app: 'web', tier: 'front', x: '' }), true);
    assert.equal(matches(s, { app: 'web', tier: 'front', x: '', env: 'dev' }), false);
  });
  it('converts plain maps', () => assert.equal(formatSelector(selectorFromMap({ b: '2', a: '1' })), 'a=1,b=2'));
  const cases: [string, unknown, boolean][] = [
    ['matchLabels', { matchLabels: { app: 'web' } }, true],
    ['In with values', { matchExpressions: [{ key: 'a', operator: 'In', values: ['x'] }] }, true],
    ['In without values', { matchExpressions: [{ key: 'a', operator: 'In' }] }, false],
    ['NotIn with empty values', { matchExpressions: [{ key: 'a', operator: 'NotIn', values: [] }] }, false],
    ['Exists without values', { matchExpressions: [{ key: 'a', operator: 'Exists' }] }, true],
    ['Exists with values', { matchExpressions: [{ key: 'a', operator: 'Exists', values: ['x'] }] }, false],
    ['DoesNotExist with values', { matchExpressions: [{ key: 'a', operator: 'DoesNotExist', values: ['x'] }] }, false],
    ['unknown operator', { matchExpressions: [{ key: 'a', operator: 'Like', values: ['x'] }] }, false],
    ['bad key', { matchLabels: { 'bad key': 'x' } }, false],
    ['unknown field', { matchLabel: { a: 'b' } }, false],
  ];
  for (const [name, input, ok] of cases) it(`schema: ${name}`, () => assert.equal(v.safeParse(labelSelectorSchema, input).success, ok));
});

describe('field selectors', () => {
  it('parses =, == and !=', () => {
    assert.deepEqual(parseFieldSelector('spec.nodeName=n1,status.phase!=Running,metadata.name==x'), [
      { field: 'spec.nodeName', operator: '=', value: 'n1' },
      { field: 'status.phase', operator: '!=', value: 'Running' },
      { field: 'metadata.name', operator: '=', value: 'x' },
    ]);
    assert.deepEqual(parseFieldSelector(''), []);
    assert.deepEqual(parseFieldSelector('a=x\\,y\\=z'), [{ field: 'a', operator: '=', value: 'x,y=z' }]);
  });
  for (const bad of ['nonsense', 'a', '=x', 'a=b=c', 'a=x\\q', 'a b=c', 'a..b=c', 'a=b,,']) {
    it(`rejects ${JSON.stringify(bad)}`, () => assert.throws(() => parseFieldSelector(bad)));
  }
  const pod = { metadata: { name: 'p', namespace: 'default' }, spec: { nodeName: 'n1', unschedulable: false }, status: { phase: 'Running' } };
  const cases: [string, boolean][] = [
    ['spec.nodeName=n1', true],
    ['spec.nodeName=n2', false],
    ['spec.nodeName!=n2', true],
    ['status.phase=Running,spec.nodeName=n1', true],
    ['status.phase!=Running', false],
    ['spec.missing=', true],
    ['spec.missing!=', false],
    ['spec.unschedulable=false', true],
    ['metadata.name=p', true],
  ];
  for (const [sel, want] of cases) it(`${sel} -> ${want}`, () => assert.equal(matchesFields(parseFieldSelector(sel), pod), want));
  it('formats back with escapes', () => assert.equal(formatFieldSelector(parseFieldSelector('a=x\\,y,b!=z')), 'a=x\\,y,b!=z'));
});
