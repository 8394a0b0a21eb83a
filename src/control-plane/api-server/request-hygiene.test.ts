// Request hygiene over real HTTP: dot segments and bad escapes refused before routing, store failures as 503, preconditions, names, resourceVersions, generateName retries, Function archives at admission.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { gzipSync } from 'node:zlib';
import { pack } from 'tar-stream';
import { writeZip } from '../../../test/helpers/zip.js';
import { AlreadyExistsError, ServiceUnavailableError, type Status } from '../../core/errors.js';
import { MemoryStore } from '../../core/store/memory-store.js';
import type { Store } from '../../core/store/store.js';
import { ADMIN_USER, TokenAuthenticator } from './auth.js';
import { startApiServer, type RunningApiServer } from './server.js';

const TOKEN = 'hygiene-token';

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Status & { metadata: { name?: string; resourceVersion?: string }; items?: unknown[] };
}

/** One request with http.request and the path exactly as given: fetch and URL would resolve `..` before sending. */
function call(server: RunningApiServer, method: string, path: string, body?: unknown): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
    const req = http.request(
      {
        host: '127.0.0.1',
        port: server.port,
        method,
        path,
        headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json', ...(payload ? { 'content-length': Buffer.byteLength(payload) } : {}) },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d) => {
          text += d;
        });
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: text ? JSON.parse(text) : undefined }));
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

async function serve(store: Store): Promise<{ server: RunningApiServer; stop(): Promise<void> }> {
  const authenticator = new TokenAuthenticator();
  authenticator.add(TOKEN, ADMIN_USER);
  const ac = new AbortController();
  const server = await startApiServer({ store, authenticator, address: '127.0.0.1', port: 0, signal: ac.signal });
  return {
    server,
    async stop() {
      ac.abort();
      await server.closed;
    },
  };
}

const pod = (name: string) => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { containers: [{ name: 'c', image: 'busybox' }] } });

