// Server-side apply over HTTP: fieldManager required, create on apply (201), managedFields on every write, conflicts (409 with causes), force, fields dropped from the applied configuration, dryRun.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MemoryStore } from '../../core/store/memory-store.js';
import { ADMIN_USER, TokenAuthenticator } from './auth.js';
import { startApiServer, type RunningApiServer } from './server.js';

const TOKEN = 'ssa-admin';
const DEPLOYS = '/apis/apps/v1/namespaces/default/deployments';
const APPLY = 'application/apply-patch+yaml';

interface Entry {
  manager: string;
  operation: string;
  apiVersion: string;
  time: string;
  fieldsType: string;
  fieldsV1: Record<string, unknown>;
}
interface Answer {
  message?: string;
  reason?: string;
  details?: { causes?: { reason: string; message: string; field: string }[] };
  metadata: { name: string; labels?: Record<string, string>; managedFields?: Entry[] };
  spec: { replicas?: number; template: { spec: { containers: { name: string; image: string; args?: string[] }[] } } };
}

function deployYaml(options: { replicas?: number; labels?: string; image?: string; sidecar?: boolean } = {}): string {
  return [
    'apiVersion: apps/v1',
    'kind: Deployment',
    'metadata:',
    '  name: web',
    ...(options.labels ? ['  labels:', `    ${options.labels}`] : []),
    'spec:',
    ...(options.replicas !== undefined ? [`  replicas: ${options.replicas}`] : []),
    '  selector: {matchLabels: {app: web}}',
    '  template:',
    '    metadata: {labels: {app: web}}',
    '    spec:',
    '      containers:',
    `      - {name: app, image: ${options.image ?? 'nginx'}}`,
    ...(options.sidecar ? ['      - {name: side, image: busybox}'] : []),
    '',
  ].join('\n');
}

