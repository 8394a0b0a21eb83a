// apply's create-or-patch step for plain objects and for the kinds whose bulky spec field stays out of the last-applied annotation (Function code, GpuJob program).
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { functionKind } from '../core/api/function.js';
import { gpuJobKind } from '../core/api/gpujob.js';
import { apiVersionOf, type KindDefinition } from '../core/api/kind.js';
import type { KubeObject } from '../core/api/meta.js';
import { podKind } from '../core/api/pod.js';
import { ApiClient } from '../core/client/api-client.js';
import { applyOne } from './apply.js';
import type { Manifest } from './manifests.js';
import { startTestApiServer, type TestApiServer } from './test-api-server.js';
import { LAST_APPLIED_ANNOTATION } from './three-way-patch.js';

type Json = Record<string, unknown>;

describe('applyOne', () => {
  let api: TestApiServer;
  let client: ApiClient;
  before(async () => {
    api = await startTestApiServer();
    client = new ApiClient({ server: api.url });
  });
  after(async () => {
    client.close();
    await api.close();
  });
  beforeEach(() => {
    api.objects.clear();
    api.requests.length = 0;
  });

  const manifest = (def: KindDefinition, spec: Json, name = 'x'): Manifest => ({
    def,
    object: { apiVersion: apiVersionOf(def), kind: def.kind, metadata: { name }, spec } as KubeObject,
    source: 'm.yaml',
  });
  const stored = () => [...api.objects.values()][0]!;
  const annotation = () => JSON.parse(((stored().metadata as Json).annotations as Json)[LAST_APPLIED_ANNOTATION] as string) as { spec: Json };
  const lastPatch = () => {
    const patch = api.requests.filter((r) => r.method === 'PATCH').at(-1);
    return patch && (JSON.parse(patch.body) as Json);
  };

  it('creates, reports unchanged, then patches a plain object', async () => {
    const pod = (image: string) => manifest(podKind, { containers: [{ name: 'c', image }] });
    assert.equal(await applyOne(client, pod('a'), 'default'), 'created');
    assert.equal((stored().metadata as Json).namespace, 'default');
    assert.equal(await applyOne(client, pod('a'), 'default'), 'unchanged');
    assert.equal(await applyOne(client, pod('b'), 'default'), 'configured');
    assert.deepEqual(lastPatch()!.spec, { containers: [{ name: 'c', image: 'b' }] });
  });

  it("keeps a Function's code out of the annotation and replaces it whole when it changes", async () => {
    const fn = (files: Json, target = 10) => manifest(functionKind, { runtime: 'python3.11', code: { files }, scaling: { target } });
    assert.equal(await applyOne(client, fn({ 'a.py': '1', 'b.py': '2' }), 'default'), 'created');
    assert.deepEqual((stored().spec as Json).code, { files: { 'a.py': '1', 'b.py': '2' } });
    assert.match(String((annotation().spec.code as Json).sha256), /^[0-9a-f]{64}$/);
    assert.equal(await applyOne(client, fn({ 'a.py': '1', 'b.py': '2' }), 'default'), 'unchanged');
    assert.equal(await applyOne(client, fn({ 'a.py': '3' }, 5), 'default'), 'configured');
    const patch = lastPatch()!;
    assert.deepEqual((patch.spec as Json).code, { files: { 'a.py': '3', 'b.py': null } });
    assert.deepEqual((patch.spec as Json).scaling, { target: 5 });
    assert.deepEqual((stored().spec as Json).code, { files: { 'a.py': '3' } });
  });

  it("keeps a GpuJob's program out of the annotation and sends a changed one whole", async () => {
    const job = (files: Json) => manifest(gpuJobKind, { cluster: 'hpc', program: { files } });
    assert.equal(await applyOne(client, job({ 'k.cu': '1' }), 'default'), 'created');
    assert.match(String((annotation().spec.program as Json).sha256), /^[0-9a-f]{64}$/);
    assert.equal(await applyOne(client, job({ 'k.cu': '1' }), 'default'), 'unchanged');
    assert.equal(await applyOne(client, job({ 'k.cu': '2' }), 'default'), 'configured');
    assert.deepEqual(lastPatch()!.spec, { program: { files: { 'k.cu': '2' } } });
  });

  it('refuses an object without a name, naming its kind and manifest', async () => {
    for (const def of [podKind, functionKind, gpuJobKind]) {
      await assert.rejects(applyOne(client, manifest(def, {}, ''), 'default'), {
        message: `error when retrieving current configuration of ${def.kind} from "m.yaml": resource name may not be empty`,
      });
    }
    assert.equal(api.requests.length, 0);
  });
});
