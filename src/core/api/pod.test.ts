// Pod defaults, cross-field checks, QoS class and the kubectl-like columns.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { defaultPullPolicy, podDisplayStatus, podKind, podQosClass, type Pod } from './pod.js';
import { validateObject } from './validate.js';

const make = (spec: Record<string, unknown>, metadata: Record<string, unknown> = {}) =>
  validateObject(podKind, { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', ...metadata }, spec }) as Pod;
const c = { name: 'c', image: 'busybox:1.36' };

describe('pod defaults', () => {
  it('fills Kubernetes defaults', () => {
    const p = make({
      containers: [{ ...c, ports: [{ containerPort: 80 }], livenessProbe: { httpGet: { port: 80 } }, resources: { limits: { cpu: '1' } } }],
      volumes: [{ name: 'v' }],
    });
    assert.equal(p.spec.restartPolicy, 'Always');
    assert.equal(p.spec.terminationGracePeriodSeconds, 30);
    assert.equal(p.spec.dnsPolicy, 'ClusterFirst');
    assert.equal(p.spec.schedulerName, 'default-scheduler');
    const ct = p.spec.containers[0];
    assert.equal(ct.imagePullPolicy, 'IfNotPresent');
    assert.equal(ct.ports![0].protocol, 'TCP');
    assert.deepEqual(ct.resources!.requests, { cpu: '1' });
    assert.deepEqual(
      [
        ct.livenessProbe!.periodSeconds,
        ct.livenessProbe!.timeoutSeconds,
        ct.livenessProbe!.successThreshold,
        ct.livenessProbe!.failureThreshold,
        ct.livenessProbe!.httpGet!.scheme,
      ],
      [10, 1, 1, 3, 'HTTP'],
    );
    assert.deepEqual(p.spec.volumes![0], { name: 'v', emptyDir: {} });
    assert.equal(p.status.phase, 'Pending');
  });
  it('keeps what the user set', () => {
    const p = make({ containers: [{ ...c, imagePullPolicy: 'Never' }], restartPolicy: 'Never', terminationGracePeriodSeconds: 0 });
    assert.equal(p.spec.containers[0].imagePullPolicy, 'Never');
    assert.equal(p.spec.restartPolicy, 'Never');
    assert.equal(p.spec.terminationGracePeriodSeconds, 0);
  });
  const pulls: [string, string][] = [
    ['busybox', 'Always'],
    ['busybox:latest', 'Always'],
    ['busybox:1.36', 'IfNotPresent'],
    ['localhost:5000/fn', 'Always'],
    ['localhost:5000/fn:v2', 'IfNotPresent'],
    ['busybox@sha256:abc', 'IfNotPresent'],
    ['registry:5000/a/b:latest', 'Always'],
  ];
  for (const [image, want] of pulls) it(`pull policy for ${image} is ${want}`, () => assert.equal(defaultPullPolicy(image), want));
});

describe('pod checks', () => {
  const bad: [string, Record<string, unknown>, string][] = [
    ['init and app container names collide', { initContainers: [c], containers: [c] }, 'spec.containers[0].name'],
    ['duplicate volume names', { containers: [c], volumes: [{ name: 'v' }, { name: 'v' }] }, 'spec.volumes[1].name'],
    ['mount of a missing volume', { containers: [{ ...c, volumeMounts: [{ name: 'x', mountPath: '/x' }] }] }, 'spec.containers[0].volumeMounts[0].name'],
    ['probe without a handler', { containers: [{ ...c, readinessProbe: { periodSeconds: 5 } }] }, 'spec.containers[0].readinessProbe'],
    [
      'probe with two handlers',
      { containers: [{ ...c, readinessProbe: { exec: { command: ['true'] }, tcpSocket: { port: 80 } } }] },
      'spec.containers[0].readinessProbe.exec',
    ],
    [
      'liveness successThreshold',
      { containers: [{ ...c, livenessProbe: { exec: { command: ['true'] }, successThreshold: 2 } }] },
      'spec.containers[0].livenessProbe.successThreshold',
    ],
    [
      'request above limit',
      { containers: [{ ...c, resources: { requests: { cpu: '2' }, limits: { cpu: '1' } } }] },
      'spec.containers[0].resources.requests[cpu]',
    ],
    [
      'env with value and valueFrom',
      { containers: [{ ...c, env: [{ name: 'A', value: 'x', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } }] }] },
      'spec.containers[0].env[0].valueFrom',
    ],
    [
      'node affinity In without values',
      {
        containers: [c],
        affinity: {
          nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'a', operator: 'In' }] }] } },
        },
      },
      'spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].values',
    ],
    [
      'pod anti-affinity without topologyKey',
      { containers: [c], affinity: { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ labelSelector: { matchLabels: { a: 'b' } } }] } } },
      'spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey',
    ],
    ['toleration Exists with a value', { containers: [c], tolerations: [{ key: 'k', operator: 'Exists', value: 'v' }] }, 'spec.tolerations[0].operator'],
    ['two volume sources', { containers: [c], volumes: [{ name: 'v', emptyDir: {}, hostPath: { path: '/x' } }] }, 'spec.volumes[0].hostPath'],
  ];
  for (const [name, spec, field] of bad) {
    it(name, () =>
      assert.throws(
        () => make(spec),
        (err: { details: { causes: { field: string }[] } }) => {
          assert.ok(
            err.details.causes.some((x) => x.field === field),
            JSON.stringify(err.details.causes),
          );
          return true;
        },
      ),
    );
  }
  it('accepts a full scheduling spec', () => {
    make({
      containers: [c],
      nodeSelector: { disk: 'ssd' },
      tolerations: [{ key: 'k', operator: 'Equal', value: 'v', effect: 'NoSchedule' }, { operator: 'Exists' }],
      affinity: {
        nodeAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'n', operator: 'Gt', values: ['3'] }] }] },
          preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 10, preference: { matchExpressions: [{ key: 'zone', operator: 'In', values: ['a'] }] } }],
        },
        podAntiAffinity: {
          preferredDuringSchedulingIgnoredDuringExecution: [
            { weight: 100, podAffinityTerm: { labelSelector: { matchLabels: { app: 'web' } }, topologyKey: 'kubernetes.io/hostname' } },
          ],
        },
      },
      priority: 10,
      hostNetwork: false,
      serviceAccountName: 'default',
    });
  });
});

