// Table-driven tests of planFunction: new versions built or reused, retries, the ReplicaSet of a built version, soft and hard handovers, rollback, history and status.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { BUILD_REQUEST_ANNOTATION, functionKind, type FunctionObject } from '../../core/api/function.js';
import { functionVersionKind, type FunctionVersion } from '../../core/api/function-version.js';
import type { ReplicaSet } from '../../core/api/replicaset.js';
import { validateObject } from '../../core/api/validate.js';
import { buildInputsHash } from '../../runtime/image-factory/build-context.js';
import { planFunction, replicaSetBody, VERSION_HISTORY_LIMIT, type FunctionAction, type FunctionInputs } from './function-plan.js';

const NOW = new Date('2026-01-01T00:00:00Z');
const TEMPLATE = 't'.repeat(64);

function fn(
  options: {
    code?: string;
    env?: Record<string, string>;
    strategy?: 'Soft' | 'Hard';
    minScale?: number;
    status?: Record<string, unknown>;
    request?: string;
    generation?: number;
  } = {},
): FunctionObject {
  const obj = validateObject(functionKind, {
    apiVersion: 'minik8s.io/v1',
    kind: 'Function',
    metadata: {
      name: 'hello',
      namespace: 'default',
      uid: 'fn-uid',
      generation: options.generation ?? 1,
      ...(options.request ? { annotations: { [BUILD_REQUEST_ANNOTATION]: options.request } } : {}),
    },
    spec: {
      code: { files: { 'handler.py': options.code ?? 'def handler(e, c):\n    return 1\n' } },
      ...(options.env ? { env: Object.entries(options.env).map(([name, value]) => ({ name, value })) } : {}),
      ...(options.strategy ? { updateStrategy: options.strategy } : {}),
      scaling: { minScale: options.minScale ?? 0 },
    },
  }) as FunctionObject;
  return options.status ? { ...obj, status: options.status } : obj;
}

function version(
  of: FunctionObject,
  n: number,
  status: FunctionVersion['status'] = {
    phase: 'Succeeded',
    image: `functions/default-hello@sha256:${String(n).repeat(64).slice(0, 64)}`,
    tag: `functions/default-hello:v${n}`,
  },
): FunctionVersion {
  return validateObject(functionVersionKind, {
    apiVersion: 'minik8s.io/v1',
    kind: 'FunctionVersion',
    metadata: {
      name: `hello-v${n}`,
      namespace: 'default',
      uid: `v${n}-uid`,
      ownerReferences: [{ apiVersion: 'minik8s.io/v1', kind: 'Function', name: 'hello', uid: 'fn-uid', controller: true }],
    },
    spec: { function: 'hello', version: n, template: of.spec, buildHash: buildInputsHash(of.spec, TEMPLATE) },
    status,
  }) as FunctionVersion;
}

function rs(of: FunctionObject, v: FunctionVersion, replicas: number, ready = 0): ReplicaSet {
  const body = replicaSetBody(of, v, replicas) as unknown as ReplicaSet;
  return { ...body, metadata: { ...body.metadata, uid: `rs${v.spec.version}`, resourceVersion: '1' }, status: { replicas: ready, readyReplicas: ready } };
}

function plan(f: FunctionObject, inputs: Partial<FunctionInputs> = {}) {
  return planFunction(f, {
    versions: [],
    replicaSets: [],
    building: new Set(),
    templateHash: TEMPLATE,
    url: 'http://10.0.0.1:8090/function/hello',
    now: NOW,
    ...inputs,
  });
}

function summaryOf(a: FunctionAction): string {
  switch (a.type) {
    case 'createVersion':
      return `createVersion ${(a.body.metadata as { name: string }).name} ${a.build ? 'build' : `reuse v${a.status.reusedFrom}`}`;
    case 'build':
      return `build ${a.version.metadata.name}`;
    case 'reuseImage':
      return `reuseImage ${a.version.metadata.name} from v${a.status.reusedFrom}`;
    case 'createReplicaSet':
      return `createReplicaSet ${(a.body.metadata as { name: string }).name} x${(a.body.spec as { replicas: number }).replicas}`;
    case 'scale':
      return `scale ${a.rs.metadata.name} to ${a.replicas}`;
    case 'deleteVersion':
      return `delete ${a.version.metadata.name}${a.rs ? ' with its replicaset' : ''}`;
  }
}

function summary(actions: readonly FunctionAction[]): string[] {
  return actions.map(summaryOf);
}

const v1Fn = fn();
const v2Fn = fn({ code: 'def handler(e, c):\n    return 2\n' });
const v1 = version(v1Fn, 1);
const v2 = version(v2Fn, 2);

