// `minik8s token`: TTL parsing and list rows (pure), and the commands through runCli against a small canned HTTP server.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { runCli } from './main.js';
import { parseTtl, tokenRows } from './token.js';

describe('token helpers', () => {
  it('parses durations as kubeadm does', () => {
    const cases: [string, number][] = [
      ['24h', 86400],
      ['90m', 5400],
      ['1h30m', 5400],
      ['45s', 45],
      ['1.5h', 5400],
      ['0', 0],
      ['2h0m10s', 7210],
    ];
    for (const [text, seconds] of cases) assert.equal(parseTtl(text), seconds, text);
    for (const bad of ['', 'h', '24', '24x', '-1h', '1d', '0s', '1h 30m', 'forever']) {
      assert.throws(() => parseTtl(bad), /invalid --ttl/, bad);
    }
  });

  it('lists ID, time left, expiry and description', () => {
    const now = new Date('2026-01-01T00:00:00Z');
    const rows = tokenRows(
      [
        { metadata: { name: 'zzzzzz' }, spec: { expirationTimestamp: '2026-01-01T23:00:00Z', description: 'for n1' } },
        { metadata: { name: 'aaaaaa' }, spec: {} },
        { metadata: { name: 'mmmmmm' }, spec: { expirationTimestamp: '2025-12-31T00:00:00Z' } },
      ],
      now,
    );
    assert.deepEqual(rows, [
      ['ID', 'TTL', 'EXPIRES', 'DESCRIPTION'],
      ['aaaaaa', '<forever>', '<never>', '<none>'],
      ['mmmmmm', '<expired>', '2025-12-31T00:00:00Z', '<none>'],
      ['zzzzzz', '23h', '2026-01-01T23:00:00Z', 'for n1'],
    ]);
    assert.equal(tokenRows([], now, { noHeaders: true }).length, 0);
  });
});

describe('minik8s token', () => {
  let server: http.Server;
  let url: string;
  const requests: { method: string; path: string; body: string }[] = [];
  let items: unknown[] = [];

  before(async () => {
    server = http.createServer((req, res) => {
      let body = '';
      req.on('data', (d) => {
        body += d;
      });
      req.on('end', () => {
        const path = new URL(req.url ?? '/', 'http://x').pathname;
        requests.push({ method: req.method ?? '', path, body });
        const send = (code: number, value: unknown) => {
          res.writeHead(code, { 'content-type': 'application/json' });
          res.end(JSON.stringify(value));
        };
        if (req.headers.authorization !== 'Bearer admin') {
          return send(401, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', code: 401, reason: 'Unauthorized', message: 'Unauthorized' });
        }
        const base = '/apis/minik8s.io/v1/jointokens';
        if (path === base && req.method === 'POST') {
          return send(201, { kind: 'JoinToken', metadata: { name: 'abcdef' }, spec: {}, token: 'abcdef.0123456789abcdef' });
        }
        if (path === base && req.method === 'GET') return send(200, { kind: 'JoinTokenList', items });
        if (path === `${base}/abcdef` && req.method === 'DELETE') return send(200, { kind: 'JoinToken', metadata: { name: 'abcdef' } });
        send(404, {
          kind: 'Status',
          apiVersion: 'v1',
          metadata: {},
          status: 'Failure',
          code: 404,
          reason: 'NotFound',
          message: `jointokens.minik8s.io "${path.split('/').pop()}" not found`,
        });
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  const cli = async (args: string[], token = 'admin') => {
    let out = '';
    let err = '';
    const code = await runCli(args, {
      stdout: (t) => {
        out += t;
      },
      stderr: (t) => {
        err += t;
      },
      stdin: Readable.from([]),
      env: { MINIK8S_SERVER: url, MINIK8S_TOKEN: token, HOME: '/nonexistent' },
      now: () => new Date('2026-01-01T00:00:00Z'),
    });
    return { code, out, err };
  };

  it('create prints only the token and sends the TTL in seconds', async () => {
    assert.deepEqual(await cli(['token', 'create', '--ttl', '2h', '--description', 'for n1']), { code: 0, out: 'abcdef.0123456789abcdef\n', err: '' });
    assert.deepEqual(JSON.parse(requests.at(-1)!.body), { apiVersion: 'minik8s.io/v1', kind: 'JoinToken', ttlSeconds: 7200, description: 'for n1' });
    await cli(['token', 'create']);
    assert.deepEqual(JSON.parse(requests.at(-1)!.body), { apiVersion: 'minik8s.io/v1', kind: 'JoinToken' });
  });

  it('create refuses a bad TTL before asking the server', async () => {
    const before = requests.length;
    const r = await cli(['token', 'create', '--ttl', 'soon']);
    assert.equal(r.code, 1);
    assert.match(r.err, /^error: invalid --ttl "soon"/);
    assert.equal(requests.length, before);
  });

  it('list prints a table, or says there is none', async () => {
    items = [];
    assert.deepEqual(await cli(['token', 'list']), { code: 0, out: '', err: 'No join tokens found.\n' });
    items = [{ metadata: { name: 'abcdef' }, spec: { expirationTimestamp: '2026-01-02T00:00:00Z', description: 'x' } }];
    const r = await cli(['token', 'list']);
    assert.equal(r.code, 0);
    assert.match(r.out, /^ID\s+TTL\s+EXPIRES\s+DESCRIPTION\nabcdef\s+24h\s+2026-01-02T00:00:00Z\s+x\n$/);
  });

  it('delete revokes by ID (or whole token) and reports errors as kubectl does', async () => {
    assert.deepEqual(await cli(['token', 'delete', 'abcdef.0123456789abcdef']), { code: 0, out: 'join token "abcdef" deleted\n', err: '' });
    assert.equal(requests.at(-1)!.path, '/apis/minik8s.io/v1/jointokens/abcdef');
    assert.deepEqual(await cli(['token', 'delete', 'zzzzzz']), {
      code: 1,
      out: '',
      err: 'Error from server (NotFound): jointokens.minik8s.io "zzzzzz" not found\n',
    });
    assert.match((await cli(['token', 'delete'])).err, /needs at least one token ID/);
  });

  it('needs a subcommand and a valid credential', async () => {
    const none = await cli(['token']);
    assert.equal(none.code, 1);
    assert.match(none.err, /minik8s token needs a command/);
    assert.equal((await cli(['token', 'list'], 'wrong')).err, 'error: You must be logged in to the server (Unauthorized)\n');
  });
});