describe('request hygiene over HTTP', () => {
  let api: Awaited<ReturnType<typeof serve>>;
  let store: MemoryStore;
  before(async () => {
    store = new MemoryStore();
    api = await serve(store);
    assert.equal((await call(api.server, 'POST', '/api/v1/namespaces', { metadata: { name: 'victim' } })).status, 201);
    assert.equal((await call(api.server, 'POST', '/api/v1/namespaces/victim/pods', pod('web'))).status, 201);
  });
  after(() => api.stop());

  it('refuses `.` and `..` path segments, raw or percent-encoded, and never acts on the resolved path', async () => {
    for (const name of ['..', '%2e%2e', '%2E%2e', '.%2e', '.', '%2e']) {
      for (const method of ['GET', 'DELETE']) {
        const res = await call(api.server, method, `/api/v1/namespaces/victim/pods/${name}`);
        assert.equal(res.status, 400, `${method} pods/${name}`);
        assert.equal(res.body.reason, 'BadRequest');
        assert.match(res.body.message, /may not contain '\.{1,2}' segments/);
      }
    }
    assert.equal((await call(api.server, 'GET', '/api/v1/namespaces/victim/pods/web/../../../namespaces/victim')).status, 400);
    const ns = await call(api.server, 'GET', '/api/v1/namespaces/victim');
    assert.equal(ns.status, 200);
    assert.equal(ns.body.metadata.name, 'victim');
    assert.equal(
      (ns.body as unknown as { metadata: { deletionTimestamp?: string } }).metadata.deletionTimestamp,
      undefined,
      'the namespace is not being deleted',
    );
  });

  it('refuses names that are not one path segment', async () => {
    const res = await call(api.server, 'GET', '/api/v1/namespaces/victim/pods/a%2Fb');
    assert.equal(res.status, 400);
    assert.equal(res.body.message, `invalid resource name "a/b": [may not contain '/']`);
  });

  it('answers 400, not 500, for malformed percent-encoding in the path or the query', async () => {
    for (const path of ['/api/v1/namespaces/victim/pods/%E0%A4%A', '/api/v1/namespaces/%zz/pods', '/api/v1/namespaces/victim/pods?labelSelector=%E0%A4%A']) {
      const res = await call(api.server, 'GET', path);
      assert.equal(res.status, 400, path);
      assert.equal(res.body.reason, 'BadRequest');
      assert.match(res.body.message, /invalid URL escape/);
    }
    assert.equal((await call(api.server, 'GET', '/api/v1/namespaces/victim/pods?labelSelector=app%3Dweb')).status, 200);
  });

  it('validates DELETE options: unreadable preconditions are a 400, and preconditions that do not hold a 409', async () => {
    const path = '/api/v1/namespaces/victim/pods/web';
    for (const body of [{ preconditions: [1] }, { preconditions: 'x' }, { preconditions: { uid: 5 } }, { preconditions: { resourceVersion: 3 } }]) {
      const res = await call(api.server, 'DELETE', path, body);
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.equal(res.body.reason, 'BadRequest');
    }
    const uid = await call(api.server, 'DELETE', path, { preconditions: { uid: 'someone-else' } });
    assert.equal(uid.status, 409);
    assert.match(
      uid.body.message,
      /^Operation cannot be fulfilled on pods "web": Precondition failed: UID in precondition: someone-else, UID in object meta: /,
    );
    const rv = await call(api.server, 'DELETE', path, { preconditions: { resourceVersion: '1' } });
    assert.equal(rv.status, 409);
    assert.match(rv.body.message, /Precondition failed: ResourceVersion in precondition: 1, ResourceVersion in object meta: \d+/);
    assert.equal((await call(api.server, 'GET', path)).status, 200, 'the pod survived every refused delete');
  });

  it('refuses a resourceVersion that is not a string in PATCH and PUT, rather than skipping the precondition', async () => {
    const path = '/api/v1/namespaces/victim/pods/web';
    const current = await call(api.server, 'GET', path);
    const stale = Number(current.body.metadata.resourceVersion) - 1;
    const patch = await call(api.server, 'PATCH', path, { metadata: { resourceVersion: stale, labels: { a: 'b' } } });
    assert.equal(patch.status, 400);
    assert.equal(patch.body.message, 'metadata.resourceVersion must be a string, not a number');
    const put = await call(api.server, 'PUT', path, { ...pod('web'), metadata: { name: 'web', resourceVersion: stale } });
    assert.equal(put.status, 400);
    const stringStale = await call(api.server, 'PATCH', path, { metadata: { resourceVersion: String(stale), labels: { a: 'b' } } });
    assert.equal(stringStale.status, 409);
    const after = await call(api.server, 'GET', path);
    assert.equal(after.body.metadata.resourceVersion, current.body.metadata.resourceVersion, 'nothing was written');
  });

  it('requires Service names to be DNS-1035 labels, with Kubernetes message', async () => {
    const svc = (name: string) => ({ apiVersion: 'v1', kind: 'Service', metadata: { name }, spec: { ports: [{ port: 80 }] } });
    for (const name of ['a.b', '1abc', 'Abc']) {
      const res = await call(api.server, 'POST', '/api/v1/namespaces/victim/services', svc(name));
      assert.equal(res.status, 422, name);
      assert.equal(
        res.body.message,
        `Service "${name}" is invalid: metadata.name: Invalid value: "${name}": a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')`,
      );
    }
    const long = 'a'.repeat(64);
    const res = await call(api.server, 'POST', '/api/v1/namespaces/victim/services', svc(long));
    assert.equal(res.status, 422);
    assert.match(res.body.message, /metadata\.name: Invalid value: "a+": must be no more than 63 characters/);
    assert.equal((await call(api.server, 'POST', '/api/v1/namespaces/victim/services', svc('web-1'))).status, 201);
  });

  it('takes only decimal resourceVersions on list and watch', async () => {
    for (const query of ['watch=1&resourceVersion=0x10', 'resourceVersion=0x10', 'watch=1&resourceVersion=1e3', 'resourceVersion=-1', 'resourceVersion=%207']) {
      const res = await call(api.server, 'GET', `/api/v1/namespaces/victim/pods?${query}`);
      assert.equal(res.status, 400, query);
      assert.equal(res.body.reason, 'BadRequest');
      assert.match(res.body.message, /^resourceVersion: Invalid value: ".*": must be a non-negative decimal integer$/);
    }
  });

  it('reads boolean query parameters as Kubernetes does: watch=True watches, watch=False lists, watch=yes is a 400', async () => {
    const get = async (query: string) => {
      const res = await fetch(`http://127.0.0.1:${api.server.port}/api/v1/namespaces/victim/pods?${query}`, { headers: { authorization: `Bearer ${TOKEN}` } });
      return { status: res.status, text: await res.text() };
    };
    const watched = await get('watch=True&timeoutSeconds=1');
    assert.equal(watched.status, 200);
    const events = watched.text
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as { type: string; object: { metadata: { name: string } } });
    assert.ok(
      events.some((e) => e.type === 'ADDED' && e.object.metadata.name === 'web'),
      watched.text,
    );
    for (const word of ['False', '0', 'f']) {
      const listed = await get(`watch=${word}`);
      assert.equal(listed.status, 200, word);
      assert.equal(JSON.parse(listed.text).kind, 'PodList', word);
    }
    const bad = await get('watch=yes');
    assert.equal(bad.status, 400);
    assert.equal(JSON.parse(bad.text).message, 'invalid value for query parameter watch: "yes" is not a boolean (true, false, 1 or 0)');
  });

  it('answers a watch from a future resourceVersion with 504 ResourceVersionTooLarge after a short wait, instead of hanging', async () => {
    const current = await store.currentRevision();
    const started = Date.now();
    const res = await call(api.server, 'GET', `/api/v1/namespaces/victim/pods?watch=1&resourceVersion=${current + 1000}`);
    assert.equal(res.status, 504);
    assert.equal(res.body.reason, 'Timeout');
    assert.equal(res.body.message, `Too large resource version: ${current + 1000}, current: ${current}`);
    assert.deepEqual(res.body.details?.causes, [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }]);
    assert.equal(res.headers['retry-after'], '1');
    assert.ok(Date.now() - started < 10_000);
  });
});

