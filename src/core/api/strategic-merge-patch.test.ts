// Strategic merge patch: the patches kubectl patch, set image, apply and edit send, against Kubernetes' patch metadata.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { BadRequestError } from '../errors.js';
import { podPatchMeta, workloadPatchMeta } from './patch-meta.js';
import { applyStrategicMergePatch } from './strategic-merge-patch.js';

const web = {
  name: 'web',
  image: 'nginx:1',
  command: ['nginx', '-g', 'daemon off;'],
  ports: [{ containerPort: 80, name: 'http' }],
  env: [
    { name: 'A', value: '1' },
    { name: 'B', value: '2' },
  ],
  readinessProbe: { httpGet: { path: '/', port: 80 } },
};
const sidecar = { name: 'log', image: 'busybox', args: ['tail', '-f', '/dev/null'] };
const deployment = {
  metadata: { name: 'd', finalizers: ['a.io/x'] },
  spec: {
    replicas: 2,
    template: {
      metadata: { labels: { app: 'd' } },
      spec: { containers: [web, sidecar], volumes: [{ name: 'data', emptyDir: {} }], tolerations: [{ key: 'k', operator: 'Exists' }] },
    },
  },
};
const meta = workloadPatchMeta();
const containersOf = (o: unknown) => (o as typeof deployment).spec.template.spec.containers as Record<string, unknown>[];
const patchPodSpec = (spec: Record<string, unknown>) => applyStrategicMergePatch(deployment, { spec: { template: { spec } } }, meta);

describe('applyStrategicMergePatch', () => {
  it('merges a container by name: kubectl patch (or set image) changes the image and keeps command, ports, probe and the other container', () => {
    const out = patchPodSpec({ containers: [{ name: 'web', image: 'nginx:2' }] });
    assert.deepEqual(containersOf(out), [{ ...web, image: 'nginx:2' }, sidecar]);
  });

  it('merges ports by containerPort and env by name, a null deleting a key', () => {
    const out = patchPodSpec({
      containers: [
        {
          name: 'web',
          ports: [{ containerPort: 443, name: 'https' }],
          env: [{ name: 'B', value: null, valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } }],
        },
      ],
    });
    const c = containersOf(out)[0]!;
    assert.deepEqual(c.ports, [
      { containerPort: 80, name: 'http' },
      { containerPort: 443, name: 'https' },
    ]);
    assert.deepEqual(c.env, [
      { name: 'A', value: '1' },
      { name: 'B', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } },
    ]);
  });

  it('adds a new container at the end and deletes one with $patch: delete', () => {
    const added = patchPodSpec({ containers: [{ name: 'extra', image: 'busybox' }] });
    assert.deepEqual(
      containersOf(added).map((c) => c.name),
      ['web', 'log', 'extra'],
    );
    const removed = patchPodSpec({ containers: [{ name: 'log', $patch: 'delete' }] });
    assert.deepEqual(containersOf(removed), [web]);
  });

  it('replaces the whole list when an element says $patch: replace', () => {
    const out = patchPodSpec({ containers: [{ $patch: 'replace' }, { name: 'only', image: 'busybox' }] });
    assert.deepEqual(containersOf(out), [{ name: 'only', image: 'busybox' }]);
  });

  it('orders by $setElementOrder as kubectl apply sends it, without storing the directive', () => {
    const out = patchPodSpec({
      '$setElementOrder/containers': [{ name: 'log' }, { name: 'web' }],
      containers: [{ name: 'web', image: 'nginx:3' }],
    }) as typeof deployment;
    assert.deepEqual(
      containersOf(out).map((c) => [c.name, c.image]),
      [
        ['log', 'busybox'],
        ['web', 'nginx:3'],
      ],
    );
    assert.equal(JSON.stringify(out).includes('$setElementOrder'), false);
  });

  it('replaces lists without a merge strategy (tolerations, args), as a JSON merge patch would', () => {
    const out = patchPodSpec({ tolerations: [{ key: 'other', operator: 'Exists' }], containers: [{ name: 'log', args: ['sleep', '1'] }] }) as typeof deployment;
    assert.deepEqual(out.spec.template.spec.tolerations, [{ key: 'other', operator: 'Exists' }]);
    assert.deepEqual(containersOf(out)[1]!.args, ['sleep', '1']);
  });

  it("clears a volume's other source with $retainKeys", () => {
    const out = patchPodSpec({ volumes: [{ name: 'data', hostPath: { path: '/srv' }, $retainKeys: ['name', 'hostPath'] }] }) as typeof deployment;
    assert.deepEqual(out.spec.template.spec.volumes, [{ name: 'data', hostPath: { path: '/srv' } }]);
  });

  it('merges finalizers as a set, and removes with $deleteFromPrimitiveList', () => {
    const added = applyStrategicMergePatch(deployment, { metadata: { finalizers: ['a.io/x', 'b.io/y'] } }, meta) as typeof deployment;
    assert.deepEqual(added.metadata.finalizers, ['a.io/x', 'b.io/y']);
    const removed = applyStrategicMergePatch(added, { metadata: { '$deleteFromPrimitiveList/finalizers': ['a.io/x'] } }, meta) as typeof deployment;
    assert.deepEqual(removed.metadata.finalizers, ['b.io/y']);
  });

  it('replaces a map with $patch: replace and merges pod status conditions by type', () => {
    const replaced = applyStrategicMergePatch(
      deployment,
      { spec: { template: { metadata: { $patch: 'replace', labels: { app: 'e' } } } } },
      meta,
    ) as typeof deployment;
    assert.deepEqual(replaced.spec.template.metadata, { labels: { app: 'e' } });
    const pod = {
      status: {
        conditions: [
          { type: 'Ready', status: 'False' },
          { type: 'PodScheduled', status: 'True' },
        ],
      },
    };
    const ready = applyStrategicMergePatch(pod, { status: { conditions: [{ type: 'Ready', status: 'True' }] } }, podPatchMeta) as typeof pod;
    assert.deepEqual(ready.status.conditions, [
      { type: 'Ready', status: 'True' },
      { type: 'PodScheduled', status: 'True' },
    ]);
  });

  it('leaves its inputs unchanged', () => {
    const before = JSON.stringify(deployment);
    patchPodSpec({ containers: [{ name: 'web', image: 'x' }], '$setElementOrder/containers': [{ name: 'log' }, { name: 'web' }] });
    assert.equal(JSON.stringify(deployment), before);
  });

  it('answers a malformed patch with a 400 that says what is wrong', () => {
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ containers: [{ image: 'x' }] }, /an element of a list merged by "name" has no "name"/],
      [{ containers: [{ name: 'web', $patch: 'explode' }] }, /unknown \$patch value "explode" in a list element/],
      [{ $patch: 'explode' }, /unknown \$patch value "explode" in a map/],
      [{ '$setElementOrder/containers': 'web' }, /\$setElementOrder\/containers must be a list/],
      [{ volumes: [{ name: 'data', hostPath: { path: '/x' }, $retainKeys: ['name'] }] }, /\$retainKeys does not list "hostPath"/],
    ];
    for (const [spec, message] of cases) {
      assert.throws(
        () => patchPodSpec(spec),
        (err: unknown) => err instanceof BadRequestError && message.test(err.message),
        JSON.stringify(spec),
      );
    }
  });
});
