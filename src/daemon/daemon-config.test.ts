// Unit tests for daemon flag validation and the CLI server URL the master writes.
import { resolve } from 'node:path';
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { joinTokenOf, toDaemonConfig, UsageError, type RawDaemonFlags } from './daemon-config.js';
import { localServerUrl } from '../control-plane/master/local-client-config.js';

const base: RawDaemonFlags = {
  positionals: [],
  role: 'master',
  dataDir: '/var/lib/minik8s',
  address: '0.0.0.0',
  port: '6443',
  etcdPort: '2379',
  writeConfig: true,
};

describe('toDaemonConfig', () => {
  it('accepts the defaults', () => {
    const c = toDaemonConfig(base);
    assert.deepEqual(c.roles, ['master']);
    assert.deepEqual(c.master, {
      dataDir: '/var/lib/minik8s',
      address: '0.0.0.0',
      port: 6443,
      etcdEndpoints: undefined,
      etcdPort: 2379,
      secretsEncryption: true,
      writeClientConfig: true,
      insecureHttp: false,
      tlsSans: [],
      registryPort: 5000,
      clusterCIDR: '10.244.0.0/16',
      schedulerPolicy: 'least-allocated',
      disableScheduler: false,
      nodeMonitorGracePeriodSeconds: 40,
      defaultTolerationSeconds: 300,
      hpaSyncPeriodSeconds: 15,
      serviceCIDR: '10.96.0.0/16',
      nodePortRange: { min: 30000, max: 32767 },
      activatorPort: 8090,
      podRoutes: true,
      maxRequestsInFlight: 400,
      maxMutatingRequestsInFlight: 200,
    });
  });

  it('reads the API server limits: connections, and requests in flight (0: no limit)', () => {
    const c = toDaemonConfig({ ...base, maxConnections: '5000', maxRequestsInflight: '0', maxMutatingRequestsInflight: '10' });
    assert.equal(c.master.maxConnections, 5000);
    assert.equal(c.master.maxRequestsInFlight, 0);
    assert.equal(c.master.maxMutatingRequestsInFlight, 10);
    assert.throws(() => toDaemonConfig({ ...base, maxConnections: '0' }), /--max-connections must be a whole number of at least 1, not "0"/);
    assert.throws(() => toDaemonConfig({ ...base, maxRequestsInflight: 'many' }), /--max-requests-inflight must be a whole number from 0 up, not "many"/);
  });

  it('serves HTTPS unless --insecure-http, with --tls-san extras repeated or comma-separated', () => {
    const c = toDaemonConfig({ ...base, insecureHttp: true, tlsSan: ['api.example, 10.0.0.9', 'other'] });
    assert.equal(c.master.insecureHttp, true);
    assert.deepEqual(c.master.tlsSans, ['api.example', '10.0.0.9', 'other']);
  });

  it('reads the activator flags; a master that is also a worker keeps no pod routes of its own', () => {
    const c = toDaemonConfig({ ...base, activatorPort: '18090', activatorAddress: '127.0.0.1' });
    assert.equal(c.master.activatorPort, 18090);
    assert.equal(c.master.activatorAddress, '127.0.0.1');
    assert.equal(c.master.podRoutes, true);
    assert.equal(toDaemonConfig({ ...base, role: 'master,worker' }).master.podRoutes, false);
    assert.throws(() => toDaemonConfig({ ...base, activatorPort: '0' }), /--activator-port must be a port number from 1 to 65535, not "0"/);
    assert.throws(() => toDaemonConfig({ ...base, activatorAddress: 'here' }), /--activator-address must be an IP address/);
  });

  it('reads the audit log flags as kube-apiserver spells them; no audit log without a path', () => {
    assert.equal(toDaemonConfig(base).master.auditLog, undefined);
    assert.deepEqual(toDaemonConfig({ ...base, auditLogPath: 'audit.log' }).master.auditLog, { path: resolve('audit.log'), maxSizeMB: 100, maxBackups: 10 });
    assert.deepEqual(toDaemonConfig({ ...base, auditLogPath: '-', auditLogMaxSize: '0', auditLogMaxBackup: '3' }).master.auditLog, {
      path: '-',
      maxSizeMB: 0,
      maxBackups: 3,
    });
    assert.throws(
      () => toDaemonConfig({ ...base, auditLogPath: 'a', auditLogMaxSize: '1M' }),
      /--audit-log-maxsize must be a whole number from 0 up, not "1M"/,
    );
    assert.throws(() => toDaemonConfig({ ...base, auditLogPath: ' ' }), /--audit-log-path must name a file, or - for stdout/);
  });

  it('reads --secrets-encryption (on by default) and the external etcd TLS files', () => {
    assert.equal(toDaemonConfig({ ...base, secretsEncryption: false }).master.secretsEncryption, false);
    const ext = { ...base, etcdEndpoints: 'https://10.0.0.9:2379' };
    assert.deepEqual(toDaemonConfig({ ...ext, etcdCAFile: 'ca.crt', etcdCertFile: 'c.crt', etcdKeyFile: 'c.key' }).master.etcdTLS, {
      caFile: resolve('ca.crt'),
      certFile: resolve('c.crt'),
      keyFile: resolve('c.key'),
    });
    assert.throws(() => toDaemonConfig({ ...ext, etcdCertFile: 'c.crt' }), /--etcd-certfile and --etcd-keyfile go together/);
    assert.throws(() => toDaemonConfig({ ...base, etcdCAFile: 'ca.crt' }), /are for an external etcd \(--etcd-endpoints\)/);
  });

  it('reads the service range and node port range', () => {
    const c = toDaemonConfig({ ...base, serviceCIDR: '10.100.0.0/24', serviceNodePortRange: '31000-31010' });
    assert.equal(c.master.serviceCIDR, '10.100.0.0/24');
    assert.deepEqual(c.master.nodePortRange, { min: 31000, max: 31010 });
  });

  it('reads the node lifecycle flags, in seconds with or without an s', () => {
    const c = toDaemonConfig({ ...base, nodeMonitorGracePeriod: '3', defaultTolerationSeconds: '0' });
    assert.equal(c.master.nodeMonitorGracePeriodSeconds, 3);
    assert.equal(c.master.defaultTolerationSeconds, 0);
    assert.equal(toDaemonConfig({ ...base, nodeMonitorGracePeriod: '50s', defaultTolerationSeconds: '60s' }).master.nodeMonitorGracePeriodSeconds, 50);
    assert.equal(toDaemonConfig({ ...base, hpaSyncPeriod: '2' }).master.hpaSyncPeriodSeconds, 2);
    assert.equal(toDaemonConfig(base).master.leaderElection, undefined, "Kubernetes' timings when no flag is given");
    assert.deepEqual(toDaemonConfig({ ...base, leaderElectLeaseDuration: '30s', leaderElectRenewDeadline: '20' }).master.leaderElection, {
      leaseDurationMs: 30_000,
      renewDeadlineMs: 20_000,
      retryPeriodMs: 2000,
    });
    assert.throws(
      () => toDaemonConfig({ ...base, leaderElectRenewDeadline: '15' }),
      /--leader-elect-lease-duration \(15s\) must be greater than --leader-elect-renew-deadline \(15s\)/,
    );
    assert.throws(
      () => toDaemonConfig({ ...base, leaderElectRetryPeriod: '10' }),
      /--leader-elect-renew-deadline \(10s\) must be greater than --leader-elect-retry-period \(10s\)/,
    );
    assert.throws(() => toDaemonConfig({ ...base, hpaSyncPeriod: '0' }), /--hpa-sync-period must be a whole number of seconds of at least 1/);
  });

  it('takes the role from a word or the flag, in any combination of master and worker', () => {
    assert.deepEqual(toDaemonConfig({ ...base, role: undefined, positionals: ['master'] }).roles, ['master']);
    assert.deepEqual(toDaemonConfig({ ...base, role: 'worker,master' }).roles, ['master', 'worker']);
    assert.deepEqual(toDaemonConfig({ ...base, positionals: ['master'] }).roles, ['master']);
  });

  it('reads the scheduler policy', () => {
    for (const policy of ['least-allocated', 'fewest-pods', 'balanced', 'round-robin']) {
      assert.equal(toDaemonConfig({ ...base, schedulerPolicy: policy }).master.schedulerPolicy, policy);
    }
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
    [
      'a zero grace period',
      { nodeMonitorGracePeriod: '0' },
      /--node-monitor-grace-period must be a whole number of seconds of at least 1, such as 40 or 40s, not "0"/,
    ],
    ['a grace period in minutes', { nodeMonitorGracePeriod: '1m' }, /--node-monitor-grace-period must be a whole number of seconds/],
    [
      'negative toleration seconds',
      { defaultTolerationSeconds: '-5' },
      /--default-toleration-seconds must be a whole number of seconds, such as 40 or 40s, not "-5"/,
    ],
    [
      'an unknown scheduler policy',
      { schedulerPolicy: 'random' },
      /--scheduler-policy must be one of least-allocated, fewest-pods, balanced, round-robin, not "random"/,
    ],
  ] as const) {
    it(`rejects ${name}`, () => {
      assert.throws(
        () => toDaemonConfig({ ...base, ...flags } as RawDaemonFlags),
        (err: Error) => err instanceof UsageError && message.test(err.message),
      );
    });
  }
});