describe('planFunction: versions', () => {
  const cases: { name: string; fn: FunctionObject; inputs?: Partial<FunctionInputs>; want: string[]; build?: Record<string, unknown> }[] = [
    {
      name: 'a new function makes version 1 and builds it',
      fn: fn({ request: 'r1' }),
      want: ['createVersion hello-v1 build'],
      build: { version: 1, phase: 'Building', step: 'queued', request: 'r1' },
    },
    {
      name: 'new code makes the next version',
      fn: fn({ code: 'x = 3\ndef handler(e, c):\n    return 3\n', status: { version: 2 } }),
      inputs: { versions: [v1, v2], replicaSets: [rs(v1Fn, v1, 0), rs(v2Fn, v2, 0)] },
      want: ['createVersion hello-v3 build'],
    },
    {
      name: 'new environment alone reuses the image of the version with the same build inputs',
      fn: fn({ env: { A: '1' }, status: { version: 1 } }),
      inputs: { versions: [v1], replicaSets: [rs(v1Fn, v1, 0)] },
      want: ['createVersion hello-v2 reuse v1'],
      build: { version: 2, phase: 'Succeeded', message: 'reused the image of version 1 (same code and requirements): no build' },
    },
    {
      name: 'a version still building here is left alone',
      fn: v1Fn,
      inputs: { versions: [version(v1Fn, 1, { phase: 'Building', step: '2/7 COPY' })], building: new Set(['hello-v1']) },
      want: [],
      build: { version: 1, phase: 'Building', step: '2/7 COPY' },
    },
    {
      name: 'a version left Building by a master restart is built again',
      fn: v1Fn,
      inputs: { versions: [version(v1Fn, 1, { phase: 'Building' })] },
      want: ['build hello-v1'],
    },
    { name: 'a version whose status was never written is built', fn: v1Fn, inputs: { versions: [version(v1Fn, 1, {})] }, want: ['build hello-v1'] },
    {
      name: 'a version whose status is not yet written, with its build started here, is left alone',
      fn: v1Fn,
      inputs: { versions: [version(v1Fn, 1, {})], building: new Set(['hello-v1']) },
      want: [],
      build: { version: 1, phase: 'Building', step: 'queued' },
    },
    {
      name: "a version whose status was never written takes an earlier version's image when it can",
      fn: fn({ env: { A: '1' }, status: { version: 1 } }),
      inputs: { versions: [v1, version(fn({ env: { A: '1' } }), 2, {})], replicaSets: [rs(v1Fn, v1, 0)] },
      want: ['reuseImage hello-v2 from v1', 'createReplicaSet hello-v2 x0'],
    },
    {
      name: 'a failed build stays failed for the same request',
      fn: fn({ request: 'r1' }),
      inputs: { versions: [version(v1Fn, 1, { phase: 'Failed', message: 'no index', request: 'r1' })] },
      want: [],
      build: { version: 1, phase: 'Failed', message: 'no index', request: 'r1' },
    },
    {
      name: 'a failed build is retried for a new request',
      fn: fn({ request: 'r2' }),
      inputs: { versions: [version(v1Fn, 1, { phase: 'Failed', message: 'no index', request: 'r1' })] },
      want: ['build hello-v1'],
      build: { version: 1, phase: 'Building', step: 'queued', request: 'r2' },
    },
    { name: 'a deleted function gets nothing', fn: { ...v1Fn, metadata: { ...v1Fn.metadata, deletionTimestamp: NOW.toISOString() } }, want: [] },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const p = plan(c.fn, c.inputs);
      assert.deepEqual(summary(p.actions), c.want);
      if (c.build) assert.deepEqual(p.status.build, c.build);
    });
  }

  it("records the version's spec, hash and owner, and the events that go with it", () => {
    const [a] = plan(fn({ request: 'r1' })).actions;
    assert.equal(a?.type, 'createVersion');
    if (a?.type !== 'createVersion') return;
    const body = validateObject(functionVersionKind, a.body) as FunctionVersion;
    assert.equal(body.spec.version, 1);
    assert.equal(body.spec.buildHash, buildInputsHash(v1Fn.spec, TEMPLATE));
    assert.equal(body.metadata.ownerReferences?.[0]?.uid, 'fn-uid');
    assert.deepEqual(body.metadata.labels, { 'minik8s.io/function': 'hello', 'minik8s.io/function-version': '1' });
    assert.deepEqual(
      a.events.map((e) => e.reason),
      ['VersionCreated', 'BuildStarted'],
    );
  });
});

