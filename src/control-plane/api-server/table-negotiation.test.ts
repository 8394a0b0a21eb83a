// Table negotiation: kubectl's Accept header gets a Table for lists, single objects and watches; plain JSON stays the default.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { BadRequestError } from '../../core/errors.js';
import { MemoryStore } from '../../core/store/memory-store.js';
import { ADMIN_USER, TokenAuthenticator } from './auth.js';
import { startApiServer, type RunningApiServer } from './server.js';
import { acceptedTable, parseIncludeObject } from './table-negotiation.js';

const KUBECTL_ACCEPT = 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json';
const TOKEN = 'table-admin';
const PODS = '/api/v1/namespaces/default/pods';

describe('acceptedTable', () => {
  it("reads kubectl's Accept, and plain JSON or anything else as no Table", () => {
    assert.equal(acceptedTable(KUBECTL_ACCEPT), 'meta.k8s.io/v1');
    assert.equal(acceptedTable('application/json;as=Table;v=v1beta1;g=meta.k8s.io'), 'meta.k8s.io/v1beta1');
    assert.equal(acceptedTable('application/json'), undefined);
    assert.equal(acceptedTable(undefined), undefined);
    assert.equal(acceptedTable('application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io,application/json'), undefined);
    assert.equal(acceptedTable('application/json, application/json;as=Table;v=v1;g=meta.k8s.io'), undefined, 'JSON asked for first');
  });

  it('reads includeObject, refusing unknown values', () => {
    assert.equal(parseIncludeObject(undefined), 'Metadata');
    assert.equal(parseIncludeObject('Object'), 'Object');
    assert.throws(() => parseIncludeObject('All'), BadRequestError);
  });
});

describe('Table answers over HTTP', () => {
  const ac = new AbortController();
  let server: RunningApiServer;
  const get = (path: string, accept = KUBECTL_ACCEPT) =>
    fetch(`http://127.0.0.1:${server.port}${path}`, { headers: { authorization: `Bearer ${TOKEN}`, accept } });

  before(async () => {
    const authenticator = new TokenAuthenticator();
    authenticator.add(TOKEN, ADMIN_USER);
    server = await startApiServer({ store: new MemoryStore(), authenticator, address: '127.0.0.1', port: 0, signal: ac.signal });
    for (const name of ['a', 'b']) {
      const res = await fetch(`http://127.0.0.1:${server.port}${PODS}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify({ metadata: { name }, spec: { containers: [{ name: 'c', image: 'busybox' }] } }),
      });
      assert.equal(res.status, 201);
    }
  });
  after(async () => {
    ac.abort();
    await server.closed;
  });

  it('lists as a Table with the list resourceVersion, and gets one object as a one-row Table', async () => {
    const list = (await (await get(PODS)).json()) as { kind: string; metadata: { resourceVersion: string }; rows: { cells: string[] }[] };
    assert.equal(list.kind, 'Table');
    assert.match(list.metadata.resourceVersion, /^\d+$/);
    assert.deepEqual(
      list.rows.map((r) => r.cells.slice(0, 4)),
      [
        ['a', '0/1', 'Pending', '0'],
        ['b', '0/1', 'Pending', '0'],
      ],
    );
    const one = (await (await get(`${PODS}/a`)).json()) as { kind: string; rows: unknown[] };
    assert.equal(one.kind, 'Table');
    assert.equal(one.rows.length, 1);
    const plain = (await (await get(`${PODS}/a`, 'application/json')).json()) as { kind: string };
    assert.equal(plain.kind, 'Pod');
  });

  it('watches as Table events', async () => {
    const text = await (await get(`${PODS}?watch=true&timeoutSeconds=1`)).text();
    const events = text
      .split('\n')
      .filter((l) => l)
      .map((l) => JSON.parse(l) as { type: string; object: { kind: string; rows: { cells: string[] }[] } });
    assert.deepEqual(
      events.map((e) => [e.type, e.object.kind, e.object.rows[0]!.cells[0]]),
      [
        ['ADDED', 'Table', 'a'],
        ['ADDED', 'Table', 'b'],
      ],
    );
  });
});
