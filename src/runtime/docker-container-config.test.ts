// Table-driven tests of the pure Pod-to-Docker translation: image names, command lines, env, resources, mounts, ports, state, stats.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Container, Pod } from '../core/api/pod.js';
import { podNetworkConfig } from '../core/api/ipv4.js';
import {
  appContainerCreateOptions,
  appContainerName,
  checkBridgeName,
  commandLine,
  containerBinds,
  containerEnv,
  cpuCores,
  demuxDockerBuffer,
  dockerErrorMessage,
  dockerTime,
  exitReason,
  expandVars,
  groupRuntimePods,
  instancesToRemove,
  memoryWorkingSet,
  podAllocatedHostPorts,
  podDnsSettings,
  resolvConfText,
  portBindings,
  portConflictMessage,
  resolveImageName,
  resourceConfig,
  runState,
  sandboxContainerName,
  sandboxCreateOptions,
  volumeSources,
  type InspectedContainer,
} from './docker-container-config.js';
import { dockerConnectOptions, startFailureMessage } from './docker-provider.js';
import { LABELS } from './provider.js';

const REF = { uid: 'u-1', namespace: 'ns', name: 'web' };

function pod(spec: Partial<Pod['spec']> = {}, meta: Partial<Pod['metadata']> = {}): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'web', namespace: 'ns', uid: 'u-1', labels: { app: 'x' }, ...meta },
    spec: { containers: [], nodeName: 'n1', ...spec },
    status: {},
  } as unknown as Pod;
}

describe('resolveImageName', () => {
  const cases: [string, string][] = [
    ['busybox', 'R:5000/busybox:latest'],
    ['busybox:1.35', 'R:5000/busybox:1.35'],
    ['library/x', 'R:5000/library/x:latest'],
    ['minik8s/pause:1.0', 'R:5000/minik8s/pause:1.0'],
    ['127.0.0.1:5000/busybox:1.35', '127.0.0.1:5000/busybox:1.35'],
    ['localhost/x', 'localhost/x:latest'],
    ['registry.local/team/app', 'registry.local/team/app:latest'],
    ['host:5000/app', 'host:5000/app:latest'],
    ['app@sha256:abc', 'R:5000/app@sha256:abc'],
  ];
  for (const [input, want] of cases) it(`${input} -> ${want}`, () => assert.equal(resolveImageName(input, 'R:5000'), want));
});

describe('names', () => {
  it("follows the kubelet's k8s_ naming", () => {
    assert.equal(appContainerName(REF, 'app', 3), 'k8s_app_web_ns_u-1_3');
    assert.equal(sandboxContainerName(REF), 'k8s_POD_web_ns_u-1_0');
  });
  it("checks bridge names against Linux's 15 characters", () => {
    for (const ok of ['minik8s0', 'mk-1.a_b', 'a23456789012345']) assert.doesNotThrow(() => checkBridgeName(ok));
    for (const bad of ['', 'a234567890123456', 'has space', '-x']) assert.throws(() => checkBridgeName(bad), /invalid bridge name/);
  });
});

describe('podNetworkConfig', () => {
  const cases: [string, { subnet: string; gateway: string } | RegExp][] = [
    ['10.244.3.0/24', { subnet: '10.244.3.0/24', gateway: '10.244.3.1' }],
    ['10.244.3.77/24', { subnet: '10.244.3.0/24', gateway: '10.244.3.1' }],
    ['10.8.0.0/16', { subnet: '10.8.0.0/16', gateway: '10.8.0.1' }],
    ['10.0.0.0/31', /invalid podCIDR/],
    ['10.0.300.0/24', /invalid podCIDR/],
    ['fd00::/64', /invalid podCIDR/],
  ];
  for (const [cidr, want] of cases) {
    it(cidr, () => (want instanceof RegExp ? assert.throws(() => podNetworkConfig(cidr), want) : assert.deepEqual(podNetworkConfig(cidr), want)));
  }
});

