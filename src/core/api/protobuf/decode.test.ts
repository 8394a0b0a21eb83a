// Protobuf bodies: bytes encoded here with protobufjs from the same field table, and bytes kubectl v1.32 sent, decoded into the JSON a JSON client sends.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import protobuf from 'protobufjs';
import { BadRequestError, UnsupportedMediaTypeError } from '../../errors.js';
import { decodeProtobufObject, isProtobufContentType, PROTOBUF_MAGIC } from './decode.js';
import { encodeEnvelope, encodeMessage, encodeObject } from './encode.js';

const envelope = encodeEnvelope;
const encode = encodeObject;

// What kubectl v1.32 sent (captured through a TLS proxy in front of a master).
const KUBECTL = {
  namespace: '6b3873000a0f0a02763112094e616d657370616365121b0a130a03666f6f12001a0022002a0032003800420012001a020a001a002200',
  configmap: '6b3873000a0f0a0276311209436f6e6669674d617012250a130a03636d3112001a0022002a0032003800420012060a016112016212060a01631201641a002200',
  secret: '6b3873000a0c0a0276311206536563726574122a0a120a02733112001a0022002a0032003800420012060a0161120162120a0a0362696e120378c3bf1a001a002200',
  deployment:
    '6b3873000a150a07617070732f7631120a4465706c6f796d656e7412b8010a1d0a02643112001a0022002a003200380042005a090a03617070120264311288010802120b0a090a03617070120264311a6f0a1b0a0012001a0022002a003200380042005a090a0361707012026431125012320a0762757379626f78120762757379626f782a00320a0a001000185022002a0042006a007200800100880100900100a201001a00320042004a0052005800600068008201008a01009a0100c2010022020a00280038001a0c0800100018002000280038001a002200',
  service:
    '6b3873000a0d0a027631120753657276696365126c0a210a047376633112001a0022002a003200380042005a0b0a0361707012047376633112430a1b0a0738302d38303830120354435018502207080010903f1a002800120b0a036170701204737663311a002209436c757374657249503a00420052005a00600068001a020a001a002200',
  job: '6b3873000a0f0a0862617463682f763112034a6f621284010a120a026a3112001a0022002a00320038004200126432620a100a0012001a0022002a00320038004200124e122b0a026a31120762757379626f781a046563686f1a0268692a0042006a007200800100880100900100a201001a054e65766572320042004a0052005800600068008201008a01009a0100c201001a082000280030003a001a002200',
};

function captured(name: keyof typeof KUBECTL): Buffer {
  return Buffer.from(KUBECTL[name], 'hex');
}

describe('protobuf bodies from kubectl v1.32', () => {
  test('create namespace foo', () => {
    assert.deepEqual(decodeProtobufObject(captured('namespace')), {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: 'foo' },
      spec: {},
      status: {},
    });
  });

  test('create configmap cm1 --from-literal=a=b --from-literal=c=d', () => {
    assert.deepEqual(decodeProtobufObject(captured('configmap')), {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'cm1' },
      data: { a: 'b', c: 'd' },
    });
  });

  test('create secret generic: data as base64, as the JSON form carries bytes', () => {
    const secret = decodeProtobufObject(captured('secret'));
    assert.deepEqual(secret, {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 's1' },
      data: { a: Buffer.from('b').toString('base64'), bin: Buffer.from('x\u00ff').toString('base64') },
    });
  });

  test('create deployment d1 --image=busybox --replicas=2 --port=80', () => {
    assert.deepEqual(decodeProtobufObject(captured('deployment')), {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'd1', labels: { app: 'd1' } },
      spec: {
        replicas: 2,
        selector: { matchLabels: { app: 'd1' } },
        template: {
          metadata: { labels: { app: 'd1' } },
          spec: { containers: [{ name: 'busybox', image: 'busybox', ports: [{ containerPort: 80 }], resources: {} }] },
        },
        strategy: {},
      },
      status: {},
    });
  });

  test('create service clusterip svc1 --tcp=80:8080: targetPort as a number', () => {
    assert.deepEqual(decodeProtobufObject(captured('service')), {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'svc1', labels: { app: 'svc1' } },
      spec: { ports: [{ name: '80-8080', protocol: 'TCP', port: 80, targetPort: 8080 }], selector: { app: 'svc1' }, type: 'ClusterIP' },
      status: {},
    });
  });

  test('create job j1 --image=busybox -- echo hi', () => {
    assert.deepEqual(decodeProtobufObject(captured('job')), {
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: { name: 'j1' },
      spec: {
        template: {
          metadata: {},
          spec: { containers: [{ name: 'j1', image: 'busybox', command: ['echo', 'hi'], resources: {} }], restartPolicy: 'Never' },
        },
      },
      status: {},
    });
  });
});