describe('planFunction: ReplicaSets and handover', () => {
  const cases: { name: string; fn: FunctionObject; inputs: Partial<FunctionInputs>; want: string[]; version?: number }[] = [
    {
      name: 'the first built version gets its ReplicaSet at minScale',
      fn: fn({ minScale: 1 }),
      inputs: { versions: [v1] },
      want: ['createReplicaSet hello-v1 x1'],
      version: 1,
    },
    {
      name: 'nothing to do once it runs (the autoscaler owns its replicas)',
      fn: fn({ status: { version: 1 } }),
      inputs: { versions: [v1], replicaSets: [rs(v1Fn, v1, 3, 3)] },
      want: [],
      version: 1,
    },
    {
      name: "soft: the new version starts with the old one's pods, the old one waits",
      fn: fn({ code: v2Fn.spec.code.files!['handler.py'], status: { version: 1 } }),
      inputs: { versions: [v1, v2], replicaSets: [rs(v1Fn, v1, 3, 3)] },
      want: ['createReplicaSet hello-v2 x3'],
      version: 2,
    },
    {
      name: 'soft: the old version goes to 0 once the new one has a Ready pod',
      fn: fn({ code: v2Fn.spec.code.files!['handler.py'], status: { version: 2 } }),
      inputs: { versions: [v1, v2], replicaSets: [rs(v1Fn, v1, 3, 3), rs(v2Fn, v2, 3, 1)] },
      want: ['scale hello-v1 to 0'],
      version: 2,
    },
    {
      name: 'soft: not before',
      fn: fn({ code: v2Fn.spec.code.files!['handler.py'], status: { version: 2 } }),
      inputs: { versions: [v1, v2], replicaSets: [rs(v1Fn, v1, 3, 3), rs(v2Fn, v2, 3, 0)] },
      want: [],
      version: 2,
    },
    {
      name: 'soft: at once when the new version is at 0 pods (nothing would ever become Ready)',
      fn: fn({ code: v2Fn.spec.code.files!['handler.py'], status: { version: 2 } }),
      inputs: { versions: [v1, v2], replicaSets: [rs(v1Fn, v1, 1, 1), rs(v2Fn, v2, 0, 0)] },
      want: ['scale hello-v1 to 0'],
      version: 2,
    },
    {
      name: 'hard: the new version starts at minScale and the old one stops at once',
      fn: fn({ code: v2Fn.spec.code.files!['handler.py'], strategy: 'Hard', status: { version: 1 } }),
      inputs: { versions: [v1, v2], replicaSets: [rs(v1Fn, v1, 3, 3)] },
      want: ['createReplicaSet hello-v2 x0', 'scale hello-v1 to 0'],
      version: 2,
    },
    {
      name: 'while the new version builds, the old one keeps serving untouched',
      fn: fn({ code: v2Fn.spec.code.files!['handler.py'], strategy: 'Hard', status: { version: 1 } }),
      inputs: { versions: [v1, version(v2Fn, 2, { phase: 'Building' })], replicaSets: [rs(v1Fn, v1, 3, 3)], building: new Set(['hello-v2']) },
      want: [],
      version: 1,
    },
    {
      name: 'a failed new version leaves the old one serving',
      fn: fn({ code: v2Fn.spec.code.files!['handler.py'], status: { version: 1 } }),
      inputs: { versions: [v1, version(v2Fn, 2, { phase: 'Failed', message: 'x' })], replicaSets: [rs(v1Fn, v1, 3, 3)] },
      want: [],
      version: 1,
    },
    {
      name: 'rollback to a kept version: its ReplicaSet takes over the pods (soft)',
      fn: fn({ status: { version: 2 } }),
      inputs: { versions: [v1, v2], replicaSets: [rs(v1Fn, v1, 0, 0), rs(v2Fn, v2, 2, 2)] },
      want: ['scale hello-v1 to 2'],
      version: 1,
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const p = plan(c.fn, c.inputs);
      assert.deepEqual(summary(p.actions), c.want);
      assert.equal(p.status.version, c.version);
    });
  }

  it("makes the contract's pod: image, port 8080 named http, runtime environment, /healthz readiness, drain time", () => {
    const withEnv = fn({ env: { A: '1' } });
    const body = replicaSetBody(withEnv, version(withEnv, 1), 0) as ReplicaSet;
    const pod = body.spec.template.spec;
    const c = pod.containers[0];
    assert.equal(c.name, 'function');
    assert.equal(c.image, v1.status!.image);
    assert.deepEqual(c.ports, [{ name: 'http', containerPort: 8080, protocol: 'TCP' }]);
    assert.deepEqual(
      c.env?.map((e) => e.name),
      ['A', 'MINIK8S_FUNCTION_NAME', 'MINIK8S_FUNCTION_VERSION', 'MINIK8S_HANDLER'],
    );
    assert.ok(c.env?.some((e) => e.name === 'MINIK8S_FUNCTION_VERSION' && e.value === '1'));
    assert.deepEqual(c.readinessProbe, { httpGet: { path: '/healthz', port: 8080 }, periodSeconds: 1, timeoutSeconds: 1, failureThreshold: 3 });
    assert.ok((pod.terminationGracePeriodSeconds ?? 0) >= 60);
    assert.deepEqual(body.spec.selector.matchLabels, { 'minik8s.io/function': 'hello', 'minik8s.io/function-version': '1' });
    assert.equal(body.metadata.ownerReferences?.[0]?.controller, true);
  });
});

