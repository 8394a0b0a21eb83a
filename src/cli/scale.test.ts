// scale's argument handling: counts, which resources can be scaled, and kubectl's names in messages.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { replicaSetKind } from '../core/api/replicaset.js';
import { CliError } from './cli-error.js';
import { parseCount, qualifiedName, scaleTargets } from './scale.js';

describe('scale arguments', () => {
  it('counts are whole numbers of at least 0', () => {
    assert.equal(parseCount('0', 'replicas'), 0);
    assert.equal(parseCount('12', 'replicas'), 12);
    assert.equal(parseCount(undefined, 'replicas'), undefined);
    for (const bad of ['-1', '1.5', 'x', '']) {
      assert.throws(
        () => parseCount(bad, 'replicas'),
        (e: unknown) => e instanceof CliError && /--replicas=COUNT/.test(e.message),
        bad,
      );
    }
    assert.throws(() => parseCount('x', 'current-replicas'), /--current-replicas/);
  });

  it('rs/NAME, replicaset NAME and replicasets.apps NAME all name ReplicaSets', () => {
    for (const args of [['rs/web'], ['replicaset', 'web'], ['replicasets.apps', 'web']]) {
      assert.deepEqual(scaleTargets(args), [{ def: replicaSetKind, name: 'web' }], args.join(' '));
    }
  });

  it('refuses kinds without a scale subresource and a type without a name', () => {
    assert.throws(() => scaleTargets(['pod/web']), /pods cannot be scaled/);
    assert.throws(() => scaleTargets(['rs']), /no name was specified/);
  });

  it('prints names as kubectl: replicaset.apps/web', () => {
    assert.equal(qualifiedName(replicaSetKind, 'web'), 'replicaset.apps/web');
  });
});