describe('protobuf bodies encoded from the same table', () => {
  test('a pod: pointers keep zero, value fields drop it, inlined selectors, quantities, probes, tolerations', () => {
    const body = encode('v1', 'Pod', 'Pod', {
      metadata: {
        name: 'p',
        namespace: 'default',
        generation: 0,
        creationTimestamp: {},
        labels: { run: 'p' },
        annotations: { note: '' },
        ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'rs', uid: 'u1', controller: true }],
      },
      spec: {
        containers: [
          {
            name: 'c',
            image: 'busybox',
            command: ['sleep', '100'],
            ports: [{ containerPort: 80, protocol: 'TCP', hostPort: 0 }],
            env: [
              { name: 'A', value: 'B' },
              { name: 'S', valueFrom: { secretKeyRef: { localObjectReference: { name: 'sec' }, key: 'k', optional: false } } },
              { name: 'F', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } },
            ],
            envFrom: [{ configMapRef: { localObjectReference: { name: 'cm' } } }],
            resources: { limits: { cpu: { string: '500m' }, memory: { string: '64Mi' } }, requests: { cpu: { string: '100m' } } },
            volumeMounts: [{ name: 'v', mountPath: '/data', readOnly: true }],
            readinessProbe: { handler: { httpGet: { path: '/healthz', port: { type: 0, intVal: 8080 } } }, periodSeconds: 5 },
            livenessProbe: { handler: { tcpSocket: { port: { type: 1, strVal: 'http' } } } },
            lifecycle: { preStop: { sleep: { seconds: 3 } } },
            securityContext: { privileged: false, runAsUser: 0 },
            stdin: false,
          },
        ],
        volumes: [
          { name: 'v', volumeSource: { emptyDir: {} } },
          { name: 's', volumeSource: { secret: { secretName: 'sec', defaultMode: 420 } } },
          { name: 'c', volumeSource: { configMap: { localObjectReference: { name: 'cm' } } } },
        ],
        restartPolicy: 'Always',
        terminationGracePeriodSeconds: 0,
        hostNetwork: false,
        nodeSelector: { disk: 'ssd' },
        tolerations: [{ key: 'k', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 30 }],
        automountServiceAccountToken: false,
      },
    });
    assert.deepEqual(decodeProtobufObject(body), {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name: 'p',
        namespace: 'default',
        labels: { run: 'p' },
        annotations: { note: '' },
        ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'rs', uid: 'u1', controller: true }],
      },
      spec: {
        containers: [
          {
            name: 'c',
            image: 'busybox',
            command: ['sleep', '100'],
            ports: [{ containerPort: 80, protocol: 'TCP' }],
            env: [
              { name: 'A', value: 'B' },
              { name: 'S', valueFrom: { secretKeyRef: { name: 'sec', key: 'k', optional: false } } },
              { name: 'F', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } },
            ],
            envFrom: [{ configMapRef: { name: 'cm' } }],
            resources: { limits: { cpu: '500m', memory: '64Mi' }, requests: { cpu: '100m' } },
            volumeMounts: [{ name: 'v', mountPath: '/data', readOnly: true }],
            readinessProbe: { httpGet: { path: '/healthz', port: 8080 }, periodSeconds: 5 },
            livenessProbe: { tcpSocket: { port: 'http' } },
            lifecycle: { preStop: { sleep: { seconds: 3 } } },
            securityContext: { privileged: false, runAsUser: 0 },
          },
        ],
        volumes: [
          { name: 'v', emptyDir: {} },
          { name: 's', secret: { secretName: 'sec', defaultMode: 420 } },
          { name: 'c', configMap: { name: 'cm' } },
        ],
        restartPolicy: 'Always',
        terminationGracePeriodSeconds: 0,
        nodeSelector: { disk: 'ssd' },
        tolerations: [{ key: 'k', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 30 }],
        automountServiceAccountToken: false,
      },
    });
  });

  test('a pod with downwardAPI and projected volumes (configMap, secret, downwardAPI sources)', () => {
    const file = { path: 'name', fieldRef: { fieldPath: 'metadata.name' }, mode: 256 };
    const body = encode('v1', 'Pod', 'Pod', {
      metadata: { name: 'p' },
      spec: {
        containers: [{ name: 'c', image: 'busybox' }],
        volumes: [
          { name: 'd', volumeSource: { downwardAPI: { items: [file], defaultMode: 420 } } },
          {
            name: 'all',
            volumeSource: {
              projected: {
                defaultMode: 288,
                sources: [
                  { configMap: { localObjectReference: { name: 'cm' }, items: [{ key: 'k', path: 'p' }] } },
                  { secret: { localObjectReference: { name: 's' }, optional: true } },
                  {
                    downwardAPI: { items: [{ path: 'mem', resourceFieldRef: { containerName: 'c', resource: 'limits.memory', divisor: { string: '1Mi' } } }] },
                  },
                ],
              },
            },
          },
        ],
      },
    });
    assert.deepEqual((decodeProtobufObject(body) as { spec: { volumes: unknown } }).spec.volumes, [
      { name: 'd', downwardAPI: { items: [file], defaultMode: 420 } },
      {
        name: 'all',
        projected: {
          defaultMode: 288,
          sources: [
            { configMap: { name: 'cm', items: [{ key: 'k', path: 'p' }] } },
            { secret: { name: 's', optional: true } },
            { downwardAPI: { items: [{ path: 'mem', resourceFieldRef: { containerName: 'c', resource: 'limits.memory', divisor: '1Mi' } }] } },
          ],
        },
      },
    ]);
  });

  test('replicas: 0 is kept (a pointer), maxSurge as a percentage, times as RFC 3339', () => {
    const body = encode('apps/v1', 'Deployment', 'Deployment', {
      metadata: { name: 'd', deletionTimestamp: { seconds: 1_700_000_000 } },
      spec: {
        replicas: 0,
        selector: { matchLabels: { app: 'd' }, matchExpressions: [{ key: 'tier', operator: 'In', values: ['a', 'b'] }] },
        template: { metadata: { labels: { app: 'd' } }, spec: { containers: [{ name: 'c', image: 'i' }] } },
        strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: { type: 1, strVal: '25%' }, maxUnavailable: { type: 0, intVal: 0 } } },
      },
    });
    const d = decodeProtobufObject(body) as { metadata: unknown; spec: Record<string, unknown> };
    assert.deepEqual(d.metadata, { name: 'd', deletionTimestamp: '2023-11-14T22:13:20Z' });
    assert.equal(d.spec.replicas, 0);
    assert.deepEqual(d.spec.selector, { matchLabels: { app: 'd' }, matchExpressions: [{ key: 'tier', operator: 'In', values: ['a', 'b'] }] });
    assert.deepEqual(d.spec.strategy, { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: 0 } });
  });

  test('Secret bytes are base64, stringData stays text; an entry with no value is empty', () => {
    const body = encode('v1', 'Secret', 'Secret', {
      metadata: { name: 's' },
      data: { bin: Buffer.from([0, 1, 2, 255]), empty: Buffer.alloc(0) },
      stringData: { plain: 'text' },
      type: 'Opaque',
    });
    assert.deepEqual(decodeProtobufObject(body), {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 's' },
      data: { bin: 'AAEC/w==', empty: '' },
      stringData: { plain: 'text' },
      type: 'Opaque',
    });
  });

  test('fields this reader does not know are skipped, whatever their wire type', () => {
    const known = encodeMessage('Namespace', { metadata: { name: 'n' } });
    const writer = protobuf.Writer.create();
    writer.uint32((99 << 3) | 0).uint64(123456789);
    writer.uint32((98 << 3) | 2).string('later field');
    writer.uint32((97 << 3) | 1).double(1.5);
    writer.uint32((96 << 3) | 5).fixed32(7);
    const raw = Buffer.concat([known, writer.finish()]);
    assert.deepEqual(decodeProtobufObject(envelope('v1', 'Namespace', raw)), { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'n' } });
  });

  test('Eviction and DeleteOptions, which drain and typed deletes send', () => {
    const body = encode('policy/v1', 'Eviction', 'Eviction', {
      metadata: { name: 'p', namespace: 'default' },
      deleteOptions: { gracePeriodSeconds: 0, preconditions: { uid: 'u' }, dryRun: ['All'] },
    });
    assert.deepEqual(decodeProtobufObject(body), {
      apiVersion: 'policy/v1',
      kind: 'Eviction',
      metadata: { name: 'p', namespace: 'default' },
      deleteOptions: { gracePeriodSeconds: 0, preconditions: { uid: 'u' }, dryRun: ['All'] },
    });
  });
});

