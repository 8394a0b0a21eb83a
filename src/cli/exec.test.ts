// `minik8s exec` through runCli against a small canned HTTP server: the command after --, output, exit codes, errors.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { after, before, beforeEach, describe, it } from 'node:test';
import { runCli } from './main.js';

const POD_PATH = '/api/v1/namespaces/default/pods';

describe('minik8s exec', () => {
  let server: http.Server;
  let url: string;
  const calls: { path: string; container: string | null; body: { command: string[]; stdin?: string } }[] = [];

  before(async () => {
    server = http.createServer((req, res) => {
      let text = '';
      req.setEncoding('utf8');
      req.on('data', (c: string) => {
        text += c;
      });
      req.on('end', () => {
        const u = new URL(req.url ?? '/', 'http://x');
        const send = (code: number, body: unknown) => {
          res.writeHead(code, { 'content-type': 'application/json' });
          res.end(JSON.stringify(body));
        };
        if (req.method === 'GET' && u.pathname === `${POD_PATH}/duo`) {
          return send(200, { kind: 'Pod', metadata: { name: 'duo' }, spec: { containers: [{ name: 'a' }, { name: 'b' }] } });
        }
        if (req.method === 'POST' && /\/pods\/(web|duo)\/exec$/.test(u.pathname)) {
          const body = JSON.parse(text) as { command: string[]; stdin?: string };
          calls.push({ path: u.pathname, container: u.searchParams.get('container'), body });
          const code = body.command[0] === 'exit' ? Number(body.command[1]) : 0;
          return send(200, { exitCode: code, stdout: `out:${body.command.join(' ')}${body.stdin ? `:${body.stdin}` : ''}\n`, stderr: code ? 'failing\n' : '' });
        }
        send(404, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', code: 404, reason: 'NotFound', message: 'pods "nope" not found' });
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  beforeEach(() => {
    calls.length = 0;
  });

  const cli = async (args: string[], stdin = '') => {
    let out = '';
    let err = '';
    const code = await runCli(['--server', url, ...args], {
      stdout: (s) => {
        out += s;
      },
      stderr: (s) => {
        err += s;
      },
      stdin: Readable.from([Buffer.from(stdin)]),
      env: {},
    });
    return { code, out, err };
  };

  it('runs the command after --, flags included, and prints its output', async () => {
    const r = await cli(['exec', 'web', '-c', 'main', '--', 'ls', '-l', '--all', '/tmp']);
    assert.deepEqual(r, { code: 0, out: 'out:ls -l --all /tmp\n', err: '' });
    assert.deepEqual(calls, [{ path: `${POD_PATH}/web/exec`, container: 'main', body: { command: ['ls', '-l', '--all', '/tmp'] } }]);
  });

  it("exits with the command's exit code, as kubectl does", async () => {
    const r = await cli(['exec', 'web', '-c', 'main', '--', 'exit', '3']);
    assert.deepEqual(r, { code: 3, out: 'out:exit 3\n', err: 'failing\ncommand terminated with exit code 3\n' });
  });

  it('defaults the container, and sends stdin with -i', async () => {
    const r = await cli(['exec', '-i', 'duo', '--', 'cat'], 'hello');
    assert.deepEqual(r, { code: 0, out: 'out:cat:hello\n', err: 'Defaulted container "a" out of: a, b\n' });
    assert.equal(calls[0]!.container, 'a');
  });

  it('reports errors without a stack', async () => {
    assert.deepEqual(await cli(['exec', 'nope', '--', 'ls']), { code: 1, out: '', err: 'Error from server (NotFound): pods "nope" not found\n' });
    assert.deepEqual(await cli(['exec', 'web', '-c', 'main']), { code: 1, out: '', err: 'error: you must specify at least one command for the container\n' });
    assert.equal(calls.length, 0);
  });
});