describe('generateName', () => {
  it('retries a generated name that collides instead of answering 409', async () => {
    const store = new MemoryStore();
    // The first three names tried are taken, as if other clients had drawn the same suffixes.
    let collisions = 3;
    const create = store.create.bind(store);
    store.create = async (key: string, value: unknown) => {
      if (key.includes('/pods/') && collisions > 0) {
        collisions--;
        throw new AlreadyExistsError(`key "${key}" already exists`);
      }
      return create(key, value);
    };
    const api = await serve(store);
    try {
      const res = await call(api.server, 'POST', '/api/v1/namespaces/default/pods', {
        ...pod(''),
        metadata: { generateName: 'web-' },
      });
      assert.equal(res.status, 201, JSON.stringify(res.body));
      assert.match(res.body.metadata.name!, /^web-[a-z0-9]{5}$/);
      assert.equal(collisions, 0);
      // A fixed name is never renamed.
      assert.equal((await call(api.server, 'POST', '/api/v1/namespaces/default/pods', pod('fixed'))).status, 201);
      assert.equal((await call(api.server, 'POST', '/api/v1/namespaces/default/pods', pod('fixed'))).status, 409);
    } finally {
      await api.stop();
    }
  });
});

describe('an unavailable store', () => {
  it('answers 503 ServiceUnavailable with Retry-After, never 500', async () => {
    const store = new MemoryStore();
    const api = await serve(store);
    try {
      const down = () => Promise.reject(new ServiceUnavailableError('etcd is unavailable: connect ECONNREFUSED', { retryAfterSeconds: 1 }));
      store.get = down;
      store.list = down;
      store.listRaw = down;
      store.create = down;
      for (const [method, path, body] of [
        ['GET', '/api/v1/namespaces/default/pods/web'],
        ['GET', '/api/v1/namespaces/default/pods'],
        ['POST', '/api/v1/namespaces/default/pods', pod('p')],
      ] as const) {
        const res = await call(api.server, method, path, body);
        assert.equal(res.status, 503, `${method} ${path}`);
        assert.equal(res.body.reason, 'ServiceUnavailable');
        assert.equal(res.headers['retry-after'], '1');
      }
    } finally {
      await api.stop();
    }
  });
});

