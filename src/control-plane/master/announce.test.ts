// The ready banner, the join command, and which address a wildcard-listening master advertises.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { NetworkInterfaceInfo, networkInterfaces } from 'node:os';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { advertisedServerUrl, interfaceAddress, joinCommand, readyBanner, writeJoinCommandFile } from './announce.js';

type Interfaces = ReturnType<typeof networkInterfaces>;
const ipv4 = (address: string, internal = false): NetworkInterfaceInfo => ({
  address,
  family: 'IPv4',
  internal,
  netmask: '255.255.255.0',
  mac: '00:00:00:00:00:00',
  cidr: `${address}/24`,
});

describe('announce', () => {
  it('prints the banner on one line, with the registry when there is one', () => {
    const facts = { url: 'http://127.0.0.1:6443', dataDir: '/d', adminTokenPath: '/d/admin-token', joinTokenPath: '/d/join-token' };
    assert.equal(
      readyBanner({ ...facts, registry: '127.0.0.1:5000' }),
      'minik8s master ready: API http://127.0.0.1:6443, registry 127.0.0.1:5000, data /d, admin token in /d/admin-token, join token in /d/join-token',
    );
    assert.equal(readyBanner(facts), 'minik8s master ready: API http://127.0.0.1:6443, data /d, admin token in /d/admin-token, join token in /d/join-token');
    assert.equal(
      joinCommand('/d/join-command'),
      'join a worker: run the command in /d/join-command there (it holds the join token: copy it only to the worker)',
    );
  });

  it('writes the join command to a 0600 file, keeping the token out of the banner and of argv', () => {
    const dir = mkdtempSync(join(tmpdir(), 'minik8s-announce-'));
    try {
      const path = join(dir, 'join-command');
      writeFileSync(path, 'old\n', { mode: 0o644 });
      assert.equal(writeJoinCommandFile(dir, 'http://10.0.0.1:6443', 'abcdef.0123456789abcdef'), path);
      assert.equal(readFileSync(path, 'utf8'), 'MINIK8S_JOIN_TOKEN=abcdef.0123456789abcdef minik8s --role=worker --server http://10.0.0.1:6443\n');
      assert.equal(statSync(path).mode & 0o777, 0o600);
      assert.doesNotMatch(joinCommand(path), /abcdef/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('advertises the listen address itself unless it is a wildcard', async () => {
    assert.equal(await advertisedServerUrl('10.1.2.3', 6443), 'http://10.1.2.3:6443');
    assert.equal(await advertisedServerUrl('::1', 6443), 'http://[::1]:6443');
    assert.match(await advertisedServerUrl('0.0.0.0', 6443), /^http:\/\/\d+\.\d+\.\d+\.\d+:6443$/);
  });

  it('skips loopback and container bridges when picking an interface', () => {
    const interfaces: Interfaces = {
      lo: [ipv4('127.0.0.1', true)],
      docker0: [ipv4('172.17.0.1')],
      'br-1234': [ipv4('172.18.0.1')],
      eth0: [ipv4('192.168.1.20')],
    };
    assert.equal(interfaceAddress(interfaces), '192.168.1.20');
    assert.equal(interfaceAddress({ lo: [ipv4('127.0.0.1', true)] }), undefined);
  });
});
