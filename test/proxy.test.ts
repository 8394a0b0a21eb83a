// End to end, the service proxy on two simulated machines: a ClusterIP balances over pods on both nodes from pods and hosts, a NodePort answers on every node, an empty service refuses at once, and a removed endpoint leaves the rotation.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import type { Endpoints } from '../src/core/api/endpoints.js';
import type { Pod } from '../src/core/api/pod.js';
import { waitFor } from '../src/core/wait-for.js';
import { BINARY } from './helpers/master.js';
import { createNetnsCluster, findExecutable, netnsSkipReason, type NetnsCluster, type NetnsWorker } from './helpers/netns-node.js';

const NS = `proxy-${process.pid}`;
const PORT = 8080;
const skip = netnsSkipReason();
// Chosen by the test (in the service range) so that it does not depend on the allocator; the third octet keeps clear of 10.96.0.10.
const WEB_IP = '10.96.77.20';
const EMPTY_IP = '10.96.77.21';
const NODE_PORT = 30777;

/** An HTTP server answering its pod's name, given as its first argument. */
const SERVER = [
  'import http.server as h, sys',
  'name = sys.argv[1].encode()',
  'class H(h.BaseHTTPRequestHandler):',
  '  def do_GET(self):',
  '    self.send_response(200); self.send_header("content-length", str(len(name))); self.end_headers(); self.wfile.write(name)',
  '  def log_message(self, *args): pass',
  `h.ThreadingHTTPServer(("", ${PORT}), H).serve_forever()`,
].join('\n');

/** N requests to one URL, each on a new connection: one line per request, the body or ERROR and why. */
const PY_LOOP = [
  'import sys, urllib.request',
  'for i in range(int(sys.argv[2])):',
  '  try: print(urllib.request.urlopen(sys.argv[1], timeout=5).read().decode())',
  '  except Exception as e: print("ERROR", e)',
].join('\n');
const JS_LOOP = `import http from 'node:http';
const [url, n] = process.argv.slice(1);
for (let i = 0; i < Number(n); i++) {
  console.log(await new Promise((resolve) => {
    const req = http.get(url, { agent: false, timeout: 5000 }, (res) => { let b = ''; res.on('data', (d) => { b += d; }); res.on('end', () => resolve(b)); });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', (e) => resolve('ERROR ' + (e.code ?? e.message)));
  }));
}`;

function tally(lines: string[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const l of lines) counts[l.startsWith('ERROR') ? 'ERROR' : l] = (counts[l.startsWith('ERROR') ? 'ERROR' : l] ?? 0) + 1;
  return counts;
}