describe('server-side apply', () => {
  const store = new MemoryStore();
  const ac = new AbortController();
  let server: RunningApiServer;
  const call = async (method: string, path: string, body?: string, contentType = 'application/json', userAgent = 'test-client/1.0') => {
    const res = await fetch(`http://127.0.0.1:${server.port}${path}`, {
      method,
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': contentType, 'user-agent': userAgent },
      ...(body === undefined ? {} : { body }),
    });
    return { status: res.status, body: (await res.json()) as Answer };
  };
  const apply = (yaml: string, query: string) => call('PATCH', `${DEPLOYS}/web?${query}`, yaml, APPLY);
  const managers = (a: Answer) => (a.metadata.managedFields ?? []).map((e) => `${e.manager}:${e.operation}`);

  before(async () => {
    const authenticator = new TokenAuthenticator();
    authenticator.add(TOKEN, ADMIN_USER);
    server = await startApiServer({ store, authenticator, address: '127.0.0.1', port: 0, signal: ac.signal });
  });
  after(async () => {
    ac.abort();
    await server.closed;
  });

  it('requires a field manager, worded as kube-apiserver words it', async () => {
    const res = await apply(deployYaml(), '');
    assert.equal(res.status, 400);
    assert.equal(res.body.message, 'PATCH, application/apply-patch+yaml requires fieldManager to be specified');
  });

  it('dryRun=All applies nothing: the would-be object comes back and no object is made', async () => {
    const res = await apply(deployYaml({ replicas: 2 }), 'fieldManager=alice&dryRun=All');
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assert.equal(res.body.spec.replicas, 2);
    assert.equal((await call('GET', `${DEPLOYS}/web`)).status, 404);
  });

  it('creates a missing object (201) owned by the applier, in FieldsV1', async () => {
    const res = await apply(deployYaml({ replicas: 2, labels: 'team: a' }), 'fieldManager=alice');
    assert.equal(res.status, 201, JSON.stringify(res.body));
    const [entry] = res.body.metadata.managedFields!;
    assert.equal(entry!.manager, 'alice');
    assert.equal(entry!.operation, 'Apply');
    assert.equal(entry!.apiVersion, 'apps/v1');
    assert.equal(entry!.fieldsType, 'FieldsV1');
    const fields = entry!.fieldsV1 as { 'f:metadata': unknown; 'f:spec': Record<string, Record<string, unknown>> };
    assert.deepEqual(fields['f:metadata'], { 'f:labels': { '.': {}, 'f:team': {} } });
    assert.deepEqual(fields['f:spec']['f:replicas'], {});
    const template = fields['f:spec']['f:template'] as { 'f:spec': { 'f:containers': Record<string, unknown> } };
    assert.deepEqual(template['f:spec']['f:containers'], { 'k:{"name":"app"}': { '.': {}, 'f:image': {}, 'f:name': {} } });
  });

  it('records other writes as Update by their manager: fieldManager, else the user agent', async () => {
    const scaled = await call('PATCH', `${DEPLOYS}/web`, JSON.stringify({ spec: { replicas: 3 } }), 'application/merge-patch+json', 'kubectl-scale/v1.32');
    assert.equal(scaled.status, 200, JSON.stringify(scaled.body));
    assert.deepEqual(managers(scaled.body), ['alice:Apply', 'kubectl-scale:Update']);
    // The scaler took .spec.replicas from alice.
    const scaler = scaled.body.metadata.managedFields![1]!;
    assert.deepEqual(scaler.fieldsV1, { 'f:spec': { 'f:replicas': {} } });
    assert.equal((scaled.body.metadata.managedFields![0]!.fieldsV1 as Record<string, Record<string, unknown>>)['f:spec']!['f:replicas'], undefined);
  });

  it('answers 409 naming the field and its manager when an apply would change what another manager owns', async () => {
    const res = await apply(deployYaml({ replicas: 5, labels: 'team: a' }), 'fieldManager=alice');
    assert.equal(res.status, 409, JSON.stringify(res.body));
    assert.equal(res.body.reason, 'Conflict');
    assert.equal(res.body.message, 'Apply failed with 1 conflict: conflict with "kubectl-scale" using apps/v1: .spec.replicas');
    assert.deepEqual(res.body.details?.causes, [
      { reason: 'FieldManagerConflict', message: 'conflict with "kubectl-scale" using apps/v1', field: '.spec.replicas' },
    ]);
    assert.equal((await call('GET', `${DEPLOYS}/web`)).body.spec.replicas, 3);
  });

  it('shares a field applied with the value it has, without a conflict', async () => {
    const res = await apply(deployYaml({ replicas: 3, labels: 'team: a' }), 'fieldManager=alice');
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(managers(res.body), ['alice:Apply', 'kubectl-scale:Update']);
  });

  it('force=true takes the field over', async () => {
    const res = await apply(deployYaml({ replicas: 6, labels: 'team: a' }), 'fieldManager=alice&force=true');
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.spec.replicas, 6);
    // The scaler owned only replicas: its entry is gone.
    assert.deepEqual(managers(res.body), ['alice:Apply']);
  });

  it('removes fields the applier set before and now leaves out, and merges containers by name', async () => {
    const withSide = await apply(deployYaml({ replicas: 6, labels: 'team: a', sidecar: true }), 'fieldManager=alice');
    assert.deepEqual(
      withSide.body.spec.template.spec.containers.map((c) => c.name),
      ['app', 'side'],
    );
    const res = await apply(deployYaml({ replicas: 6 }), 'fieldManager=alice');
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.metadata.labels, undefined);
    assert.deepEqual(
      res.body.spec.template.spec.containers.map((c) => c.name),
      ['app'],
    );
  });

  it('keeps a dropped field another manager also owns', async () => {
    await call('PATCH', `${DEPLOYS}/web?fieldManager=bob`, JSON.stringify({ metadata: { labels: { env: 'prod' } } }), 'application/merge-patch+json');
    await apply(deployYaml({ replicas: 6, labels: 'env: prod' }), 'fieldManager=alice');
    const res = await apply(deployYaml({ replicas: 6 }), 'fieldManager=alice');
    assert.deepEqual(res.body.metadata.labels, { env: 'prod' });
  });

  it('a second applier merging its own container keeps the first one', async () => {
    const carol = [
      'apiVersion: apps/v1',
      'kind: Deployment',
      'metadata: {name: web}',
      'spec:',
      '  template:',
      '    spec:',
      '      containers:',
      '      - {name: extra, image: redis}',
    ].join('\n');
    const res = await apply(carol, 'fieldManager=carol');
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(
      res.body.spec.template.spec.containers.map((c) => c.name),
      ['app', 'extra'],
    );
  });

  it('an apply that changes nothing writes nothing', async () => {
    const first = await call('GET', `${DEPLOYS}/web`);
    const again = await apply(deployYaml({ replicas: 6 }), 'fieldManager=alice');
    assert.equal(again.status, 200);
    assert.equal((again.body.metadata as { resourceVersion?: string }).resourceVersion, (first.body.metadata as { resourceVersion?: string }).resourceVersion);
  });

  it('refuses a body that is not YAML and force on other patches', async () => {
    assert.equal((await apply('a: [', 'fieldManager=alice')).status, 400);
    const res = await call('PATCH', `${DEPLOYS}/web?force=true`, '{}', 'application/merge-patch+json');
    assert.equal(res.status, 400);
  });
});
