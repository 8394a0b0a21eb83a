// Tests for turning typed resource names into kinds.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseResourceArgs, resolveKind } from './resolve-kind.js';

describe('resolveKind', () => {
  const cases: [string, string][] = [
    ['pods', 'Pod'],
    ['pod', 'Pod'],
    ['po', 'Pod'],
    ['Pod', 'Pod'],
    ['PODS', 'Pod'],
    ['deploy', 'Deployment'],
    ['deployments.apps', 'Deployment'],
    ['svc', 'Service'],
    ['ns', 'Namespace'],
    ['no', 'Node'],
    ['rs', 'ReplicaSet'],
    ['hpa', 'HorizontalPodAutoscaler'],
    ['ep', 'Endpoints'],
    ['ev', 'Event'],
  ];
  for (const [input, kind] of cases) it(`${input} -> ${kind}`, () => assert.equal(resolveKind(input).kind, kind));

  it("unknown types get kubectl's message", () => {
    assert.throws(() => resolveKind('foo'), { name: 'CliError', message: 'the server doesn\'t have a resource type "foo"' });
    assert.throws(() => resolveKind('pods.apps'), /resource type "pods.apps"/);
  });
});

describe('parseResourceArgs', () => {
  it('TYPE NAME...', () => {
    const { targets, typeNameForm } = parseResourceArgs(['po', 'a', 'b']);
    assert.equal(typeNameForm, false);
    assert.deepEqual(
      targets.map((t) => [t.def.kind, t.names]),
      [['Pod', ['a', 'b']]],
    );
  });

  it('TYPE,TYPE', () => {
    assert.deepEqual(
      parseResourceArgs(['pods,svc,po']).targets.map((t) => t.def.kind),
      ['Pod', 'Service'],
    );
  });

  it('TYPE/NAME...', () => {
    const { targets, typeNameForm } = parseResourceArgs(['pod/a', 'svc/b', 'po/c']);
    assert.equal(typeNameForm, true);
    assert.deepEqual(
      targets.map((t) => [t.def.kind, t.names]),
      [
        ['Pod', ['a', 'c']],
        ['Service', ['b']],
      ],
    );
  });

  it('rejects mixed and empty forms', () => {
    assert.throws(() => parseResourceArgs([]), /You must specify the type of resource/);
    assert.throws(() => parseResourceArgs(['pods', 'pod/a']), /no need to specify a resource type as a separate argument/);
    assert.throws(() => parseResourceArgs(['pod/']), /resource\/name form/);
  });
});
