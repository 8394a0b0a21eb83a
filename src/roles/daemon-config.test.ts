// Unit tests for daemon flag validation and the CLI server URL the master writes.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { toDaemonConfig, UsageError, type RawDaemonFlags } from './daemon-config.js';
import { localServerUrl } from './master/local-client-config.js';

const base: RawDaemonFlags = {
  positionals: [], role: 'master', dataDir: '/var/lib/minik8s', address: '0.0.0.0', port: '6443', etcdPort: '2379', writeConfig: true,
};

describe('toDaemonConfig', () => {
  it('accepts the defaults', () => {
    const c = toDaemonConfig(base);
    assert.deepEqual(c.roles, ['master']);
    assert.deepEqual(c.master, {
      dataDir: '/var/lib/minik8s', address: '0.0.0.0', port: 6443, etcdEndpoints: undefined, etcdPort: 2379, writeClientConfig: true,
      registryPort: 5000, clusterCIDR: '10.244.0.0/16',
    });
  });

  it('takes the role from a word or the flag, in any combination of master and worker', () => {
    assert.deepEqual(toDaemonConfig({ ...base, role: undefined, positionals: ['master'] }).roles, ['master']);
    assert.deepEqual(toDaemonConfig({ ...base, role: 'worker,master' }).roles, ['master', 'worker']);
    assert.deepEqual(toDaemonConfig({ ...base, positionals: ['master'] }).roles, ['master']);
  });

  it('splits etcd endpoints and resolves the data dir', () => {
    const c = toDaemonConfig({ ...base, etcdEndpoints: 'http://10.0.0.1:2379, https://10.0.0.2:2379', dataDir: 'rel/dir' });
    assert.deepEqual(c.master.etcdEndpoints, ['http://10.0.0.1:2379', 'https://10.0.0.2:2379']);
    assert.equal(c.master.dataDir, `${process.cwd()}/rel/dir`);
  });

  for (const [name, flags, message] of [
    ['no role', { role: undefined }, /no role given/],
    ['two words', { positionals: ['master', 'extra'] }, /unexpected argument "extra"/],
    ['bad role', { role: 'master,cook' }, /unknown role "cook"/],
    ['word and flag disagree', { positionals: ['worker'] }, /disagree/],
    ['port zero', { port: '0' }, /--port must be a port number from 1 to 65535, not "0"/],
    ['port text', { port: '64k' }, /--port must be/],
    ['etcd port with no room for the peer port', { etcdPort: '65535' }, /--etcd-port must be a port number from 1 to 65534/],
    ['host name address', { address: 'localhost' }, /--address must be an IP address/],
    ['empty data dir', { dataDir: ' ' }, /--data-dir must not be empty/],
    ['endpoint without scheme', { etcdEndpoints: '127.0.0.1:2379' }, /is not a URL \(expected e.g. http/],
    ['endpoint with another scheme', { etcdEndpoints: 'ftp://10.0.0.1:2379' }, /must start with http/],
    ['no endpoints', { etcdEndpoints: ',' }, /needs at least one URL/],
  ] as const) {
    it(`rejects ${name}`, () => {
      assert.throws(() => toDaemonConfig({ ...base, ...flags } as RawDaemonFlags), (err: Error) => err instanceof UsageError && message.test(err.message));
    });
  }
});

describe('localServerUrl', () => {
  it('maps wildcard addresses to loopback and brackets IPv6', () => {
    assert.equal(localServerUrl('0.0.0.0', 6443), 'http://127.0.0.1:6443');
    assert.equal(localServerUrl('::', 6443), 'http://[::1]:6443');
    assert.equal(localServerUrl('10.1.2.3', 7000), 'http://10.1.2.3:7000');
    assert.equal(localServerUrl('fd00::1', 6443), 'http://[fd00::1]:6443');
  });
});
