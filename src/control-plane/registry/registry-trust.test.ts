// Unit tests of which names the master's engine trusts its registry by, and writing them into a temp certs dir.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { registryNamesForEngine, trustRegistryForEngine } from './registry-trust.js';

const CA = '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n';

describe('registryNamesForEngine', () => {
  const serverUrl = async (_address: string, port: number) => `https://192.0.2.10:${port}`;
  it('a wildcard master: loopback and the address workers reach it at', async () => {
    assert.deepEqual(await registryNamesForEngine({ address: '0.0.0.0', port: 5000, advertised: '127.0.0.1:5000', serverUrl }), [
      '127.0.0.1:5000',
      '192.0.2.10:5000',
    ]);
  });
  it('a master on one address: that address only', async () => {
    const at = async (address: string, port: number) => `https://${address}:${port}`;
    assert.deepEqual(await registryNamesForEngine({ address: '10.123.4.1', port: 5001, advertised: '10.123.4.1:5001', serverUrl: at }), ['10.123.4.1:5001']);
  });
  it('brackets an IPv6 host', async () => {
    const v6 = async (_a: string, port: number) => `https://[fd00::5]:${port}`;
    assert.deepEqual(await registryNamesForEngine({ address: '::', port: 5000, advertised: '127.0.0.1:5000', serverUrl: v6 }), [
      '127.0.0.1:5000',
      '[fd00::5]:5000',
    ]);
  });
});

describe('trustRegistryForEngine', () => {
  const root = mkdtempSync(join(tmpdir(), 'minik8s-certsd-'));
  after(() => rmSync(root, { recursive: true, force: true }));
  it('writes every name and removes them again', () => {
    const t = trustRegistryForEngine({ registries: ['127.0.0.1:5000', '192.0.2.10:5000'], caPem: CA, certsDir: root });
    assert.deepEqual(t.paths, [join(root, '127.0.0.1:5000', 'ca.crt'), join(root, '192.0.2.10:5000', 'ca.crt')]);
    for (const p of t.paths) assert.equal(readFileSync(p, 'utf8'), CA);
    t.remove();
    for (const p of t.paths) assert.equal(existsSync(p), false);
  });
  it('says why it could not write, and goes on', () => {
    const lines: string[] = [];
    const t = trustRegistryForEngine({ registries: ['bad name', '127.0.0.1:5002'], caPem: CA, certsDir: root, log: (m) => lines.push(m) });
    assert.equal(t.paths.length, 1);
    assert.match(lines[0]!, /^warning: cannot make the Docker engine trust the registry at bad name/);
    t.remove();
  });
});