describe('the service proxy on simulated machines', { skip }, () => {
  let cluster: NetnsCluster | undefined;
  let workers: NetnsWorker[] = [];
  const timings: string[] = [];
  /** Pod name -> node index: two on the first machine, one on the second. */
  const pods: [string, number][] = [
    ['web-a', 0],
    ['web-b', 1],
    ['web-c', 0],
  ];
  const ips: Record<string, string> = {};

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
  const cli = (...args: string[]) => spawnSync(process.execPath, [BINARY, ...args], { env: master().env, encoding: 'utf8', timeout: 120_000 });
  const onHost = (w: NetnsWorker, command: string, args: string[]) => {
    const r = spawnSync(findExecutable('nsenter')!, [`--net=/var/run/netns/${w.machine.netns}`, '--', command, ...args], {
      encoding: 'utf8',
      timeout: 120_000,
    });
    if (r.status !== 0) throw new Error(`${command} ${args.join(' ')} in ${w.machine.netns} exited ${r.status}: ${r.stderr}`);
    return r.stdout;
  };
  const fromPod = (pod: string, url: string, n: number) => {
    const r = cli('exec', '-n', NS, pod, '--', 'python3', '-c', PY_LOOP, url, String(n));
    assert.equal(r.status, 0, r.stderr);
    return r.stdout.trim().split('\n');
  };
  const fromHost = (w: NetnsWorker, url: string, n: number) =>
    onHost(w, process.execPath, ['--input-type=module', '-e', JS_LOOP, url, String(n)])
      .trim()
      .split('\n');
  const natRules = (w: NetnsWorker) => onHost(w, findExecutable('iptables-save')!, ['-t', 'nat']);
  const setEndpoints = async (names: string[]) => {
    const current = await api<Endpoints>('GET', `/api/v1/namespaces/${NS}/endpoints/web`).catch((err: Error) => {
      if (/: 404 /.test(err.message)) return undefined;
      throw err;
    });
    const body = {
      apiVersion: 'v1',
      kind: 'Endpoints',
      metadata: { name: 'web', namespace: NS, ...(current ? { resourceVersion: current.metadata.resourceVersion } : {}) },
      subsets: [
        {
          addresses: names.map((n) => ({ ip: ips[n]!, nodeName: workers[pods.find(([p]) => p === n)![1]]!.nodeName })),
          ports: [{ name: 'http', port: PORT, protocol: 'TCP' }],
        },
      ],
    };
    await (current ? api('PUT', `/api/v1/namespaces/${NS}/endpoints/web`, body) : api('POST', `/api/v1/namespaces/${NS}/endpoints`, body));
  };

  before(
    async () => {
      const started = Date.now();
      cluster = await createNetnsCluster({ machines: ['p1', 'p2'], log: (line) => timings.push(line) });
      workers = cluster.workers;
      await api('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
      await Promise.all(
        pods.map(([name, i]) =>
          api('POST', `/api/v1/namespaces/${NS}/pods`, {
            apiVersion: 'v1',
            kind: 'Pod',
            metadata: { name, namespace: NS },
            spec: {
              nodeName: workers[i]!.nodeName,
              terminationGracePeriodSeconds: 1,
              containers: [
                {
                  name: 'web',
                  image: 'python:3.11',
                  command: ['python3', '-c', SERVER, name],
                  ports: [{ name: 'http', containerPort: PORT }],
                  readinessProbe: { tcpSocket: { port: PORT }, periodSeconds: 1 },
                },
              ],
            },
          }),
        ),
      );
      await Promise.all(
        pods.map(([name]) =>
          waitFor(
            async () => {
              const p = await api<Pod>('GET', `/api/v1/namespaces/${NS}/pods/${name}`);
              if (!p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')) return undefined;
              ips[name] = p.status.podIP!;
              return true;
            },
            { timeoutMs: 180_000, intervalMs: 250, description: `pod ${name} to be ready` },
          ),
        ),
      );
      // No selector: the test owns these Endpoints (an endpoints reconciler leaves selector-less services alone).
      await api('POST', `/api/v1/namespaces/${NS}/services`, {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: 'web', namespace: NS },
        spec: { type: 'NodePort', clusterIP: WEB_IP, ports: [{ name: 'http', port: 80, targetPort: PORT, protocol: 'TCP', nodePort: NODE_PORT }] },
      });
      await api('POST', `/api/v1/namespaces/${NS}/services`, {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: 'empty', namespace: NS },
        spec: { clusterIP: EMPTY_IP, ports: [{ name: 'http', port: 80, targetPort: PORT, protocol: 'TCP' }] },
      });
      await setEndpoints(pods.map(([n]) => n));
      await Promise.all(
        workers.map((w) =>
          waitFor(() => pods.every(([n]) => natRules(w).includes(`--to-destination ${ips[n]}:${PORT}`)), {
            timeoutMs: 20_000,
            intervalMs: 200,
            description: `${w.machine.name}'s rules to hold the three endpoints`,
          }),
        ),
      );
      timings.push(`cluster up, pods ready and rules in place in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    },
    { timeout: 20 * 60_000 },
  );

  after(
    async () => {
      await cluster?.destroy();
      console.log(`proxy timings:\n  ${timings.join('\n  ')}`);
    },
    { timeout: 180_000 },
  );

  it("jumps into its chains first from the nat and filter built-in chains, and leaves the overlay's in place", () => {
    for (const w of workers) {
      const nat = natRules(w);
      for (const chain of ['PREROUTING', 'OUTPUT']) assert.match(nat, new RegExp(`-A ${chain} .*-j MINIK8S-SERVICES`));
      assert.match(nat, /-A POSTROUTING .*-j MINIK8S-POSTROUTING/);
      assert.match(nat, /-A POSTROUTING .*-j MINIK8S-OVERLAY-NAT/);
      assert.match(nat, new RegExp(`-A MINIK8S-NODEPORTS .*--dport ${NODE_PORT} -j MINIK8S-SVC-`));
      const filter = onHost(w, findExecutable('iptables-save')!, ['-t', 'filter']);
      assert.match(filter, new RegExp(`-A MINIK8S-SERVICES -d ${EMPTY_IP}/32 .*-j REJECT`));
      assert.match(filter, /-A FORWARD .*-j MINIK8S-OVERLAY-FWD/);
    }
  });

  it('balances a ClusterIP over the pods of both nodes, from a pod on each node', () => {
    for (const client of ['web-a', 'web-b']) {
      const counts = tally(fromPod(client, `http://${WEB_IP}/`, 60));
      assert.deepEqual(Object.keys(counts).sort(), ['web-a', 'web-b', 'web-c'], `from ${client}: ${JSON.stringify(counts)}`);
    }
  });

  it("balances a ClusterIP from each node's host", () => {
    for (const w of workers) {
      const counts = tally(fromHost(w, `http://${WEB_IP}/`, 60));
      assert.deepEqual(Object.keys(counts).sort(), ['web-a', 'web-b', 'web-c'], `from ${w.machine.name}: ${JSON.stringify(counts)}`);
    }
  });

  it("answers the NodePort on every node's address, from another machine and from the node itself", () => {
    for (const target of workers) {
      const url = `http://${target.machine.ip}:${NODE_PORT}/`;
      for (const from of workers) {
        const counts = tally(fromHost(from, url, 30));
        assert.equal(counts.ERROR, undefined, `${from.machine.name} -> ${url}: ${JSON.stringify(counts)}`);
        assert.ok(Object.keys(counts).length >= 2, `${from.machine.name} -> ${url}: ${JSON.stringify(counts)}`);
      }
    }
  });

  it('refuses a connection to a service with no endpoints at once, from a pod and from a host', () => {
    const started = Date.now();
    const pod = fromPod('web-a', `http://${EMPTY_IP}/`, 1);
    assert.match(pod[0]!, /ERROR .*(Connection refused|Errno 111)/);
    for (const w of workers) assert.deepEqual(fromHost(w, `http://${EMPTY_IP}/`, 1), ['ERROR ECONNREFUSED']);
    assert.ok(Date.now() - started < 15_000, 'refused, not timed out');
  });

  it('takes a removed endpoint out of the rotation on every node', async () => {
    await setEndpoints(['web-a', 'web-b']);
    const started = Date.now();
    await Promise.all(
      workers.map((w) =>
        waitFor(() => !natRules(w).includes(`${ips['web-c']}:${PORT}`), {
          timeoutMs: 10_000,
          intervalMs: 100,
          description: `${w.machine.name}'s rules to drop web-c`,
        }),
      ),
    );
    timings.push(`endpoint removal applied on both nodes in ${Date.now() - started} ms`);
    for (const client of ['web-a', 'web-b']) {
      const counts = tally(fromPod(client, `http://${WEB_IP}/`, 40));
      assert.deepEqual(Object.keys(counts).sort(), ['web-a', 'web-b'], `from ${client}: ${JSON.stringify(counts)}`);
    }
  });
});
