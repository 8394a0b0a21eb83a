// CustomResourceDefinitions on a real TLS master: the lifecycle (Established, CRUD and watch of the custom kind, deletion removes its objects), validation wording, printer columns in minik8s get and stock kubectl, status and scale subresources.
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { crdKind } from '../src/core/api/crd.js';
import { ApiClient } from '../src/core/client/api-client.js';
import { waitFor } from '../src/core/wait-for.js';
import { BINARY, startMaster, type MasterProcess } from './helpers/master.js';

const HAS_KUBECTL = spawnSync('kubectl', ['version', '--client', '-o', 'json'], { encoding: 'utf8' }).status === 0;

type Run = { code: number; stdout: string; stderr: string };

function run(file: string, args: string[], env: NodeJS.ProcessEnv): Promise<Run> {
  return new Promise((resolve) => {
    execFile(file, args, { env, timeout: 60_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr });
    });
  });
}

const CRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.crdtest.example.com
spec:
  group: crdtest.example.com
  names:
    plural: widgets
    singular: widget
    kind: Widget
    shortNames: [wdg]
    categories: [gadgets]
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    subresources:
      status: {}
      scale:
        specReplicasPath: .spec.replicas
        statusReplicasPath: .status.replicas
    additionalPrinterColumns:
    - name: Replicas
      type: integer
      jsonPath: .spec.replicas
    - name: Color
      type: string
      jsonPath: .spec.color
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            required: [color]
            properties:
              replicas: {type: integer, minimum: 0, default: 1}
              color: {type: string, enum: [red, blue]}
              label: {type: string, pattern: '^[a-z]+$', maxLength: 8}
              port: {x-kubernetes-int-or-string: true}
              extra: {type: object, x-kubernetes-preserve-unknown-fields: true}
          status:
            type: object
            properties:
              replicas: {type: integer}
`;

const widget = (name: string, spec: string) => `apiVersion: crdtest.example.com/v1
kind: Widget
metadata:
  name: ${name}
  namespace: default