describe('Function archives at admission', () => {
  let api: Awaited<ReturnType<typeof serve>>;
  before(async () => {
    api = await serve(new MemoryStore());
  });
  after(() => api.stop());

  const fn = (name: string, archive: Buffer) => ({
    apiVersion: 'minik8s.io/v1',
    kind: 'Function',
    metadata: { name },
    spec: { code: { archive: archive.toString('base64') } },
  });
  async function tarGz(entries: { name: string; type?: 'file' | 'symlink'; linkname?: string; body?: string }[]): Promise<Buffer> {
    const p = pack();
    const chunks: Buffer[] = [];
    p.on('data', (c: unknown) => {
      chunks.push(c as Buffer);
    });
    const ended = new Promise<void>((resolve) => p.on('end', () => resolve()));
    for (const { body, ...header } of entries) p.entry(header, body ?? '');
    p.finalize();
    await ended;
    return gzipSync(Buffer.concat(chunks));
  }

  it('refuses a malformed archive, entries outside the function, links and the handler missing with 422 at create', async () => {
    const cases: [string, Buffer, RegExp][] = [
      ['garbage', Buffer.from('this is no archive at all'), /neither a \.zip nor a \.tar\.gz/],
      ['damaged-zip', writeZip([{ name: 'handler.py', data: 'x' }]).subarray(0, 40), /damaged|neither/],
      [
        'dotdot',
        writeZip([
          { name: 'handler.py', data: 'x' },
          { name: '../evil.py', data: 'x' },
        ]),
        /not a usable file path/,
      ],
      [
        'absolute',
        writeZip([
          { name: 'handler.py', data: 'x' },
          { name: '/etc/evil.py', data: 'x' },
        ]),
        /not a usable file path/,
      ],
      [
        'symlink',
        await tarGz([
          { name: 'handler.py', body: 'x' },
          { name: 'link.py', type: 'symlink', linkname: '/etc/passwd' },
        ]),
        /symlink/,
      ],
      ['no-handler', writeZip([{ name: 'other.py', data: 'x' }]), /needs handler\.py/],
    ];
    for (const [name, archive, message] of cases) {
      const res = await call(api.server, 'POST', '/apis/minik8s.io/v1/namespaces/default/functions', fn(name, archive));
      assert.equal(res.status, 422, name);
      assert.equal(res.body.reason, 'Invalid');
      assert.equal(res.body.details?.causes?.[0]?.field, 'spec.code.archive', name);
      assert.match(res.body.message, message, name);
      assert.equal((await call(api.server, 'GET', `/apis/minik8s.io/v1/namespaces/default/functions/${name}`)).status, 404, `${name} was not stored`);
    }
  });

  it('accepts a good archive, and checks a new one on update', async () => {
    const good = writeZip([{ name: 'handler.py', data: 'def handler(e, c):\n    return e\n' }]);
    assert.equal((await call(api.server, 'POST', '/apis/minik8s.io/v1/namespaces/default/functions', fn('good', good))).status, 201);
    const bad = writeZip([
      { name: 'handler.py', data: 'x' },
      { name: '../up.py', data: 'x' },
    ]);
    const res = await call(api.server, 'PATCH', '/apis/minik8s.io/v1/namespaces/default/functions/good', {
      spec: { code: { archive: bad.toString('base64') } },
    });
    assert.equal(res.status, 422);
    assert.match(res.body.message, /not a usable file path/);
  });
});
