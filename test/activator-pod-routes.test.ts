// The master's host routes to pods on simulated machines (network namespaces): the host reaches a pod by its address with its own source address, a function on such a machine cold-starts through the activator, and the routes go with the master.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Docker from 'dockerode';
import type { Node } from '../src/core/api/node.js';
import type { Pod } from '../src/core/api/pod.js';
import { waitFor } from '../src/core/wait-for.js';
import { POD_ROUTE_PROTO } from '../src/net/pod-routes.js';
import { BINARY } from './helpers/master.js';
import { createNetnsCluster, findExecutable, netnsSkipReason, type NetnsCluster } from './helpers/netns-node.js';

const NS = `podroutes-${process.pid}`;
const skip = netnsSkipReason();

/** Answers with the address the request came from. */
const SERVER = [
  'import http.server as h',
  'class H(h.BaseHTTPRequestHandler):',
  '  def do_GET(self):',
  '    body = self.client_address[0].encode()',
  '    self.send_response(200); self.send_header("content-length", str(len(body))); self.end_headers(); self.wfile.write(body)',
  '  def log_message(self, *args): pass',
  'h.ThreadingHTTPServer(("", 8080), H).serve_forever()',
].join('\n');

/** Our routes on this host: destination -> gateway. */
function ourRoutes(): Map<string, string> {
  const r = spawnSync(findExecutable('ip')!, ['-j', 'route', 'show', 'table', 'main'], { encoding: 'utf8' });
  const list = JSON.parse(r.stdout || '[]') as { dst: string; gateway?: string; protocol?: string }[];
  return new Map(list.filter((x) => x.protocol === POD_ROUTE_PROTO).map((x) => [x.dst, x.gateway ?? '']));
}

describe('routes from the master to pods on other machines', { skip }, () => {
  let cluster: NetnsCluster | undefined;
  const dir = mkdtempSync(join(tmpdir(), 'minik8s-podroutes-'));
  let podCIDR = '';

  const master = () => cluster!.master;
  /** The answer's JSON, as the caller says it is. */
  const api = async <T = unknown>(method: string, path: string, body?: unknown) => {
    const res = await fetch(`${master().url}${path}`, {
      method,
      headers: { authorization: `Bearer ${master().token}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const json: unknown = await res.json();
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${(json as { message?: string } | null)?.message}`);
    return json as T;
  };
  const cli = (...args: string[]) =>
    new Promise<{ status: number; stdout: string; stderr: string }>((resolve) => {
      execFile(process.execPath, [BINARY, ...args], { env: master().env, encoding: 'utf8', timeout: 240_000 }, (err, stdout, stderr) => {
        resolve({ status: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
      });
    });

  before(async () => {
    cluster = await createNetnsCluster({ machines: ['a'] });
    const node = await waitFor(
      async () => {
        const n = await api<Node>('GET', `/api/v1/nodes/${cluster!.workers[0]!.nodeName}`);
        return n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ? n : undefined;
      },
      { timeoutMs: 60_000, description: 'the node Ready' },
    );
    podCIDR = node.spec.podCIDR!;
    await api('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
  });

  after(async () => {
    await cluster?.destroy();
    rmSync(dir, { recursive: true, force: true });
    // The function image the master built on this host's engine (named functions/NAMESPACE-NAME, whatever registry address it was tagged with).
    const docker = new Docker();
    for (const image of await docker.listImages().catch(() => [])) {
      const refs = [...(image.RepoTags ?? []), ...(image.RepoDigests ?? [])];
      if (refs.some((r) => r.includes(`/functions/${NS}-`)))
        await docker
          .getImage(image.Id)
          .remove({ force: true })
          .catch(() => {});
    }
  });

  it("routes the Ready node's pod range via its address, marked as ours", async () => {
    const machineIP = cluster!.machines[0]!.ip;
    await waitFor(() => ourRoutes().get(podCIDR) === machineIP, { timeoutMs: 30_000, description: `a route to ${podCIDR} via ${machineIP}` });
  });

  it("the host reaches a pod on the machine by its address, and the pod sees the host's own address", async () => {
    await api('POST', `/api/v1/namespaces/${NS}/pods`, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'web' },
      spec: { containers: [{ name: 'web', image: 'python:3.11', command: ['python3', '-c', SERVER], ports: [{ containerPort: 8080 }] }] },
    });
    const ip = await waitFor(
      async () => {
        const p = await api<Pod>('GET', `/api/v1/namespaces/${NS}/pods/web`);
        return p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ? (p.status.podIP as string) : undefined;
      },
      { timeoutMs: 120_000, intervalMs: 250, description: 'the pod Ready' },
    );
    const seen = await waitFor(
      async () => {
        const res = await fetch(`http://${ip}:8080/`, { signal: AbortSignal.timeout(3000) });
        return res.status === 200 ? await res.text() : undefined;
      },
      { timeoutMs: 30_000, description: `http://${ip}:8080/ from the host` },
    );
    assert.equal(seen, cluster!.hostIP);
  });

  it('a function on the machine cold-starts through the activator', async () => {
    writeFileSync(join(dir, 'handler.py'), 'def handler(event, context):\n    return {"got": event}\n');
    const created = await cli('-n', NS, 'function', 'create', 'far', '-f', join(dir, 'handler.py'));
    assert.equal(created.status, 0, created.stderr);
    const res = await fetch(`${master().activatorUrl}/namespaces/${NS}/function/far`, {
      method: 'POST',
      body: '{"x": 1}',
      signal: AbortSignal.timeout(120_000),
    });
    const text = await res.text();
    assert.equal(res.status, 200, `HTTP ${res.status} ${JSON.stringify(Object.fromEntries(res.headers))}: ${text}`);
    assert.deepEqual(JSON.parse(text), { got: { x: 1 } });
    assert.equal(res.headers.get('x-minik8s-cold-start'), 'true');
  });

  it('the routes go when the master stops (while the machine and the bridge are still there)', async () => {
    const pid = master().pid;
    process.kill(pid, 'SIGTERM');
    // Gone, or a zombie (it may be our child, not yet reaped).
    await waitFor(
      () => {
        try {
          const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
          return ['Z', 'X'].includes(stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3));
        } catch {
          return true;
        }
      },
      { timeoutMs: 30_000, description: 'the master to exit' },
    );
    assert.equal(ourRoutes().has(podCIDR), false);
    assert.match(master().output(), new RegExp(`pod routes: ip route del ${podCIDR.replace(/\./g, '\\.')} proto ${POD_ROUTE_PROTO}`));
  });
});
