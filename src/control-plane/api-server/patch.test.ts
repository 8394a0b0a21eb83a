// PATCH types over HTTP against a real API server on a memory store: strategic merge keeps what kubectl patch leaves out, JSON patch applies or refuses whole, unknown types are 415.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { BadRequestError, InvalidError, UnsupportedMediaTypeError } from '../../core/errors.js';
import { MemoryStore } from '../../core/store/memory-store.js';
import { ADMIN_USER, TokenAuthenticator } from './auth.js';
import { applyPatch, parsePatchBody, patchTypeOf } from './patch.js';
import { startApiServer, type RunningApiServer } from './server.js';

const TOKEN = 'patch-test-admin';
const DEPLOYMENTS = '/apis/apps/v1/namespaces/default/deployments';

const deployment = {
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'web', labels: { app: 'web' } },
  spec: {
    replicas: 1,
    selector: { matchLabels: { app: 'web' } },
    template: {
      metadata: { labels: { app: 'web' } },
      spec: {
        containers: [
          {
            name: 'web',
            image: 'nginx:1',
            command: ['nginx', '-g', 'daemon off;'],
            ports: [{ containerPort: 80 }],
            readinessProbe: { httpGet: { path: '/', port: 80 } },
          },
        ],
      },
    },
  },
};

type Container = { name: string; image: string; command?: string[]; ports?: unknown[]; readinessProbe?: unknown };
const containers = (d: unknown) => (d as typeof deployment).spec.template.spec.containers as Container[];

describe('PATCH types', () => {
  let server: RunningApiServer;
  const ac = new AbortController();
  const call = async (method: string, path: string, body: unknown, contentType = 'application/json') => {
    const res = await fetch(`http://127.0.0.1:${server.port}${path}`, {
      method,
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': contentType },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };
  const patch = (body: unknown, contentType: string) => call('PATCH', `${DEPLOYMENTS}/web`, body, contentType);

  before(async () => {
    const authenticator = new TokenAuthenticator();
    authenticator.add(TOKEN, ADMIN_USER);
    server = await startApiServer({ store: new MemoryStore(), authenticator, address: '127.0.0.1', port: 0, signal: ac.signal });
    assert.equal((await call('POST', DEPLOYMENTS, deployment)).status, 201);
  });
  after(async () => {
    ac.abort();
    await server.closed;
  });

  it('applies a strategic merge patch by container name: the image changes, command, ports and probe stay', async () => {
    const res = await patch({ spec: { template: { spec: { containers: [{ name: 'web', image: 'nginx:2' }] } } } }, 'application/strategic-merge-patch+json');
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const [web] = containers(res.body);
    assert.equal(web!.image, 'nginx:2');
    assert.deepEqual(web!.command, ['nginx', '-g', 'daemon off;']);
    assert.deepEqual(web!.ports, [{ containerPort: 80, protocol: 'TCP' }]);
    assert.ok(web!.readinessProbe);
  });

  it("takes kubectl apply's $setElementOrder without storing it", async () => {
    const res = await patch(
      {
        spec: {
          template: {
            spec: { '$setElementOrder/containers': [{ name: 'web' }, { name: 'log' }], containers: [{ name: 'log', image: 'busybox' }] },
          },
        },
      },
      'application/strategic-merge-patch+json',
    );
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(
      containers(res.body).map((c) => c.name),
      ['web', 'log'],
    );
    assert.equal(JSON.stringify(res.body).includes('$setElementOrder'), false);
  });

  it('applies a JSON patch, and refuses one whose test fails without writing anything', async () => {
    const res = await patch([{ op: 'replace', path: '/spec/template/spec/containers/0/image', value: 'nginx:3' }], 'application/json-patch+json');
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(containers(res.body)[0]!.image, 'nginx:3');
    const failed = await patch(
      [
        { op: 'replace', path: '/spec/replicas', value: 5 },
        { op: 'test', path: '/spec/template/spec/containers/0/image', value: 'nginx:1' },
      ],
      'application/json-patch+json',
    );
    assert.equal(failed.status, 422);
    assert.equal(failed.body.reason, 'Invalid');
    assert.match(String(failed.body.message), /^the server rejected our request due to an error in our request: /);
    const now = await call('GET', `${DEPLOYMENTS}/web`, undefined);
    assert.equal((now.body as typeof deployment).spec.replicas, 1);
  });

  it('answers a malformed JSON patch with 400 and an unknown patch type with 415', async () => {
    const bad = await patch([{ op: 'frobnicate', path: '/spec' }], 'application/json-patch+json');
    assert.equal(bad.status, 400);
    assert.match(String(bad.body.message), /^invalid JSON patch: /);
    const notArray = await patch({ spec: {} }, 'application/json-patch+json');
    assert.equal(notArray.status, 400);
    assert.equal(notArray.body.message, 'a JSON patch must be a JSON array of operations');
    // application/apply-patch+yaml is served now (server-side-apply.test.ts); a type no one serves is still 415.
    const yaml = await patch('spec: {}', 'application/yaml');
    assert.equal(yaml.status, 415);
    assert.equal(yaml.body.reason, 'UnsupportedMediaType');
  });
});

describe('patch helpers', () => {
  it('reads the patch type from the content type, parameters ignored', () => {
    assert.equal(patchTypeOf('application/strategic-merge-patch+json; charset=utf-8'), 'strategic');
    assert.equal(patchTypeOf('application/json-patch+json'), 'json');
    assert.equal(patchTypeOf('application/merge-patch+json'), 'merge');
    assert.throws(() => patchTypeOf('text/plain'), UnsupportedMediaTypeError);
  });

  it('parses bodies by type', () => {
    assert.deepEqual(parsePatchBody('[]', 'json'), []);
    assert.throws(() => parsePatchBody('[]', 'merge'), BadRequestError);
    assert.throws(() => parsePatchBody('{"__proto__":{"x":1}}', 'merge'), BadRequestError);
  });

  it('refuses JSON patch paths through __proto__ rather than touching the prototype', () => {
    assert.throws(() => applyPatch({}, 'json', { a: {} }, [{ op: 'add', path: '/__proto__/polluted', value: true }]), InvalidError);
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
  });
});
