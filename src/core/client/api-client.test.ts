// Tests for the API client: paths, headers, error mapping, connection failures and watch streams.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import type { KindDefinition } from '../api/kind.js';
import { collectionPath, kindByName, kinds, objectPath } from '../api/registry.js';
import { AlreadyExistsError, GoneError, InvalidError, NotFoundError, UnauthorizedError } from '../errors.js';
import type { WatchEvent } from './client.js';
import { ApiClient, kindCollectionPath, kindObjectPath, parseWatchLines } from './api-client.js';

type Handler = (req: http.IncomingMessage, body: string, res: http.ServerResponse) => void;

describe('ApiClient', () => {
  let server: http.Server;
  let url: string;
  let handler: Handler = (_req, _body, res) => res.end('{}');
  before(async () => {
    server = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => {
        body += c.toString();
      });
      req.on('end', () => handler(req, body, res));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => {
    server.closeAllConnections();
    server.close();
  });
  const client = () => new ApiClient({ server: url, token: 'secret' });
  const pods = kindByName('pods') as KindDefinition;
  const deployments = kindByName('deploy') as KindDefinition;

  it('builds the same paths as the registry for every kind', () => {
    for (const def of kinds) {
      assert.equal(kindCollectionPath(def, 'ns1'), collectionPath(def, 'ns1'));
      assert.equal(kindCollectionPath(def), collectionPath(def));
      assert.equal(kindObjectPath(def, 'x', 'ns1'), objectPath(def, 'x', 'ns1'));
    }
  });

  it('sends the bearer token, paths and merge-patch content type', async () => {
    const seen: string[] = [];
    handler = (req, body, res) => {
      seen.push(`${req.method} ${req.url} ${req.headers.authorization} ${req.headers['content-type'] ?? '-'} ${body}`);
      res.end(JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web' }, items: [] }));
    };
    const c = client();
    await c.get(pods, { namespace: 'default', name: 'web' });
    await c.list(deployments, { namespace: 'prod', labelSelector: 'app=web' });
    await c.list(pods, {});
    await c.patch(pods, { namespace: 'default', name: 'web' }, { spec: { x: null } });
    await c.delete(pods, { namespace: 'default', name: 'web' }, { propagationPolicy: 'Foreground' });
    c.close();
    assert.deepEqual(seen, [
      'GET /api/v1/namespaces/default/pods/web Bearer secret - ',
      'GET /apis/apps/v1/namespaces/prod/deployments?labelSelector=app%3Dweb Bearer secret - ',
      'GET /api/v1/pods Bearer secret - ',
      'PATCH /api/v1/namespaces/default/pods/web Bearer secret application/merge-patch+json {"spec":{"x":null}}',
      'DELETE /api/v1/namespaces/default/pods/web?propagationPolicy=Foreground Bearer secret - ',
    ]);
  });

  const errorCases: { name: string; code: number; body: string; type: new (...a: never[]) => Error; message: string }[] = [
    {
      name: 'NotFound Status',
      code: 404,
      body: JSON.stringify({ kind: 'Status', code: 404, reason: 'NotFound', message: 'pods "x" not found' }),
      type: NotFoundError,
      message: 'pods "x" not found',
    },
    {
      name: 'AlreadyExists Status',
      code: 409,
      body: JSON.stringify({ kind: 'Status', code: 409, reason: 'AlreadyExists', message: 'pods "web" already exists' }),
      type: AlreadyExistsError,
      message: 'pods "web" already exists',
    },
    {
      name: 'Gone Status',
      code: 410,
      body: JSON.stringify({ kind: 'Status', code: 410, reason: 'Expired', message: 'too old resource version' }),
      type: GoneError,
      message: 'too old resource version',
    },
    { name: '401 without a body', code: 401, body: '', type: UnauthorizedError, message: 'the server responded with HTTP 401' },
    {
      name: '404 with a non-Status body',
      code: 404,
      body: '<html>nope</html>',
      type: NotFoundError,
      message: 'the server could not find the requested resource',
    },
  ];
  for (const c of errorCases) {
    it(`maps ${c.name} to ${c.type.name}`, async () => {
      handler = (_req, _body, res) => {
        res.writeHead(c.code);
        res.end(c.body);
      };
      await assert.rejects(client().get(pods, { namespace: 'default', name: 'x' }), (err: Error) => {
        assert.ok(err instanceof c.type, `${err.name} is not ${c.type.name}`);
        assert.equal(err.message, c.message);
        return true;
      });
    });
  }

  it('keeps validation causes', async () => {
    const causes = [{ field: 'spec.containers[0].image', reason: 'FieldValueRequired', message: 'Required value' }];
    handler = (_req, _body, res) => {
      res.writeHead(422);
      res.end(
        JSON.stringify({
          kind: 'Status',
          code: 422,
          reason: 'Invalid',
          message: 'Pod "web" is invalid: spec.containers[0].image: Required value',
          details: { name: 'web', kind: 'pods', causes },
        }),
      );
    };
    await assert.rejects(client().create(pods, {}, { namespace: 'default' }), (err: InvalidError) => {
      assert.ok(err instanceof InvalidError);
      assert.deepEqual(err.details.causes, causes);
      return true;
    });
  });

  it('reports a refused connection as kubectl does', async () => {
    const c = new ApiClient({ server: 'http://127.0.0.1:1' });
    await assert.rejects(c.version(), {
      name: 'ConnectionError',
      message: 'The connection to the server 127.0.0.1:1 was refused - did you specify the right host or port?',
    });
  });

  it('rejects malformed server URLs', () => {
    assert.throws(() => new ApiClient({ server: 'ftp://x' }), /scheme must be http or https/);
    assert.equal(new ApiClient({ server: 'example.com:6443' }).hostPort, 'example.com:6443');
  });

  it('streams watch events written in arbitrary chunks', async () => {
    handler = (req, _body, res) => {
      assert.match(req.url ?? '', /watch=1&resourceVersion=5/);
      res.writeHead(200, { 'content-type': 'application/json' });
      const text = `${[
        JSON.stringify({ type: 'ADDED', object: { metadata: { name: 'a', resourceVersion: '6' } } }),
        JSON.stringify({ type: 'BOOKMARK', object: { metadata: { resourceVersion: '7' } } }),
        JSON.stringify({ type: 'DELETED', object: { metadata: { name: 'é', resourceVersion: '8' } } }),
      ].join('\n')}\n`;
      const bytes = Buffer.from(text);
      // Split inside a JSON line and inside the two-byte é.
      const cut1 = 10;
      const cut2 = bytes.indexOf(Buffer.from('é')) + 1;
      res.write(bytes.subarray(0, cut1));
      res.write(bytes.subarray(cut1, cut2));
      res.end(bytes.subarray(cut2));
    };
    const events: WatchEvent[] = [];
    for await (const e of client().watch(pods, { namespace: 'default', resourceVersion: '5' })) events.push(e);
    assert.deepEqual(
      events.map((e) => `${e.type} ${e.object.metadata.name ?? ''} ${e.object.metadata.resourceVersion}`),
      ['ADDED a 6', 'BOOKMARK  7', 'DELETED é 8'],
    );
  });

  it('turns a 410 watch answer into GoneError', async () => {
    handler = (_req, _body, res) => {
      res.writeHead(410);
      res.end(JSON.stringify({ kind: 'Status', code: 410, reason: 'Expired', message: 'too old' }));
    };
    await assert.rejects(async () => {
      for await (const _ of client().watch(pods, { resourceVersion: '1' })) {
        /* none */
      }
    }, GoneError);
  });
});

describe('parseWatchLines', () => {
  it('throws an in-stream ERROR event as its typed error', async () => {
    const lines = Readable.from([
      '{"type":"ADDED","object":{"metadata":{"name":"a"}}}\n{"type":"ERROR","object":{"kind":"Status","code":410,"reason":"Expired","message":"gone"}}\n',
    ]);
    const got: string[] = [];
    await assert.rejects(async () => {
      for await (const e of parseWatchLines(lines)) got.push(e.type);
    }, GoneError);
    assert.deepEqual(got, ['ADDED']);
  });

  it('accepts a last line without a newline and skips blank lines', async () => {
    const got: string[] = [];
    for await (const e of parseWatchLines(Readable.from(['\n{"type":"MODIFIED","object":{"metadata":{}}}']))) got.push(e.type);
    assert.deepEqual(got, ['MODIFIED']);
  });
});
