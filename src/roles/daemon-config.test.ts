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

describe('toDaemonConfig for workers', () => {
  const worker: RawDaemonFlags = { ...base, role: 'worker', server: 'http://10.0.0.1:6443', token: 'abcdef.0123456789abcdef' };

  it('reads the worker flags, with Kubernetes\' defaults', () => {
    const c = toDaemonConfig({
      ...worker, name: 'Node-1', nodeIP: '10.0.0.5', labels: 'disk=ssd, zone=a', taints: 'gpu=yes:NoSchedule,spot:PreferNoSchedule',
      dockerHost: 'unix:///run/d.sock', kubeletPort: '11250', bridge: 'mk8s1',
    });
    assert.deepEqual(c.roles, ['worker']);
    assert.deepEqual(c.worker, {
      server: 'http://10.0.0.1:6443', joinToken: 'abcdef.0123456789abcdef', name: 'node-1', nodeIP: '10.0.0.5',
      labels: { disk: 'ssd', zone: 'a' },
      taints: [{ key: 'gpu', value: 'yes', effect: 'NoSchedule' }, { key: 'spot', effect: 'PreferNoSchedule' }],
      dockerHost: 'unix:///run/d.sock', dataDir: '/var/lib/minik8s', kubeletAddress: '0.0.0.0', kubeletPort: 11250, bridgeName: 'mk8s1',
    });
    const d = toDaemonConfig(worker);
    assert.equal(d.worker.kubeletPort, 10250);
    assert.equal(d.worker.bridgeName, 'minik8s0');
    assert.deepEqual(d.worker.labels, {});
  });

  it('lets master,worker go without --server and --token', () => {
    const c = toDaemonConfig({ ...base, role: 'master,worker' });
    assert.deepEqual(c.roles, ['master', 'worker']);
    assert.equal(c.worker.server, undefined);
  });

  for (const [name, flags, message] of [
    ['a worker without a server', { server: undefined }, /needs --server URL/],
    ['a worker without a token', { token: undefined }, /needs --token JOIN_TOKEN/],
    ['a server that is no URL', { server: 'master:6443' }, /is not a URL/],
    ['a master given a server', { role: 'master,worker' }, /for --role=worker alone/],
    ['a label without a value', { labels: 'disk' }, /--labels: "disk" is not a label/],
    ['a label with a bad key', { labels: '-x=1' }, /is not a label/],
    ['a taint without an effect', { taints: 'gpu=yes' }, /--taints: "gpu=yes" is not a taint/],
    ['a taint with an unknown effect', { taints: 'gpu=yes:Never' }, /Effect one of NoSchedule, PreferNoSchedule, NoExecute/],
    ['a node IP that is a name', { nodeIP: 'node1' }, /--node-ip must be an IPv4 address/],
    ['a bad node name', { name: 'under_score' }, /is not a valid node name/],
    ['a bridge name too long', { bridge: 'a-very-long-bridge-name' }, /at most 15 characters/],
    ['a docker host of no known kind', { dockerHost: 'ssh://x' }, /--docker-host "ssh:\/\/x" must look like/],
    ['a cluster CIDR too small', { role: 'master', server: undefined, token: undefined, clusterCIDR: '10.244.0.0/24' }, /--cluster-cidr must be an IPv4 range from \/8 to \/23/],
    ['a cluster CIDR with host bits', { role: 'master', server: undefined, token: undefined, clusterCIDR: '10.244.1.0/16' }, /has host bits set/],
  ] as const) {
    it(`rejects ${name}`, () => {
      assert.throws(() => toDaemonConfig({ ...worker, ...flags } as RawDaemonFlags), (err: Error) => err instanceof UsageError && message.test(err.message));
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
