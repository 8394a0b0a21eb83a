// `minik8s logs` through runCli against a small canned HTTP server: container choice, options, follow, errors.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { after, before, beforeEach, describe, it } from 'node:test';
import type { Pod } from '../core/api/pod.js';
import { waitFor } from '../core/wait-for.js';
import { defaultContainer, parseTail, podName } from './logs.js';
import { runCli } from './main.js';

const POD_PATH = '/api/v1/namespaces/default/pods';
const pod = (name: string, containers: string[], annotations?: Record<string, string>) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: 'default', ...(annotations ? { annotations } : {}) },
  spec: { containers: containers.map((c) => ({ name: c, image: 'busybox' })) },
});
const status = (code: number, reason: string, message: string) => ({
  kind: 'Status',
  apiVersion: 'v1',
  metadata: {},
  status: 'Failure',
  code,
  reason,
  message,
});

describe('minik8s logs', () => {
  let server: http.Server;
  let url: string;
  const requests: URL[] = [];
  /** Follow responses still open, so the test can see them closed. */
  const open = new Set<http.ServerResponse>();

  before(async () => {
    server = http.createServer((req, res) => {
      const u = new URL(req.url ?? '/', 'http://x');
      requests.push(u);
      const send = (code: number, body: unknown) => {
        res.writeHead(code, { 'content-type': 'application/json' });
        res.end(JSON.stringify(body));
      };
      if (u.pathname === `${POD_PATH}/web`) return send(200, pod('web', ['main']));
      if (u.pathname === `${POD_PATH}/duo`) return send(200, pod('duo', ['a', 'b'], { 'kubectl.kubernetes.io/default-container': 'b' }));
      if (u.pathname === `${POD_PATH}/lost/log`)
        return send(503, status(503, 'ServiceUnavailable', 'error dialing backend: dial tcp 10.0.0.9:10250: connect: connection refused'));
      const m = /^\/api\/v1\/namespaces\/default\/pods\/(\w+)\/log$/.exec(u.pathname);
      if (m && ['web', 'duo'].includes(m[1]!)) {
        res.writeHead(200, { 'content-type': 'text/plain' });
        // A multi-byte character split across two writes must come out whole.
        const text = Buffer.from(`${m[1]}/${u.searchParams.get('container')} caf\u00e9\n`);
        res.write(text.subarray(0, text.length - 2));
        res.write(text.subarray(text.length - 2));
        if (u.searchParams.get('follow') === 'true') {
          open.add(res);
          res.on('close', () => open.delete(res));
          return;
        }
        return res.end();
      }
      send(404, status(404, 'NotFound', `pods "${u.pathname.split('/')[6]}" not found`));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  beforeEach(() => {
    requests.length = 0;
  });

  const cli = async (args: string[], signal?: AbortSignal, onOut?: (s: string) => void) => {
    let out = '';
    let err = '';
    const code = await runCli([...args, '--server', url], {
      stdout: (s) => {
        out += s;
        onOut?.(out);
      },
      stderr: (s) => {
        err += s;
      },
      stdin: Readable.from([]),
      env: {},
      signal,
    });
    return { code, out, err };
  };

  it('prints the log of a single-container pod, passing the options', async () => {
    const r = await cli(['logs', 'web', '--tail', '20', '-p', '--timestamps']);
    assert.deepEqual(r, { code: 0, out: 'web/main caf\u00e9\n', err: '' });
    const q = requests.at(-1)!.searchParams;
    assert.deepEqual(Object.fromEntries(q), { container: 'main', tailLines: '20', previous: 'true', timestamps: 'true' });
  });

  it('defaults the container as kubectl does and says so, or takes -c', async () => {
    assert.deepEqual(await cli(['logs', 'pod/duo']), { code: 0, out: 'duo/b caf\u00e9\n', err: 'Defaulted container "b" out of: a, b\n' });
    requests.length = 0;
    const r = await cli(['logs', 'duo', '-c', 'a', '--tail', '-1']);
    assert.deepEqual(r, { code: 0, out: 'duo/a caf\u00e9\n', err: '' });
    assert.equal(requests.length, 1, 'no pod lookup when -c is given');
    assert.equal(requests[0]!.searchParams.get('tailLines'), null);
  });

  it('follows until the signal aborts, then closes the connection', async () => {
    const controller = new AbortController();
    const done = cli(['logs', '-f', 'web'], controller.signal, (out) => {
      if (out.includes('\n')) controller.abort();
    });
    const r = await done;
    assert.equal(r.code, 0);
    assert.equal(r.out, 'web/main caf\u00e9\n');
    assert.equal(requests.at(-1)!.searchParams.get('follow'), 'true');
    await waitFor(() => open.size === 0, { timeoutMs: 5000, description: 'the follow connection to close' });
  });

  it('reports errors as kubectl does, with a non-zero exit', async () => {
    assert.deepEqual(await cli(['logs', 'nope']), { code: 1, out: '', err: 'Error from server (NotFound): pods "nope" not found\n' });
    const lost = await cli(['logs', 'lost', '-c', 'main']);
    assert.equal(lost.code, 1);
    assert.equal(lost.err, 'Error from server (ServiceUnavailable): error dialing backend: dial tcp 10.0.0.9:10250: connect: connection refused\n');
    assert.match((await cli(['logs', 'web', '--tail', 'x'])).err, /^error: invalid argument "x" for "--tail" flag/);
    assert.match((await cli(['logs'])).err, /^error: logs requires a pod name/);
    // A workload is looked up to pick one of its pods; this one does not exist.
    const workload = await cli(['logs', 'deploy/x']);
    assert.equal(workload.code, 1);
    assert.match(workload.err, /not found/);
  });

  it('has pure helpers for names, containers and --tail', () => {
    assert.equal(podName('web', 'logs'), 'web');
    assert.equal(podName('pods/web', 'logs'), 'web');
    assert.throws(() => podName('pod/', 'logs'), /only pods/);
    assert.deepEqual(defaultContainer(pod('p', ['x']) as unknown as Pod), { name: 'x' });
    assert.deepEqual(defaultContainer(pod('p', ['x', 'y']) as unknown as Pod), { name: 'x', notice: 'Defaulted container "x" out of: x, y\n' });
    assert.equal(defaultContainer(pod('p', ['x', 'y'], { 'kubectl.kubernetes.io/default-container': 'gone' }) as unknown as Pod).name, 'x');
    assert.equal(parseTail(undefined), undefined);
    assert.equal(parseTail('-1'), undefined);
    assert.equal(parseTail('0'), '0');
    assert.throws(() => parseTail('-2'), /invalid argument/);
  });
});
