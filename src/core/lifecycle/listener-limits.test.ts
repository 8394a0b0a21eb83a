// Listener limits: the fd-sized default cap, and on a real server the cap, the timeouts against slowloris, and what they must not cut.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { connect, type Socket } from 'node:net';
import { waitFor } from '../wait-for.js';
import { applyListenerLimits, defaultMaxConnections, fileDescriptorLimit, listenerServerOptions, type ListenerLimits } from './listener-limits.js';

describe('defaultMaxConnections', () => {
  it('reads the soft limit from /proc/self/limits', () => {
    const text =
      'Limit                     Soft Limit           Hard Limit           Units     \nMax open files            20000                40000                files     \n';
    assert.equal(fileDescriptorLimit(text), 20000);
    assert.equal(fileDescriptorLimit('Max open files            unlimited            unlimited            files\n'), undefined);
  });
  it('stays under the limit with room for the process itself', () => {
    assert.equal(defaultMaxConnections(20000), 16000);
    assert.equal(defaultMaxConnections(1024), 768);
    assert.equal(defaultMaxConnections(1_048_576), 838_860);
    assert.equal(defaultMaxConnections(100), 64);
    assert.equal(defaultMaxConnections(undefined), 8192);
  });
});

const LIMITS: ListenerLimits = { maxConnections: 20, headersTimeoutMs: 500, requestTimeoutMs: 5000, keepAliveTimeoutMs: 5000 };

async function withServer(run: (port: number) => Promise<void>): Promise<void> {
  const server = http.createServer(listenerServerOptions(LIMITS), (req, res) => {
    // /slow answers after three header timeouts: a long response (a watch, logs) must not be cut.
    const delay = req.url === '/slow' ? 3 * LIMITS.headersTimeoutMs : 0;
    setTimeout(() => res.end('ok'), delay);
  });
  applyListenerLimits(server, LIMITS);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  try {
    await run(port);
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
}

function open(port: number): Promise<Socket & { closedAt?: number }> {
  return new Promise((resolve, reject) => {
    const s: Socket & { closedAt?: number } = connect(port, '127.0.0.1', () => resolve(s));
    s.on('error', reject);
    s.on('close', () => {
      s.closedAt = Date.now();
    });
  });
}

function get(port: number, path: string, agent?: http.Agent): Promise<number> {
  return new Promise((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port, path, agent }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      })
      .on('error', reject);
  });
}

describe('applyListenerLimits', () => {
  it('closes a connection that sends half a request, and one that sends nothing, soon after the header timeout', async () => {
    await withServer(async (port) => {
      const started = Date.now();
      const half = await open(port);
      half.write('GET / HTTP/1.1\r\nHost: x\r\n');
      const silent = await open(port);
      await waitFor(() => half.closedAt !== undefined && silent.closedAt !== undefined, { timeoutMs: 5000, description: 'both to be closed' });
      for (const s of [half, silent]) assert.ok(s.closedAt! - started < LIMITS.headersTimeoutMs + 2000, `closed after ${s.closedAt! - started} ms`);
    });
  });

  it('cuts neither a response that takes longer than the header timeout nor an idle kept-alive connection', async () => {
    await withServer(async (port) => {
      const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
      try {
        assert.equal(await get(port, '/slow', agent), 200);
        await new Promise((resolve) => setTimeout(resolve, 3 * LIMITS.headersTimeoutMs));
        assert.equal(await get(port, '/', agent), 200);
        // The same connection served both: it was not closed while idle.
        assert.equal(Object.values(agent.freeSockets).flat().length, 1);
      } finally {
        agent.destroy();
      }
    });
  });

  it('drops connections beyond the cap, and serves again once they are gone', async () => {
    await withServer(async (port) => {
      const sockets = await Promise.all(Array.from({ length: LIMITS.maxConnections + 10 }, () => open(port)));
      try {
        await waitFor(() => sockets.filter((s) => s.closedAt !== undefined).length >= 10, { timeoutMs: 5000, description: 'the excess to be dropped' });
      } finally {
        for (const s of sockets) s.destroy();
      }
      await waitFor(async () => (await get(port, '/').catch(() => 0)) === 200, { timeoutMs: 5000, description: 'a request to be served' });
    });
  });
});