describe('protobuf bodies refused', () => {
  test('a kind not read in protobuf: 415 naming it and saying to send JSON', () => {
    const body = envelope('rbac.authorization.k8s.io/v1', 'Role', new Uint8Array(0));
    assert.throws(
      () => decodeProtobufObject(body),
      (err: unknown) =>
        err instanceof UnsupportedMediaTypeError && /Role \(rbac\.authorization\.k8s\.io\/v1\)/.test(err.message) && /application\/json/.test(err.message),
    );
  });

  test('a content encoding (such as gzip) is 415', () => {
    const body = envelope('v1', 'Namespace', new Uint8Array(0), { contentEncoding: 'gzip' });
    assert.throws(() => decodeProtobufObject(body), UnsupportedMediaTypeError);
  });

  test('malformed bytes are 400: no prefix, truncated, wrong wire types, overrunning lengths, __proto__ keys', () => {
    const good = captured('deployment');
    const cases: [string, Uint8Array][] = [
      ['JSON sent with the protobuf type', Buffer.from('{"kind":"Namespace"}')],
      ['empty', Buffer.alloc(0)],
      ['prefix only', PROTOBUF_MAGIC],
      ['no kind', Buffer.concat([PROTOBUF_MAGIC, encodeMessage('Unknown', { raw: Buffer.alloc(0) })])],
      ['truncated', good.subarray(0, good.length - 20)],
      ['name as a varint', envelope('v1', 'Namespace', Buffer.from([0x0a, 0x02, 0x08, 0x01]))],
      ['inner length past its message', envelope('v1', 'Namespace', Buffer.from([0x0a, 0x02, 0x0a, 0x05, 0x61, 0x62, 0x63, 0x64, 0x65]))],
      ['__proto__ label', encode('v1', 'Namespace', 'Namespace', { metadata: { name: 'n', labels: { ['__proto__']: 'x' } } })],
    ];
    for (const [why, body] of cases) {
      assert.throws(() => decodeProtobufObject(body), BadRequestError, why);
    }
  });

  test('random bytes after the prefix never escape as anything but a 400 or 415', () => {
    let seed = 42;
    const random = () => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed & 0xff;
    };
    const good = captured('deployment');
    for (let i = 0; i < 2000; i++) {
      const body = Buffer.from(good);
      for (let j = 0; j < 3; j++) body[4 + ((random() * 7 + random()) % (body.length - 4))] = random();
      try {
        decodeProtobufObject(body);
      } catch (err) {
        assert.ok(err instanceof BadRequestError || err instanceof UnsupportedMediaTypeError, String(err));
      }
    }
  });

  test('isProtobufContentType reads the media type only', () => {
    assert.equal(isProtobufContentType('application/vnd.kubernetes.protobuf'), true);
    assert.equal(isProtobufContentType('Application/Vnd.Kubernetes.Protobuf; charset=binary'), true);
    assert.equal(isProtobufContentType('application/json'), false);
    assert.equal(isProtobufContentType(undefined), false);
  });
});
