// Protobuf request bodies over HTTP: decoded and then validated as JSON is, answered in JSON; malformed 400, other kinds and status 415, node writes never judged on undecoded bytes.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { encodeEnvelope, encodeObject } from '../../core/api/protobuf/encode.js';
import { MemoryStore } from '../../core/store/memory-store.js';
import { ADMIN_USER, TokenAuthenticator } from './auth.js';
import { startApiServer, type RunningApiServer } from './server.js';

const ADMIN = 'protobuf-admin';
const NODE = 'protobuf-node';
const PROTOBUF = 'application/vnd.kubernetes.protobuf';

// kubectl v1.32's `create deployment d1 --image=busybox --replicas=2 --port=80`, as it sent it.
const KUBECTL_DEPLOYMENT = Buffer.from(
  '6b3873000a150a07617070732f7631120a4465706c6f796d656e7412b8010a1d0a02643112001a0022002a003200380042005a090a03617070120264311288010802120b0a090a03617070120264311a6f0a1b0a0012001a0022002a003200380042005a090a0361707012026431125012320a0762757379626f78120762757379626f782a00320a0a001000185022002a0042006a007200800100880100900100a201001a00320042004a0052005800600068008201008a01009a0100c2010022020a00280038001a0c0800100018002000280038001a002200',
  'hex',
);

interface Answer {
  kind?: string;
  code?: number;
  message?: string;
  metadata?: { name?: string };
  spec?: Record<string, unknown>;
  data?: Record<string, string>;
}

describe('protobuf request bodies', () => {
  const store = new MemoryStore();
  const ac = new AbortController();
  let server: RunningApiServer;
  const call = async (method: string, path: string, body?: Uint8Array | string, options: { contentType?: string; token?: string } = {}) => {
    const res = await fetch(`http://127.0.0.1:${server.port}${path}`, {
      method,
      headers: { authorization: `Bearer ${options.token ?? ADMIN}`, 'content-type': options.contentType ?? PROTOBUF },
      ...(body === undefined ? {} : { body: typeof body === 'string' ? body : Buffer.from(body) }),
    });
    return { status: res.status, type: res.headers.get('content-type'), body: (await res.json()) as Answer };
  };

  before(async () => {
    const authenticator = new TokenAuthenticator();
    authenticator.add(ADMIN, ADMIN_USER);
    authenticator.add(NODE, { name: 'system:node:n1', groups: ['system:nodes', 'system:authenticated'] });
    server = await startApiServer({ store, authenticator, address: '127.0.0.1', port: 0, signal: ac.signal });
  });
  after(async () => {
    ac.abort();
    await server.closed;
  });

  it('creates what kubectl sent, answering the stored object in JSON', async () => {
    const res = await call('POST', '/apis/apps/v1/namespaces/default/deployments', KUBECTL_DEPLOYMENT);
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assert.match(res.type ?? '', /^application\/json/);
    assert.equal(res.body.metadata?.name, 'd1');
    const stored = await call('GET', '/apis/apps/v1/namespaces/default/deployments/d1');
    const spec = stored.body.spec as { replicas: number; template: { spec: { containers: { image: string }[] } } };
    assert.equal(spec.replicas, 2);
    assert.equal(spec.template.spec.containers[0]?.image, 'busybox');
  });

  it('creates namespaces and secrets (bytes stored base64), and replaces with PUT', async () => {
    const ns = await call('POST', '/api/v1/namespaces', encodeObject('v1', 'Namespace', 'Namespace', { metadata: { name: 'pb' } }));
    assert.equal(ns.status, 201, JSON.stringify(ns.body));
    const secret = encodeObject('v1', 'Secret', 'Secret', { metadata: { name: 's' }, data: { key: Buffer.from([0xff, 0x00, 0x41]) } });
    const created = await call('POST', '/api/v1/namespaces/pb/secrets', secret);
    assert.equal(created.status, 201, JSON.stringify(created.body));
    assert.equal(created.body.data?.key, Buffer.from([0xff, 0x00, 0x41]).toString('base64'));
    const replaced = encodeObject('v1', 'Secret', 'Secret', { metadata: { name: 's', namespace: 'pb' }, data: { key: Buffer.from('new') } });
    const put = await call('PUT', '/api/v1/namespaces/pb/secrets/s', replaced);
    assert.equal(put.status, 200, JSON.stringify(put.body));
    assert.equal(put.body.data?.key, Buffer.from('new').toString('base64'));
  });

  it('validates the decoded object as it validates JSON: 422 for an invalid pod', async () => {
    const pod = encodeObject('v1', 'Pod', 'Pod', {
      metadata: { name: 'bad' },
      spec: { containers: [{ name: 'c', image: 'busybox' }], restartPolicy: 'Sometimes' },
    });
    const res = await call('POST', '/api/v1/namespaces/default/pods', pod);
    assert.equal(res.status, 422, JSON.stringify(res.body));
    assert.match(res.body.message ?? '', /restartPolicy/);
    assert.equal((await call('GET', '/api/v1/namespaces/default/pods/bad')).status, 404);
  });

  it('answers 400 for malformed protobuf, 415 for a kind it does not read (naming it), a status update or a protobuf patch', async () => {
    const garbage = await call('POST', '/api/v1/namespaces', Buffer.from('not protobuf'));
    assert.equal(garbage.status, 400);
    assert.match(garbage.body.message ?? '', /protobuf/);
    const role = await call('POST', '/api/v1/namespaces', encodeEnvelope('rbac.authorization.k8s.io/v1', 'Role', new Uint8Array(0)));
    assert.equal(role.status, 415);
    assert.match(role.body.message ?? '', /Role .*application\/json/);
    const status = await call('PUT', '/apis/apps/v1/namespaces/default/deployments/d1/status', KUBECTL_DEPLOYMENT);
    assert.equal(status.status, 415);
    const patch = await call('PATCH', '/apis/apps/v1/namespaces/default/deployments/d1', KUBECTL_DEPLOYMENT);
    assert.equal(patch.status, 415);
  });

  it("refuses a node's protobuf Node write before judging it: node restriction never sees bytes it cannot read", async () => {
    const node = encodeEnvelope('v1', 'Node', new Uint8Array(0));
    const create = await call('POST', '/api/v1/nodes', node, { token: NODE });
    assert.equal(create.status, 415, JSON.stringify(create.body));
    const update = await call('PUT', '/api/v1/nodes/n1/status', node, { token: NODE });
    assert.equal(update.status, 415, JSON.stringify(update.body));
    assert.equal((await call('GET', '/api/v1/nodes/n1')).status, 404);
    // The name a node may create is read from the decoded body, as from a JSON one.
    const other = encodeObject('v1', 'Namespace', 'Namespace', { metadata: { name: 'n2' } });
    const named = await call('POST', '/api/v1/nodes', other, { token: NODE });
    assert.equal(named.status, 403, JSON.stringify(named.body));
    assert.match(named.body.message ?? '', /"n2"/);
  });
});