describe('planFunction: history and status', () => {
  it('deletes the oldest versions beyond the limit, never the serving one nor one with pods', () => {
    const many = Array.from({ length: VERSION_HISTORY_LIMIT + 3 }, (_, i) => version(fn({ code: `# ${i}\ndef handler(e, c):\n    return 0\n` }), i + 1));
    const serving = many[many.length - 1]!;
    const current = fn({ code: serving.spec.template.code.files!['handler.py'], status: { version: serving.spec.version } });
    const sets = many.map((v, i) => rs(current, v, i === 1 ? 1 : 0));
    sets[sets.length - 1] = rs(current, serving, 1, 1);
    // v2 still has a pod: it is scaled down (the serving version has a Ready one) but kept until it has none.
    assert.deepEqual(summary(plan(current, { versions: many, replicaSets: sets }).actions), ['scale hello-v2 to 0', 'delete hello-v1 with its replicaset']);
  });

  const conditions = (p: ReturnType<typeof plan>) => Object.fromEntries((p.status.conditions ?? []).map((c) => [c.type, `${c.status} ${c.reason}`]));

  it('says how the function stands in its conditions', () => {
    assert.deepEqual(conditions(plan(fn())), { Built: 'Unknown Building', Ready: 'False NoVersion' });
    assert.deepEqual(conditions(plan(fn(), { versions: [version(v1Fn, 1, { phase: 'Failed', message: 'x' })] })), {
      Built: 'False BuildFailed',
      Ready: 'False BuildFailed',
    });
    assert.deepEqual(conditions(plan(fn({ status: { version: 1 } }), { versions: [v1], replicaSets: [rs(v1Fn, v1, 0)] })), {
      Built: 'True BuildSucceeded',
      Ready: 'True ScaledToZero',
    });
    assert.deepEqual(conditions(plan(fn({ status: { version: 1 } }), { versions: [v1], replicaSets: [rs(v1Fn, v1, 2, 1)] })), {
      Built: 'True BuildSucceeded',
      Ready: 'True PodsReady',
    });
    assert.deepEqual(conditions(plan(fn({ status: { version: 1 } }), { versions: [v1], replicaSets: [rs(v1Fn, v1, 2, 0)] })), {
      Built: 'True BuildSucceeded',
      Ready: 'False PodsNotReady',
    });
  });

  it('reports version, image, url, pods and observed generation', () => {
    const p = plan(fn({ status: { version: 1 }, generation: 4 }), { versions: [v1], replicaSets: [rs(v1Fn, v1, 2, 1)] });
    assert.equal(p.status.observedGeneration, 4);
    assert.equal(p.status.image, v1.status!.image);
    assert.equal(p.status.url, 'http://10.0.0.1:8090/function/hello');
    assert.equal(p.status.replicas, 2);
    assert.equal(p.status.readyReplicas, 1);
  });

  it('is a fixed point: planning again on its own status writes nothing new', () => {
    const inputs: Partial<FunctionInputs>[] = [
      {},
      { versions: [v1], replicaSets: [rs(v1Fn, v1, 1, 1)] },
      { versions: [version(v1Fn, 1, { phase: 'Failed', message: 'x', request: 'r' })] },
      { versions: [version(v1Fn, 1, { phase: 'Building', step: '1/2 FROM' })], building: new Set(['hello-v1']) },
    ];
    for (const input of inputs) {
      const f = fn({ request: 'r' });
      const first = plan(f, input);
      const second = plan({ ...f, status: first.status }, { ...input, now: new Date(NOW.getTime() + 60_000) });
      assert.deepEqual(second.status, first.status);
    }
  });
});