describe('toDaemonConfig for workers', () => {
  const worker: RawDaemonFlags = { ...base, role: 'worker', server: 'http://10.0.0.1:6443', token: 'abcdef.0123456789abcdef' };

  it("reads the worker flags, with Kubernetes' defaults", () => {
    const c = toDaemonConfig({
      ...worker,
      name: 'Node-1',
      nodeIP: '10.0.0.5',
      labels: 'disk=ssd, zone=a',
      taints: 'gpu=yes:NoSchedule,spot:PreferNoSchedule',
      dockerHost: 'unix:///run/d.sock',
      kubeletPort: '11250',
      bridge: 'mk8s1',
    });
    assert.deepEqual(c.roles, ['worker']);
    assert.deepEqual(c.worker, {
      server: 'http://10.0.0.1:6443',
      joinToken: 'abcdef.0123456789abcdef',
      name: 'node-1',
      nodeIP: '10.0.0.5',
      labels: { disk: 'ssd', zone: 'a' },
      taints: [
        { key: 'gpu', value: 'yes', effect: 'NoSchedule' },
        { key: 'spot', effect: 'PreferNoSchedule' },
      ],
      dockerHost: 'unix:///run/d.sock',
      dataDir: '/var/lib/minik8s',
      kubeletAddress: '0.0.0.0',
      kubeletPort: 11250,
      bridgeName: 'mk8s1',
      provider: 'docker',
      overlay: 'vxlan',
      proxy: 'iptables',
      dns: 'on',
      clusterDNS: '10.96.0.10',
    });
    const d = toDaemonConfig(worker);
    assert.equal(d.worker.kubeletPort, 10250);
    assert.equal(d.worker.bridgeName, 'minik8s0');
    assert.equal(toDaemonConfig({ ...worker, overlay: 'none' }).worker.overlay, 'none');
    assert.equal(toDaemonConfig({ ...worker, proxy: 'none' }).worker.proxy, 'none');
    assert.equal(toDaemonConfig({ ...worker, proxy: 'iptables' }).worker.proxy, 'iptables');
    assert.equal(toDaemonConfig({ ...worker, dns: 'off' }).worker.dns, 'off');
    assert.equal(toDaemonConfig({ ...worker, clusterDNS: '10.100.0.10' }).worker.clusterDNS, '10.100.0.10');
    assert.deepEqual(d.worker.labels, {});
  });

  it('takes the join token from --token, else --token-file, else MINIK8S_JOIN_TOKEN', () => {
    const dir = mkdtempSync(join(tmpdir(), 'minik8s-token-file-'));
    try {
      const file = join(dir, 'join-token');
      writeFileSync(file, 'fromfile.0123456789abcdef\n', { mode: 0o600 });
      assert.equal(joinTokenOf({ token: 'flag', tokenFile: file, tokenEnv: 'env' }), 'flag');
      assert.equal(joinTokenOf({ tokenFile: file, tokenEnv: 'env' }), 'fromfile.0123456789abcdef');
      assert.equal(joinTokenOf({ tokenEnv: ' env.0123456789abcdef\n' }), 'env.0123456789abcdef');
      assert.equal(joinTokenOf({}), undefined);
      writeFileSync(file, '\n');
      assert.throws(() => joinTokenOf({ tokenFile: file }), /--token-file: .* is empty/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('lets a worker that joined before start again without a join token, as the README promises', () => {
    const c = toDaemonConfig({ ...worker, token: undefined, storedCredential: true });
    assert.deepEqual(c.roles, ['worker']);
    assert.equal(c.worker.joinToken, undefined);
    assert.throws(() => toDaemonConfig({ ...worker, token: undefined, storedCredential: false }), /needs a join token for its first start/);
  });

  it('lets master,worker go without --server and --token', () => {
    const c = toDaemonConfig({ ...base, role: 'master,worker' });
    assert.deepEqual(c.roles, ['master', 'worker']);
    assert.equal(c.worker.server, undefined);
  });

  it("runs fake nodes: --provider=fake for one, --fake-nodes N for many, with kwok's default capacity or the one given", () => {
    const one = toDaemonConfig({ ...worker, name: 'n1', provider: 'fake' });
    assert.equal(one.worker.provider, 'fake');
    assert.equal(one.worker.name, 'n1');
    assert.deepEqual(one.worker.fake, { capacity: { cpuCores: 32, memoryBytes: 256 * 1024 ** 3, pods: 110 }, heartbeatSeconds: 10 });
    const many = toDaemonConfig({ ...worker, fakeNodes: '1000', fakeNodeCapacity: 'cpu=500m, pods=20' });
    assert.equal(many.worker.provider, 'fake', '--fake-nodes implies the fake provider');
    assert.equal(many.worker.name, 'fake-node', "the default prefix of the fake nodes' names");
    assert.deepEqual(many.worker.fake, { nodes: 1000, capacity: { cpuCores: 0.5, memoryBytes: 256 * 1024 ** 3, pods: 20 }, heartbeatSeconds: 10 });
    assert.equal(toDaemonConfig({ ...worker, fakeNodes: '3', fakeNodeHeartbeat: '20' }).worker.fake?.heartbeatSeconds, 20);
    assert.equal(
      toDaemonConfig({ ...worker, fakeNodes: '3', provider: 'fake', name: 'kwok', fakeNodeCapacity: 'memory=4Gi' }).worker.fake?.capacity.memoryBytes,
      4 * 1024 ** 3,
    );
    assert.equal(toDaemonConfig({ ...worker, fakeNodes: '3', name: 'kwok' }).worker.name, 'kwok');
    assert.equal(toDaemonConfig({ ...base, role: 'master,worker', fakeNodes: '2' }).worker.fake?.nodes, 2);
    assert.equal(toDaemonConfig({ ...worker, provider: 'docker' }).worker.fake, undefined);
    assert.equal(many.worker.overlay, 'none', 'fake pods have no network for an overlay to join');
    assert.equal(one.worker.overlay, 'none');
    assert.equal(many.worker.proxy, 'none', 'fake pods have no addresses for service rules to reach');
    assert.equal(many.worker.dns, 'off', 'fake pods resolve nothing');
  });

  for (const [name, flags, message] of [
    ['a worker without a server', { server: undefined }, /needs --server URL/],
    ['an unknown provider', { provider: 'podman' }, /--provider must be docker or fake, not "podman"/],
    ['fake nodes on Docker', { provider: 'docker', fakeNodes: '3' }, /--fake-nodes hosts fake nodes: it goes with --provider=fake/],
    ['no fake nodes', { fakeNodes: '0' }, /--fake-nodes must be a number of nodes from 1 to 65536, not "0"/],
    ['a fraction of a fake node', { fakeNodes: '2.5' }, /--fake-nodes must be a number/],
    ['too many fake nodes', { fakeNodes: '70000' }, /--fake-nodes must be a number/],
    ['a fake capacity without fake nodes', { fakeNodeCapacity: 'cpu=4' }, /--fake-node-capacity is for fake nodes/],
    ['an unknown fake capacity', { fakeNodes: '2', fakeNodeCapacity: 'gpu=1' }, /--fake-node-capacity: "gpu=1" is not a capacity/],
    ['a fake capacity that is no quantity', { fakeNodes: '2', fakeNodeCapacity: 'cpu=lots' }, /"cpu=lots" is not a capacity/],
    ['a fractional pod capacity', { fakeNodes: '2', fakeNodeCapacity: 'pods=1.5' }, /"pods=1.5" is not a capacity/],
    ['fake nodes with the overlay', { fakeNodes: '2', overlay: 'vxlan' }, /--overlay=vxlan needs real pods/],
    ['a fake heartbeat without fake nodes', { fakeNodeHeartbeat: '20' }, /--fake-node-heartbeat is for fake nodes/],
    ['a fake heartbeat of no seconds', { fakeNodes: '2', fakeNodeHeartbeat: '0' }, /--fake-node-heartbeat must be a number of seconds from 1 to 3600, not "0"/],
    ['a fake heartbeat with a unit', { fakeNodes: '2', fakeNodeHeartbeat: '10s' }, /--fake-node-heartbeat must be a number of seconds/],
    ['a fake node prefix too long', { fakeNodes: '100', name: 'a'.repeat(252) }, /too long to prefix/],
    [
      'a worker without a token',
      { token: undefined },
      /needs a join token for its first start: --token-file FILE or the MINIK8S_JOIN_TOKEN environment variable/,
    ],
    ['a token file that is not there', { token: undefined, tokenFile: '/nonexistent/join-token' }, /--token-file: cannot read \/nonexistent\/join-token/],
    ['a server that is no URL', { server: 'master:6443' }, /is not a URL/],
    ['a master given a server', { role: 'master,worker' }, /for --role=worker alone/],
    ['a label without a value', { labels: 'disk' }, /--labels: "disk" is not a label/],
    ['a label with a bad key', { labels: '-x=1' }, /is not a label/],
    ['a taint without an effect', { taints: 'gpu=yes' }, /--taints: "gpu=yes" is not a taint/],
    ['a taint with an unknown effect', { taints: 'gpu=yes:Never' }, /Effect one of NoSchedule, PreferNoSchedule, NoExecute/],
    ['a node IP that is a name', { nodeIP: 'node1' }, /--node-ip must be an IPv4 address/],
    ['a bad node name', { name: 'under_score' }, /is not a valid node name/],
    ['a bridge name too long', { bridge: 'a-very-long-bridge-name' }, /at most 15 characters/],
    ['an unknown overlay', { overlay: 'ovs' }, /--overlay must be vxlan or none, not "ovs"/],
    ['an unknown proxy mode', { proxy: 'ipvs' }, /--proxy must be iptables or none, not "ipvs"/],
    ['fake nodes with the proxy', { fakeNodes: '2', proxy: 'iptables' }, /--proxy=iptables needs real pods/],
    ['an unknown DNS setting', { dns: 'yes' }, /--dns must be on or off, not "yes"/],
    ['fake nodes with DNS', { provider: 'fake', dns: 'on' }, /--dns=on needs real pods/],
    ['a cluster DNS address that is a name', { clusterDNS: 'kube-dns' }, /--cluster-dns must be an IPv4 address/],
    ['a docker host of no known kind', { dockerHost: 'ssh://x' }, /--docker-host "ssh:\/\/x" must look like/],
    [
      'a cluster CIDR too small',
      { role: 'master', server: undefined, token: undefined, clusterCIDR: '10.244.0.0/24' },
      /--cluster-cidr must be an IPv4 range from \/8 to \/23/,
    ],
    [
      'a service CIDR that is not a range',
      { role: 'master', server: undefined, token: undefined, serviceCIDR: '10.96.0.1' },
      /--service-cidr must be an IPv4 range from \/8 to \/28/,
    ],
    ['a service CIDR too small', { role: 'master', server: undefined, token: undefined, serviceCIDR: '10.96.0.0/29' }, /--service-cidr must be an IPv4 range/],
    [
      'a service CIDR overlapping the pods',
      { role: 'master', server: undefined, token: undefined, serviceCIDR: '10.244.0.0/20' },
      /overlaps --cluster-cidr 10.244.0.0\/16/,
    ],
    [
      'a reversed node port range',
      { role: 'master', server: undefined, token: undefined, serviceNodePortRange: '32767-30000' },
      /--service-node-port-range must be MIN-MAX/,
    ],
    [
      'a node port range past 65535',
      { role: 'master', server: undefined, token: undefined, serviceNodePortRange: '30000-70000' },
      /--service-node-port-range must be MIN-MAX/,
    ],
    ['a cluster CIDR with host bits', { role: 'master', server: undefined, token: undefined, clusterCIDR: '10.244.1.0/16' }, /has host bits set/],
  ] as const) {
    it(`rejects ${name}`, () => {
      assert.throws(
        () => toDaemonConfig({ ...worker, ...flags } as RawDaemonFlags),
        (err: Error) => err instanceof UsageError && message.test(err.message),
      );
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