describe('commandLine (Kubernetes command/args over the image)', () => {
  const image = { Entrypoint: ['/entry'], Cmd: ['default-arg'] };
  const cases: [string, Pick<Container, 'command' | 'args'>, typeof image | { Entrypoint: null; Cmd: string[] }, object][] = [
    ['neither: image defaults', {}, image, {}],
    ['command only: replaces entrypoint, drops image Cmd', { command: ['/bin/run'] }, image, { Entrypoint: ['/bin/run'], Cmd: [] }],
    ['command and args', { command: ['/bin/run'], args: ['a'] }, image, { Entrypoint: ['/bin/run'], Cmd: ['a'] }],
    ['args only: image entrypoint, args as Cmd', { args: ['x', 'y'] }, image, { Entrypoint: ['/entry'], Cmd: ['x', 'y'] }],
    ['args only, image without entrypoint', { args: ['echo', 'hi'] }, { Entrypoint: null, Cmd: ['sh'] }, { Entrypoint: [], Cmd: ['echo', 'hi'] }],
    ['empty lists count as unset', { command: [], args: [] }, image, {}],
  ];
  for (const [name, c, img, want] of cases) it(name, () => assert.deepEqual(commandLine(c, img), want));
});

describe('env', () => {
  it('expands $(VAR) references to earlier variables, keeps unknown ones, and $$ escapes', () => {
    const vars = new Map([['A', '1']]);
    assert.equal(expandVars('$(A)-$(B)-$$(A)', vars), '1-$(B)-$(A)');
  });
  it('resolves values, fieldRefs and resourceFieldRefs in order', () => {
    const c = {
      name: 'app',
      resources: { limits: { memory: '64Mi' } },
      env: [
        { name: 'A', value: 'x' },
        { name: 'B', value: '$(A)y' },
        { name: 'NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
        { name: 'NS', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
        { name: 'UID', valueFrom: { fieldRef: { fieldPath: 'metadata.uid' } } },
        { name: 'IP', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } },
        { name: 'NODE', valueFrom: { fieldRef: { fieldPath: 'spec.nodeName' } } },
        { name: 'LABEL', valueFrom: { fieldRef: { fieldPath: "metadata.labels['app']" } } },
        { name: 'MEM', valueFrom: { resourceFieldRef: { resource: 'limits.memory', divisor: '1Mi' } } },
      ],
    } as unknown as Container;
    assert.deepEqual(containerEnv(c, { pod: pod(), podIP: '10.0.0.5', nodeName: 'n1' }), [
      'A=x',
      'B=xy',
      'NAME=web',
      'NS=ns',
      'UID=u-1',
      'IP=10.0.0.5',
      'NODE=n1',
      'LABEL=x',
      'MEM=64',
    ]);
  });
  it('refuses sources the node cannot resolve, naming the variable', () => {
    const c = { name: 'app', env: [{ name: 'S', valueFrom: { secretKeyRef: { name: 's', key: 'k' } } }] } as unknown as Container;
    assert.throws(() => containerEnv(c, { pod: pod(), nodeName: 'n1' }), /env S: configMapKeyRef and secretKeyRef/);
    const d = { name: 'app', env: [{ name: 'F', valueFrom: { fieldRef: { fieldPath: 'status.hostIPs' } } }] } as unknown as Container;
    assert.throws(() => containerEnv(d, { pod: pod(), nodeName: 'n1' }), /unsupported fieldRef/);
  });
});

describe('resourceConfig', () => {
  const cases: [string, Container['resources'], object][] = [
    ['nothing', undefined, {}],
    ['memory limit, no swap on top', { limits: { memory: '64Mi' } }, { Memory: 67108864, MemorySwap: 67108864 }],
    ['cpu limit in nano cpus', { limits: { cpu: '250m' } }, { NanoCpus: 250_000_000 }],
    ['cpu request as shares', { requests: { cpu: '500m' } }, { CpuShares: 512 }],
    ['tiny cpu request: kernel minimum', { requests: { cpu: '1m' } }, { CpuShares: 2 }],
    [
      'both',
      { limits: { cpu: '2', memory: '1Gi' }, requests: { cpu: '1', memory: '512Mi' } },
      { Memory: 1073741824, MemorySwap: 1073741824, NanoCpus: 2e9, CpuShares: 1024 },
    ],
  ];
  for (const [name, r, want] of cases) it(name, () => assert.deepEqual(resourceConfig(r), want));
});

describe('volumes and mounts', () => {
  const p = pod({
    volumes: [
      { name: 'cache', emptyDir: {} },
      { name: 'host', hostPath: { path: '/srv/data' } },
      { name: 'cm', configMap: { name: 'x' } },
      { name: 'pvc', persistentVolumeClaim: { claimName: 'x' } },
    ] as Pod['spec']['volumes'],
  });
  const sources = volumeSources(p, '/var/lib/minik8s');
  it('places emptyDirs and the kubelet-written config volumes under ROOT/pods/<uid>/volumes and takes hostPaths as they are', () => {
    assert.deepEqual(sources, [
      { name: 'cache', hostPath: '/var/lib/minik8s/pods/u-1/volumes/cache' },
      { name: 'host', hostPath: '/srv/data' },
      { name: 'cm', hostPath: '/var/lib/minik8s/pods/u-1/volumes/cm', readOnly: true },
    ]);
  });
  const cases: [string, Container['volumeMounts'], string[] | RegExp][] = [
    ['plain', [{ name: 'cache', mountPath: '/cache' }], ['/var/lib/minik8s/pods/u-1/volumes/cache:/cache']],
    ['read-only', [{ name: 'host', mountPath: '/data', readOnly: true }], ['/srv/data:/data:ro']],
    ['subPath', [{ name: 'cache', mountPath: '/c', subPath: 'a/b' }], ['/var/lib/minik8s/pods/u-1/volumes/cache/a/b:/c']],
    ['a configMap volume, always read-only', [{ name: 'cm', mountPath: '/cm' }], ['/var/lib/minik8s/pods/u-1/volumes/cm:/cm:ro']],
    ['unsupported source', [{ name: 'pvc', mountPath: '/pvc' }], /volume "pvc" is not an emptyDir, hostPath, configMap/],
  ];
  for (const [name, mounts, want] of cases) {
    it(name, () =>
      want instanceof RegExp
        ? assert.throws(() => containerBinds({ volumeMounts: mounts }, sources), want)
        : assert.deepEqual(containerBinds({ volumeMounts: mounts }, sources), want),
    );
  }
});

describe('sandbox and app container options', () => {
  const containers = [
    {
      name: 'a',
      image: 'busybox',
      ports: [
        { containerPort: 80, hostPort: 8080, protocol: 'TCP' },
        { containerPort: 81, protocol: 'TCP' },
      ],
    },
    { name: 'b', image: 'busybox', ports: [{ containerPort: 53, hostPort: 5353, hostIP: '127.0.0.1', protocol: 'UDP' }] },
  ] as Container[];
  it("publishes every container's hostPorts on the sandbox", () => {
    assert.deepEqual(portBindings(pod({ containers })), {
      exposed: { '80/tcp': {}, '53/udp': {} },
      bindings: { '80/tcp': [{ HostPort: '8080' }], '53/udp': [{ HostIp: '127.0.0.1', HostPort: '5353' }] },
    });
    assert.deepEqual(podAllocatedHostPorts(pod({ containers })), ['8080/tcp', '5353/udp']);
    assert.deepEqual(podAllocatedHostPorts(pod({ containers, hostNetwork: true })), []);
  });
  it('makes a shareable-IPC sandbox on the pod network, with the pod name as hostname', () => {
    const o = sandboxCreateOptions({ pod: pod({ containers }), nodeName: 'n1', image: 'R/pause:1.0', network: 'minik8s0' });
    assert.equal(o.name, 'k8s_POD_web_ns_u-1_0');
    assert.equal(o.Hostname, 'web');
    assert.equal(o.HostConfig.NetworkMode, 'minik8s0');
    assert.equal(o.HostConfig.IpcMode, 'shareable');
    assert.deepEqual(o.HostConfig.PortBindings?.['80/tcp'], [{ HostPort: '8080' }]);
    assert.equal(o.Labels[LABELS.role], 'sandbox');
    assert.equal(o.Labels[LABELS.node], 'n1');
    const host = sandboxCreateOptions({ pod: pod({ containers, hostNetwork: true }), nodeName: 'n1', image: 'p', network: 'host' });
    assert.equal(host.HostConfig.NetworkMode, 'host');
    assert.equal(host.HostConfig.PortBindings, undefined);
    assert.equal(host.Hostname, undefined);
  });
  it('gives the sandbox the cluster DNS settings', () => {
    const o = sandboxCreateOptions({
      pod: pod({ containers }),
      nodeName: 'n1',
      image: 'p',
      network: 'minik8s0',
      clusterDNS: { nameserver: '10.96.0.10', domain: 'cluster.local' },
    });
    assert.deepEqual(o.HostConfig.Dns, ['10.96.0.10']);
    assert.deepEqual(o.HostConfig.DnsOptions, ['ndots:5']);
  });
  it("joins app containers to the sandbox's namespaces, with labels, limits and mounts", () => {
    const c = {
      name: 'app',
      image: 'busybox',
      command: ['sh', '-c', 'echo $(GREETING)'],
      env: [{ name: 'GREETING', value: 'hi' }],
      workingDir: '/w',
      resources: { limits: { memory: '1Mi' } },
      volumeMounts: [{ name: 'v', mountPath: '/v' }],
    } as unknown as Container;
    const o = appContainerCreateOptions({
      pod: pod({ containers: [c] }),
      container: c,
      attempt: 2,
      nodeName: 'n1',
      sandboxID: 'sbx',
      podIP: '10.1.1.2',
      image: 'R/busybox:latest',
      imageConfig: { Entrypoint: null, Cmd: ['sh'] },
      volumes: [{ name: 'v', hostPath: '/h' }],
    });
    assert.equal(o.name, 'k8s_app_web_ns_u-1_2');
    assert.deepEqual(o.Entrypoint, ['sh', '-c', 'echo hi']);
    assert.deepEqual(o.Cmd, []);
    assert.deepEqual(o.Env, ['GREETING=hi']);
    assert.equal(o.WorkingDir, '/w');
    assert.deepEqual([o.HostConfig.NetworkMode, o.HostConfig.IpcMode, o.HostConfig.PidMode], ['container:sbx', 'container:sbx', 'container:sbx']);
    assert.deepEqual(o.HostConfig.Binds, ['/h:/v']);
    assert.equal(o.HostConfig.Memory, 1048576);
    assert.deepEqual([o.Labels[LABELS.role], o.Labels[LABELS.container], o.Labels[LABELS.attempt], o.Labels[LABELS.podUid]], ['app', 'app', '2', 'u-1']);
  });
});

// ---- Runtime state ----

function inspected(o: {
  id: string;
  role: 'sandbox' | 'app';
  name?: string;
  attempt?: number;
  status?: string;
  exit?: number;
  oom?: boolean;
  created?: string;
  uid?: string;
  ip?: string;
}): InspectedContainer {
  return {
    Id: o.id,
    Created: o.created ?? '2030-01-01T00:00:00.123456789Z',
    Image: `sha256:${o.id}`,
    Config: {
      Image: 'R/busybox:1.35',
      Labels: {
        [LABELS.podUid]: o.uid ?? 'u-1',
        [LABELS.podName]: 'web',
        [LABELS.podNamespace]: 'ns',
        [LABELS.role]: o.role,
        [LABELS.container]: o.name ?? 'POD',
        [LABELS.attempt]: String(o.attempt ?? 0),
      },
    },
    State: {
      Status: o.status ?? 'running',
      ExitCode: o.exit ?? 0,
      OOMKilled: o.oom ?? false,
      StartedAt: '2030-01-01T00:00:01.5Z',
      FinishedAt: o.status === 'exited' ? '2030-01-01T00:00:09Z' : '0001-01-01T00:00:00Z',
    },
    NetworkSettings: { IPAddress: '', Networks: { minik8s0: { IPAddress: o.ip ?? '10.1.1.2' } } },
  };
}

describe('runtime state', () => {
  it('maps Docker states and exit reasons', () => {
    const states: [string, string][] = [
      ['running', 'running'],
      ['paused', 'running'],
      ['created', 'created'],
      ['exited', 'exited'],
      ['dead', 'exited'],
      ['removing', 'unknown'],
    ];
    for (const [docker, want] of states) assert.equal(runState(docker), want);
    const reasons: [{ ExitCode?: number; OOMKilled?: boolean }, string][] = [
      [{ ExitCode: 0 }, 'Completed'],
      [{ ExitCode: 1 }, 'Error'],
      [{ ExitCode: 137, OOMKilled: true }, 'OOMKilled'],
      [{ ExitCode: 0, OOMKilled: true }, 'OOMKilled'],
    ];
    for (const [state, want] of reasons) assert.equal(exitReason(state), want);
  });
  it('reads Docker times: zero time is unset, nanoseconds are cut to milliseconds', () => {
    assert.equal(dockerTime('0001-01-01T00:00:00Z'), undefined);
    assert.equal(dockerTime(undefined), undefined);
    assert.equal(dockerTime('2030-01-01T00:00:00.123456789Z'), '2030-01-01T00:00:00.123Z');
  });
  it('groups containers into pods: newest instance per name, the one before as previous', () => {
    const pods = groupRuntimePods([
      inspected({ id: 's1', role: 'sandbox' }),
      inspected({ id: 'a0', role: 'app', name: 'a', attempt: 0, status: 'exited', exit: 137, oom: true }),
      inspected({ id: 'a1', role: 'app', name: 'a', attempt: 1 }),
      inspected({ id: 'b0', role: 'app', name: 'b', attempt: 0, status: 'exited', exit: 0 }),
    ]);
    assert.equal(pods.length, 1);
    const [p] = pods;
    assert.deepEqual(p.sandbox, { id: 's1', state: 'ready', ip: '10.1.1.2', createdAt: '2030-01-01T00:00:00.123Z' });
    assert.deepEqual(
      p.containers.map((c) => [c.name, c.id, c.state, c.attempt, c.previous?.id]),
      [
        ['a', 'a1', 'running', 1, 'a0'],
        ['b', 'b0', 'exited', 0, undefined],
      ],
    );
    assert.deepEqual(
      [p.containers[0].previous?.reason, p.containers[0].previous?.exitCode, p.containers[0].previous?.finishedAt],
      ['OOMKilled', 137, '2030-01-01T00:00:09.000Z'],
    );
    assert.equal(p.containers[1].reason, 'Completed');
    assert.equal(p.containers[0].finishedAt, undefined);
  });
  it('prefers a running sandbox; a pod whose sandbox died is notready without an IP', () => {
    const [p] = groupRuntimePods([
      inspected({ id: 's-old', role: 'sandbox', status: 'exited', created: '2030-01-02T00:00:00Z' }),
      inspected({ id: 's-new', role: 'sandbox' }),
    ]);
    assert.equal(p.sandbox.id, 's-new');
    const [dead] = groupRuntimePods([inspected({ id: 's', role: 'sandbox', status: 'exited' }), inspected({ id: 'a', role: 'app', name: 'a' })]);
    assert.equal(dead.sandbox.state, 'notready');
    assert.equal(dead.sandbox.ip, undefined);
    const [orphan] = groupRuntimePods([inspected({ id: 'a', role: 'app', name: 'a' })]);
    assert.equal(orphan.sandbox.state, 'notready');
    assert.equal(orphan.sandbox.id, '');
  });
  it('keeps one earlier instance when a new one starts', () => {
    const list = [0, 1, 2].map((attempt) => inspected({ id: `a${attempt}`, role: 'app', name: 'a', attempt }));
    assert.deepEqual(
      instancesToRemove(list).map((c) => c.Id),
      ['a1', 'a0'],
    );
    assert.deepEqual(instancesToRemove([]), []);
  });
});

describe('stats', () => {
  const cases: [string, Parameters<typeof cpuCores>, number][] = [
    [
      'half a core between samples',
      [
        { usageNs: 1.5e9, atMs: 2000 },
        { usageNs: 1e9, atMs: 1000 },
      ],
      0.5,
    ],
    ['no previous: average since start', [{ usageNs: 2e9, atMs: 4000 }, undefined, 0], 0.5],
    ['nothing to compare with', [{ usageNs: 2e9, atMs: 4000 }, undefined], 0],
    [
      'counter reset',
      [
        { usageNs: 1, atMs: 2000 },
        { usageNs: 5, atMs: 1000 },
      ],
      0,
    ],
  ];
  for (const [name, args, want] of cases) it(name, () => assert.equal(cpuCores(...args), want));
  it('takes page cache out of memory use', () => {
    assert.equal(memoryWorkingSet({ usage: 100, stats: { cache: 30 } }), 70);
    assert.equal(memoryWorkingSet({ usage: 100, stats: { inactive_file: 40 } }), 60);
    assert.equal(memoryWorkingSet(undefined), 0);
  });
});

describe('Docker plumbing', () => {
  it('demultiplexes framed output', () => {
    const frame = (stream: number, text: string) => {
      const body = Buffer.from(text);
      const header = Buffer.alloc(8);
      header[0] = stream;
      header.writeUInt32BE(body.length, 4);
      return Buffer.concat([header, body]);
    };
    const r = demuxDockerBuffer(Buffer.concat([frame(1, 'a\n'), frame(2, 'e\n'), frame(1, 'b\n')]));
    assert.equal(r.stdout.toString(), 'a\nb\n');
    assert.equal(r.stderr.toString(), 'e\n');
    assert.equal(r.all.toString(), 'a\ne\nb\n');
  });
  it('turns Docker errors into one-line messages', () => {
    assert.equal(
      dockerErrorMessage({ json: { message: 'No such image: x' }, message: '(HTTP code 404) no such image - No such image: x' }),
      'No such image: x',
    );
    assert.equal(dockerErrorMessage(new Error('(HTTP code 500) server error - boom\nmore')), 'boom');
    assert.equal(
      portConflictMessage('driver failed programming external connectivity on endpoint k8s_POD (abc): Bind for 0.0.0.0:8080 failed: port is already allocated'),
      'port 8080 is already allocated on the node (hostPort 8080 is taken by another pod or process)',
    );
    assert.equal(portConflictMessage('something else'), undefined);
    assert.equal(
      startFailureMessage(
        'OCI runtime create failed: container_linux.go:380: starting container process caused: exec: "/x": stat /x: no such file or directory: unknown',
      ),
      'exec: "/x": stat /x: no such file or directory',
    );
  });
  it('reads DOCKER_HOST addresses', () => {
    const cases: [string | undefined, object | RegExp][] = [
      [undefined, { socketPath: '/var/run/docker.sock' }],
      ['unix:///run/d.sock', { socketPath: '/run/d.sock' }],
      ['tcp://10.0.0.1:2376', { host: '10.0.0.1', port: 2376, protocol: 'http' }],
      ['tcp://h', { host: 'h', port: 2375, protocol: 'http' }],
      ['ssh://x', /invalid Docker host/],
    ];
    for (const [input, want] of cases) {
      if (want instanceof RegExp) assert.throws(() => dockerConnectOptions(input), want);
      else assert.deepEqual(dockerConnectOptions(input), want);
    }
  });
});

describe('podDnsSettings', () => {
  const cluster = { nameserver: '10.96.0.10', domain: 'cluster.local' };
  const clusterFirst = { Dns: ['10.96.0.10'], DnsSearch: ['ns.svc.cluster.local', 'svc.cluster.local', 'cluster.local'], DnsOptions: ['ndots:5'] };
  const dnsConfig = { nameservers: ['1.1.1.1'], searches: ['corp.example'], options: [{ name: 'ndots', value: '2' }, { name: 'edns0' }] };
  const cases: [string, Partial<Pod['spec']>, typeof cluster | undefined, object][] = [
    ['ClusterFirst (the default): the cluster nameserver, the namespace search path, ndots:5', {}, cluster, clusterFirst],
    ['ClusterFirst said outright', { dnsPolicy: 'ClusterFirst' }, cluster, clusterFirst],
    [
      'ClusterFirst with dnsConfig: its entries added, its options overriding by name',
      { dnsConfig },
      cluster,
      { Dns: ['10.96.0.10', '1.1.1.1'], DnsSearch: [...clusterFirst.DnsSearch, 'corp.example'], DnsOptions: ['ndots:2', 'edns0'] },
    ],
    ["ClusterFirst on a node without cluster DNS: the node's resolvers", {}, undefined, {}],
    ["ClusterFirst with hostNetwork: the node's resolvers, as the kubelet does", { hostNetwork: true }, cluster, {}],
    ["ClusterFirstWithHostNet with hostNetwork: the cluster's", { hostNetwork: true, dnsPolicy: 'ClusterFirstWithHostNet' }, cluster, clusterFirst],
    ["Default: the node's resolvers", { dnsPolicy: 'Default' }, cluster, {}],
    [
      "Default with dnsConfig: its parts in place of the node's",
      { dnsPolicy: 'Default', dnsConfig },
      cluster,
      { Dns: ['1.1.1.1'], DnsSearch: ['corp.example'], DnsOptions: ['ndots:2', 'edns0'] },
    ],
    ['None: dnsConfig alone', { dnsPolicy: 'None', dnsConfig: { nameservers: ['9.9.9.9'] } }, cluster, { Dns: ['9.9.9.9'] }],
  ];
  for (const [name, spec, settings, want] of cases) it(name, () => assert.deepEqual(podDnsSettings(pod(spec), settings), want));
  it('keeps at most three nameservers, without repeats', () => {
    const got = podDnsSettings(pod({ dnsConfig: { nameservers: ['10.96.0.10', '1.1.1.1', '2.2.2.2', '3.3.3.3'] } }), cluster);
    assert.deepEqual(got.Dns, ['10.96.0.10', '1.1.1.1', '2.2.2.2']);
  });
});

describe('resolvConfText', () => {
  it('writes search, nameservers and options as resolv.conf has them', () => {
    assert.equal(
      resolvConfText({ Dns: ['10.96.0.10'], DnsSearch: ['ns.svc.cluster.local', 'cluster.local'], DnsOptions: ['ndots:5'] }),
      "# Written by minik8s for the pod's dnsPolicy.\nsearch ns.svc.cluster.local cluster.local\nnameserver 10.96.0.10\noptions ndots:5\n",
    );
  });
  it("leaves Docker's file alone when the pod names no nameserver", () => {
    assert.equal(resolvConfText({}), undefined);
    assert.equal(resolvConfText({ DnsSearch: ['corp.example'] }), undefined);
  });
});
