// Unit tests of writing a registry's CA where Docker reads it (in a temp dir, never /etc/docker).
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DOCKER_CERTS_DIR, registryCertsDir, trustRegistryCa } from './docker-registry-trust.js';

const CA = '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n';
const OTHER = '-----BEGIN CERTIFICATE-----\nBBBB\n-----END CERTIFICATE-----\n';

describe('registryCertsDir', () => {
  it('is HOST:PORT under the certs dir, /etc/docker/certs.d by default', () => {
    assert.equal(registryCertsDir('10.0.0.1:5000'), `${DOCKER_CERTS_DIR}/10.0.0.1:5000`);
    assert.equal(registryCertsDir('[fd00::1]:5000', '/x'), '/x/[fd00::1]:5000');
  });
  it('refuses what is not HOST:PORT', () => {
    for (const bad of ['10.0.0.1', '../x:1', 'a/b:1', 'a b:1', '..:5000']) assert.throws(() => registryCertsDir(bad, '/x'), /not a registry HOST:PORT/);
  });
});

describe('trustRegistryCa', () => {
  const root = mkdtempSync(join(tmpdir(), 'minik8s-certsd-'));
  after(() => rmSync(root, { recursive: true, force: true }));

  it('writes ca.crt readable by the engine, and removes it with its directory', () => {
    const t = trustRegistryCa({ registry: '127.0.0.1:5001', caPem: CA, certsDir: root });
    assert.equal(t.path, join(root, '127.0.0.1:5001', 'ca.crt'));
    assert.equal(t.created, true);
    assert.equal(readFileSync(t.path, 'utf8'), CA);
    assert.equal(statSync(t.path).mode & 0o777, 0o644);
    t.remove();
    t.remove();
    assert.equal(existsSync(join(root, '127.0.0.1:5001')), false);
  });

  it('leaves a file that already held the same CA to whoever wrote it', () => {
    const first = trustRegistryCa({ registry: '10.1.1.1:5000', caPem: CA, certsDir: root });
    const second = trustRegistryCa({ registry: '10.1.1.1:5000', caPem: CA, certsDir: root });
    assert.equal(second.created, false);
    second.remove();
    assert.equal(readFileSync(first.path, 'utf8'), CA);
    first.remove();
    assert.equal(existsSync(first.path), false);
  });

  it('replaces another CA, and does not remove a file someone rewrote since', () => {
    const dir = join(root, '10.2.2.2:5000');
    const mine = trustRegistryCa({ registry: '10.2.2.2:5000', caPem: OTHER, certsDir: root });
    const t = trustRegistryCa({ registry: '10.2.2.2:5000', caPem: CA, certsDir: root });
    assert.equal(t.created, true);
    assert.equal(readFileSync(t.path, 'utf8'), CA);
    writeFileSync(join(dir, 'client.cert'), 'x');
    writeFileSync(t.path, OTHER);
    t.remove();
    assert.equal(readFileSync(t.path, 'utf8'), OTHER, 'not our CA any more: kept');
    mine.remove();
    assert.equal(existsSync(t.path), false);
    assert.equal(existsSync(join(dir, 'client.cert')), true, 'a directory with other files stays');
  });
});