spec:
${spec}
`;

describe('custom resources', () => {
  let master: MasterProcess;
  let client: ApiClient;
  let dir: string;
  const minik8s = (args: string[]) => run(process.execPath, [BINARY, ...args], master.env);
  const kubectl = (args: string[]) => run('kubectl', ['--kubeconfig', master.kubeconfig!, ...args], { ...process.env, HOME: master.home });
  const file = (name: string, text: string) => {
    const path = join(dir, name);
    writeFileSync(path, text);
    return path;
  };

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'minik8s-crd-'));
    master = await startMaster({ tls: true, registry: false });
    client = new ApiClient({ server: master.url, token: master.token, tls: { ca: master.ca! } });
    const applied = await minik8s(['apply', '-f', file('crd.yaml', CRD)]);
    assert.equal(applied.code, 0, applied.stderr);
    await waitFor(
      async () => {
        const crd = (await client.get(crdKind, { name: 'widgets.crdtest.example.com' })) as { status?: { conditions?: { type: string; status: string }[] } };
        return crd.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True');
      },
      { timeoutMs: 20_000 },
    );
  });
  after(async () => {
    await master?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  test('the CRD is Established with its names accepted, and discovery lists the kind', async () => {
    const crd = (await client.get(crdKind, { name: 'widgets.crdtest.example.com' })) as {
      metadata: { finalizers?: string[] };
      status: { conditions: { type: string; status: string; reason: string }[]; acceptedNames: { kind: string }; storedVersions: string[] };
    };
    assert.deepEqual(
      crd.status.conditions.map((c) => [c.type, c.status, c.reason]),
      [
        ['NamesAccepted', 'True', 'NoConflicts'],
        ['Established', 'True', 'InitialNamesAccepted'],
      ],
    );
    assert.equal(crd.status.acceptedNames.kind, 'Widget');
    assert.deepEqual(crd.status.storedVersions, ['v1']);
    assert.deepEqual(crd.metadata.finalizers, ['customresourcecleanup.apiextensions.k8s.io']);
    const list = (await client.request('GET', '/apis/crdtest.example.com/v1')) as {
      resources: { name: string; shortNames?: string[]; categories?: string[] }[];
    };
    const names = list.resources.map((r) => r.name).sort();
    assert.deepEqual(names, ['widgets', 'widgets/scale', 'widgets/status']);
    const main = list.resources.find((r) => r.name === 'widgets')!;
    assert.deepEqual(main.shortNames, ['wdg']);
    assert.deepEqual(main.categories, ['gadgets']);
  });

  test('minik8s creates, lists with the printer columns, and refuses a bad object with Kubernetes wording', async () => {
    const ok = await minik8s(['apply', '-f', file('w1.yaml', widget('w1', '  color: red\n  port: http'))]);
    assert.equal(ok.code, 0, ok.stderr);
    assert.match(ok.stdout, /widget.crdtest.example.com\/w1 created/);
    const got = await minik8s(['get', 'wdg']);
    assert.equal(got.code, 0, got.stderr);
    assert.match(got.stdout, /^NAME\s+REPLICAS\s+COLOR\s+AGE\n/);
    assert.match(got.stdout, /\nw1\s+1\s+red\s+\d+s\n/);
    const bad = await minik8s(['apply', '-f', file('bad.yaml', widget('bad', '  color: green\n  replicas: "two"\n  label: ABC'))]);
    assert.notEqual(bad.code, 0);
    assert.match(bad.stderr, /Widget.crdtest.example.com "bad" is invalid|Widget "bad" is invalid/);
    assert.match(bad.stderr, /spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string"/);
    assert.match(bad.stderr, /spec.color: Unsupported value: "green": supported values: "red", "blue"/);
    assert.match(bad.stderr, /spec.label: Invalid value: "ABC": spec.label in body should match '\^\[a-z\]\+\$'/);
    const unknown = await minik8s(['apply', '-f', file('unknown.yaml', widget('unk', '  color: red\n  colour: red'))]);
    assert.notEqual(unknown.code, 0);
    assert.match(unknown.stderr, /unknown field "spec.colour"/);
  });

  test('stock kubectl gets, applies and deletes the custom kind, with the printer columns', {
    skip: HAS_KUBECTL ? false : 'kubectl is not on PATH',
  }, async () => {
    const applied = await kubectl(['apply', '-f', file('w2.yaml', widget('w2', '  color: blue\n  replicas: 3\n  extra: {anything: [1, 2]}'))]);
    assert.equal(applied.code, 0, applied.stderr);
    const got = await kubectl(['get', 'widgets', '-n', 'default']);
    assert.equal(got.code, 0, got.stderr);
    assert.match(got.stdout, /^NAME\s+REPLICAS\s+COLOR\s+AGE\n/);
    assert.match(got.stdout, /\nw2\s+3\s+blue\s+\S+\n/);
    const yaml = await kubectl(['get', 'wdg', 'w2', '-o', 'jsonpath={.spec.extra.anything[1]}']);
    assert.equal(yaml.stdout, '2');
    const category = await kubectl(['get', 'gadgets', '-n', 'default', '-o', 'name']);
    assert.equal(category.code, 0, category.stderr);
    assert.match(category.stdout, /widget.crdtest.example.com\/w2/);
    const scaled = await kubectl(['scale', 'widget/w2', '--replicas=5', '-n', 'default']);
    assert.equal(scaled.code, 0, scaled.stderr);
    const after = await kubectl(['get', 'widget', 'w2', '-n', 'default', '-o', 'jsonpath={.spec.replicas}']);
    assert.equal(after.stdout, '5');
    const deleted = await kubectl(['delete', '-f', join(dir, 'w2.yaml')]);
    assert.equal(deleted.code, 0, deleted.stderr);
  });

  test('the status subresource: main writes ignore status, /status writes only status', async () => {
    const def = { ...crdKind, group: 'crdtest.example.com', version: 'v1', resource: 'widgets', kind: 'Widget', namespaced: true };
    const created = await client.create(def, {
      apiVersion: 'crdtest.example.com/v1',
      kind: 'Widget',
      metadata: { name: 'w3', namespace: 'default' },
      spec: { color: 'red' },
      status: { replicas: 9 },
    });
    assert.equal((created as { status?: unknown }).status, undefined);
    assert.equal((created as { spec: { replicas: number } }).spec.replicas, 1, 'the default is applied');
    const withStatus = await client.patch(
      def,
      { namespace: 'default', name: 'w3' },
      { status: { replicas: 2 }, spec: { replicas: 7 } },
      { subresource: 'status' },
    );
    assert.deepEqual((withStatus as { status: unknown }).status, { replicas: 2 });
    assert.equal((withStatus as { spec: { replicas: number } }).spec.replicas, 1);
    const scale = (await client.request('GET', '/apis/crdtest.example.com/v1/namespaces/default/widgets/w3/scale')) as {
      kind: string;
      spec: { replicas: number };
      status: { replicas: number };
    };
    assert.equal(scale.kind, 'Scale');
    assert.deepEqual([scale.spec.replicas, scale.status.replicas], [1, 2]);
  });

  test('a watch sees the custom objects, and deleting the CRD deletes them and stops serving the kind', async () => {
    const def = { ...crdKind, group: 'crdtest.example.com', version: 'v1', resource: 'widgets', kind: 'Widget', namespaced: true };
    const controller = new AbortController();
    const seen: string[] = [];
    const watching = (async () => {
      for await (const ev of client.watch(def, { namespace: 'default', signal: controller.signal })) {
        seen.push(`${ev.type} ${(ev.object as { metadata: { name: string } }).metadata.name}`);
      }
    })().catch(() => {});
    await client.create(def, { apiVersion: 'crdtest.example.com/v1', kind: 'Widget', metadata: { name: 'w4', namespace: 'default' }, spec: { color: 'blue' } });
    await waitFor(() => seen.includes('ADDED w4'), { timeoutMs: 10_000 });
    const del = await minik8s(['delete', 'crd', 'widgets.crdtest.example.com']);
    assert.equal(
      del.code,
      0,
      `${del.stderr}\n${master
        .output()
        .split('\n')
        .filter((l) => /crd|customresource|widget/i.test(l))
        .join('\n')}`,
    );
    await waitFor(() => seen.includes('DELETED w4'), { timeoutMs: 20_000 });
    controller.abort();
    await watching;
    await waitFor(
      async () =>
        client.request('GET', '/apis/crdtest.example.com/v1/widgets').then(
          () => false,
          (err: { code?: number }) => err.code === 404,
        ),
      { timeoutMs: 20_000 },
    );
  });
});