describe('podQosClass', () => {
  const res = (requests?: object, limits?: object) => ({ ...c, resources: { requests, limits } });
  const cases: [string, object[], string][] = [
    ['nothing set', [c], 'BestEffort'],
    ['limits equal requests', [res({ cpu: '1', memory: '1Gi' }, { cpu: '1000m', memory: '1Gi' })], 'Guaranteed'],
    ['limits only', [res(undefined, { cpu: '1', memory: '1Gi' })], 'Guaranteed'],
    ['requests only', [res({ cpu: '1' })], 'Burstable'],
    ['one container without', [res(undefined, { cpu: '1', memory: '1Gi' }), { ...c, name: 'd' }], 'Burstable'],
  ];
  for (const [name, containers, want] of cases) it(name, () => assert.equal(podQosClass(make({ containers }).spec), want));
});

describe('pod columns', () => {
  const col = (name: string) => podKind.columns!.find((x) => x.name === name)!;
  const withStatus = (status: object, metadata: Record<string, unknown> = {}) =>
    ({ ...make({ containers: [c, { ...c, name: 'd' }] }, metadata), status }) as Pod;
  const cases: [string, object, Record<string, unknown>, string, string][] = [
    ['pending', {}, {}, 'Pending', '0/2'],
    [
      'running',
      {
        phase: 'Running',
        containerStatuses: [
          { name: 'c', ready: true, restartCount: 1, state: { running: {} } },
          { name: 'd', ready: true, restartCount: 2, state: { running: {} } },
        ],
      },
      {},
      'Running',
      '2/2',
    ],
    [
      'crash loop',
      { phase: 'Running', containerStatuses: [{ name: 'c', ready: false, restartCount: 5, state: { waiting: { reason: 'CrashLoopBackOff' } } }] },
      {},
      'CrashLoopBackOff',
      '0/2',
    ],
    [
      'completed',
      { phase: 'Succeeded', containerStatuses: [{ name: 'c', state: { terminated: { exitCode: 0, reason: 'Completed' } } }] },
      {},
      'Completed',
      '0/2',
    ],
    ['exit code', { phase: 'Failed', containerStatuses: [{ name: 'c', state: { terminated: { exitCode: 3 } } }] }, {}, 'ExitCode:3', '0/2'],
    ['terminating', { phase: 'Running' }, { deletionTimestamp: '2026-01-01T00:00:00Z' }, 'Terminating', '0/2'],
    ['init waiting', { phase: 'Pending', initContainerStatuses: [{ name: 'i', state: { waiting: { reason: 'PodInitializing' } } }] }, {}, 'Init:0/1', '0/2'],
  ];
  for (const [name, status, metadata, want, ready] of cases) {
    it(name, () => {
      const p = withStatus(status, metadata);
      assert.equal(podDisplayStatus(p), want);
      assert.equal(col('STATUS').value(p), want);
      assert.equal(col('READY').value(p), ready);
    });
  }
  it('restarts, IP and node', () => {
    const p = withStatus({
      podIP: '10.244.1.5',
      containerStatuses: [
        { name: 'c', restartCount: 1 },
        { name: 'd', restartCount: 2 },
      ],
    });
    assert.equal(col('RESTARTS').value(p), '3');
    assert.equal(col('IP').value(p), '10.244.1.5');
    assert.equal(col('NODE').value(p), '<none>');
    assert.equal(col('IP').wide, true);
    assert.equal(col('NOMINATED NODE').value(p), '<none>');
    assert.equal(col('READINESS GATES').value(p), '<none>');
  });
  it('nominated node and readiness gates: N/M of the gates whose condition is True', () => {
    const p = withStatus({
      nominatedNodeName: 'n2',
      conditions: [
        { type: 'example.com/lb', status: 'True' },
        { type: 'example.com/dns', status: 'False' },
        { type: 'Ready', status: 'False' },
      ],
    });
    assert.equal(col('NOMINATED NODE').value(p), 'n2');
    p.spec.readinessGates = [{ conditionType: 'example.com/lb' }, { conditionType: 'example.com/dns' }, { conditionType: 'example.com/absent' }];
    assert.equal(col('READINESS GATES').value(p), '1/3');
    assert.equal(col('READINESS GATES').wide, true);
  });
});
