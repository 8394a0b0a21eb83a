// Unit tests for joining and reusing the node credential, against a small stand-in for the master's join and node endpoints.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { POD_CIDR_RANGE_FULL } from '../../core/api/node.js';
import { StartupError } from '../../core/lifecycle/startup-error.js';
import { credentialPath, nodePasswordPath, obtainNodeCredential } from './node-credential.js';

interface FakeMaster {
  joins: number;
  valid: Set<string>;
  unavailable: number;
  /** Answer joins with the 503 of a cluster CIDR with no /24 left. */
  full: boolean;
  /** The bodies of the joins, as sent. */
  bodies: Record<string, unknown>[];
}

describe('obtainNodeCredential', () => {
  let server: Server;
  let url = '';
  let dir = '';
  const master: FakeMaster = { joins: 0, valid: new Set(), unavailable: 0, full: false, bodies: [] };
  const status = (code: number, reason: string, message: string) =>
    JSON.stringify({ apiVersion: 'v1', kind: 'Status', status: 'Failure', code, reason, message });

  before(async () => {
    server = createServer((req, res) => {
      const token = (req.headers.authorization ?? '').replace(/^Bearer /, '');
      res.setHeader('content-type', 'application/json');
      if (master.unavailable > 0) {
        master.unavailable--;
        res.writeHead(503).end(status(503, 'ServiceUnavailable', 'starting'));
        return;
      }
      if (req.method === 'POST' && req.url === '/apis/minik8s.io/v1/join') {
        let text = '';
        req.on('data', (d) => {
          text += d;
        });
        req.on('end', () => master.bodies.push(JSON.parse(text) as Record<string, unknown>));
        if (token !== 'abcdef.0123456789abcdef') return void res.writeHead(401).end(status(401, 'Unauthorized', 'Unauthorized'));
        if (master.full) {
          const message =
            'no pod CIDR left for node "n1": all 256 /24 ranges of the cluster CIDR 10.244.0.0/16 are allocated; delete nodes that are gone, or start the master with a larger --cluster-cidr';
          res.writeHead(503).end(
            JSON.stringify({
              ...JSON.parse(status(503, 'ServiceUnavailable', message)),
              details: { kind: 'nodes', name: 'n1', causes: [{ reason: POD_CIDR_RANGE_FULL, field: 'spec.podCIDR', message }] },
            }),
          );
          return;
        }
        master.joins++;
        const credential = `cred-${master.joins}`;
        master.valid.add(credential);
        res.writeHead(200).end(
          JSON.stringify({
            kind: 'JoinResponse',
            nodeName: 'n1',
            token: credential,
            podCIDR: '10.244.7.0/24',
            registryPort: 5000,
            clusterCIDR: '10.244.0.0/16',
          }),
        );
        return;
      }
      if (req.method === 'GET' && req.url === '/api/v1/nodes/n1') {
        if (!master.valid.has(token)) return void res.writeHead(401).end(status(401, 'Unauthorized', 'Unauthorized'));
        res.writeHead(200).end(JSON.stringify({ kind: 'Node', metadata: { name: 'n1' } }));
        return;
      }
      res.writeHead(404).end(status(404, 'NotFound', 'not found'));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    dir = mkdtempSync(join(tmpdir(), 'minik8s-credential-test-'));
  });

  after(() => {
    server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const obtain = (joinToken?: string, signal = new AbortController().signal) =>
    obtainNodeCredential({ server: url, nodeName: 'n1', joinToken, dataDir: dir, signal, log: () => {}, retryDelayMs: 1 });

  it('joins once, stores the credential 0600, and reuses it on the next start', async () => {
    const first = await obtain('abcdef.0123456789abcdef');
    assert.deepEqual(first, { server: url, nodeName: 'n1', token: 'cred-1', podCIDR: '10.244.7.0/24', registryPort: 5000, clusterCIDR: '10.244.0.0/16' });
    assert.equal(statSync(credentialPath(dir)).mode & 0o777, 0o600);
    assert.equal(JSON.parse(readFileSync(credentialPath(dir), 'utf8')).token, 'cred-1');
    // A restart needs no join token while the master accepts the stored credential.
    const again = await obtain(undefined);
    assert.equal(again.token, 'cred-1');
    assert.equal(master.joins, 1);
  });

  it('joins again when the master no longer accepts the stored credential, with the same node password', async () => {
    master.valid.clear();
    await assert.rejects(obtain(undefined), (err: Error) => err instanceof StartupError && /no longer accepts/.test(err.message));
    const renewed = await obtain('abcdef.0123456789abcdef');
    assert.equal(renewed.token, 'cred-2');
    // The node password was made at the first join (0600 in the data dir) and is sent with every join.
    const [first, second] = master.bodies.slice(-2);
    assert.match(String(first?.nodePassword), /^[0-9a-f]{64}$/);
    assert.equal(second?.nodePassword, first?.nodePassword);
    assert.equal(readFileSync(nodePasswordPath(dir), 'utf8').trim(), first?.nodePassword);
    assert.equal(statSync(nodePasswordPath(dir)).mode & 0o777, 0o600);
  });

  it('says so when the join token is refused', async () => {
    rmSync(credentialPath(dir));
    await assert.rejects(obtain('zzzzzz.zzzzzzzzzzzzzzzz'), (err: Error) => err instanceof StartupError && /refused the join token/.test(err.message));
  });

  it('retries while the master is not ready, then joins', async () => {
    master.unavailable = 3;
    const c = await obtain('abcdef.0123456789abcdef');
    assert.equal(master.unavailable, 0);
    assert.match(c.token, /^cred-/);
  });

  it("stops with the master's message when no pod range is left, rather than retrying", async () => {
    rmSync(credentialPath(dir), { force: true });
    master.full = true;
    try {
      await assert.rejects(
        obtain('abcdef.0123456789abcdef'),
        (err: Error) =>
          err instanceof StartupError && /refused to join node "n1": no pod CIDR left .* start the master with a larger --cluster-cidr/.test(err.message),
      );
    } finally {
      master.full = false;
    }
  });

  it('gives up when stopped while the master cannot be reached', async () => {
    const controller = new AbortController();
    const pending = obtainNodeCredential({
      server: 'http://127.0.0.1:1',
      nodeName: 'n1',
      joinToken: 'x',
      dataDir: dir,
      signal: controller.signal,
      log: () => controller.abort(),
      retryDelayMs: 1,
    });
    await assert.rejects(pending, (err: Error) => err instanceof StartupError || /refused/.test(err.message));
  });
});
