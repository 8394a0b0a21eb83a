// End to end, the VXLAN overlay on three simulated machines: pods reach pods on other nodes by pod IP with their own source address, every node's host reaches every pod, a restarted worker adopts its device, and a deleted Node's entries go.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Node } from '../src/core/api/node.js';
import type { Pod } from '../src/core/api/pod.js';
import { waitFor } from '../src/core/wait-for.js';
import { PUBLIC_IP_ANNOTATION, vtepAddress, VTEP_MAC_ANNOTATION } from '../src/net/vxlan/overlay-plan.js';
import { DEFAULT_VXLAN_DEVICE as DEV } from '../src/net/vxlan/vxlan-overlay.js';
import { BINARY } from './helpers/master.js';
import { createNetnsCluster, findExecutable, netnsSkipReason, type NetnsCluster, type NetnsWorker } from './helpers/netns-node.js';

const NS = `overlay-${process.pid}`;
const PORT = 8080;
const skip = netnsSkipReason();

/** An HTTP server that answers with the address the request came from: what the overlay must keep. */
const SERVER = [
  'import http.server as h',
  'class H(h.BaseHTTPRequestHandler):',
  '  def do_GET(self):',
  '    body = self.client_address[0].encode()',
  '    self.send_response(200); self.send_header("content-length", str(len(body))); self.end_headers(); self.wfile.write(body)',
  '  def log_message(self, *args): pass',
  `h.ThreadingHTTPServer(("", ${PORT}), H).serve_forever()`,
].join('\n');

/** Fetches each URL given as an argument; prints one line per URL: the body, or ERROR and why. */
const PY_FETCH = [
  'import sys, urllib.request',
  'for url in sys.argv[1:]:',
  '  try: print(urllib.request.urlopen(url, timeout=5).read().decode())',
  '  except Exception as e: print("ERROR", e)',
].join('\n');
/** Fetches an https URL trusting only the CA given as the first argument (the cluster's), as a pod holding the CA would. */
const PY_FETCH_WITH_CA = [
  'import sys, ssl, urllib.request',
  'context = ssl.create_default_context(cadata=sys.argv[1])',
  'try: print(urllib.request.urlopen(sys.argv[2], timeout=5, context=context).read().decode())',
  'except Exception as e: print("ERROR", e)',
].join('\n');
const JS_FETCH = `for (const url of process.argv.slice(1)) {
  try { console.log(await (await fetch(url, { signal: AbortSignal.timeout(5000) })).text()); } catch (e) { console.log('ERROR', e.cause?.code ?? e.message); }
}`;

/** The fields these tests read of `ip -j` and `bridge -j` records. */
interface IpRoute {
  dst: string;
  gateway?: string;
  flags?: string[];
}
interface IpNeighbour {
  dst: string;
  lladdr?: string;
  state?: string[];
}
interface FdbEntry {
  mac: string;
  dst?: string;
}
interface IpLink {
  address: string;
  ifindex: number;
  flags: string[];
  linkinfo: { info_kind: string; info_data: { id: number; port: number; local: string; learning: boolean } };
}
interface IpAddress {
  addr_info: { local: string; prefixlen: number }[];
}

/** Still running (a zombie counts as gone)? */
function running(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !['Z', 'X'].includes(stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3));
  } catch {
    return false;
  }
}

describe('the VXLAN overlay between simulated machines', { skip }, () => {
  let cluster: NetnsCluster | undefined;
  let workers: NetnsWorker[] = [];
  let restarted: ChildProcess | undefined;
  const timings: string[] = [];

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
  const cli = (...args: string[]) => spawnSync(process.execPath, [BINARY, ...args], { env: master().env, encoding: 'utf8', timeout: 60_000 });
  /** A command in a machine's network namespace (its "host"). */
  const onHost = (w: NetnsWorker, command: string, args: string[]) => {
    const r = spawnSync(findExecutable('nsenter')!, [`--net=/var/run/netns/${w.machine.netns}`, '--', command, ...args], { encoding: 'utf8', timeout: 30_000 });
    if (r.status !== 0) throw new Error(`${command} ${args.join(' ')} in ${w.machine.netns} exited ${r.status}: ${r.stderr}`);
    return r.stdout;
  };
  const ipJson = <T>(w: NetnsWorker, tool: 'ip' | 'bridge', args: string[]) => JSON.parse(onHost(w, findExecutable(tool)!, ['-j', ...args]) || '[]') as T[];
  const node = (w: NetnsWorker) => api<Node>('GET', `/api/v1/nodes/${w.nodeName}`);
  const podName = (w: NetnsWorker) => `web-${w.machine.name}`;
  const pod = (w: NetnsWorker) => api<Pod>('GET', `/api/v1/namespaces/${NS}/pods/${podName(w)}`);
  const podIP = async (w: NetnsWorker) => (await pod(w)).status!.podIP!;
  const url = (ip: string) => `http://${ip}:${PORT}/`;
  /** From inside a pod: one answer (the source address the server saw) per URL. */
  const fetchFromPod = (w: NetnsWorker, urls: string[]) => {
    const r = cli('exec', '-n', NS, podName(w), '--', 'python3', '-c', PY_FETCH, ...urls);
    assert.equal(r.status, 0, r.stderr);
    return r.stdout.trim().split('\n');
  };
  const fetchFromHost = (w: NetnsWorker, urls: string[]) =>
    onHost(w, process.execPath, ['--input-type=module', '-e', JS_FETCH, ...urls])
      .trim()
      .split('\n');

  /** Routes, neighbours and FDB entries on a machine's VXLAN device, as sorted lines. */
  const entries = (w: NetnsWorker) => ({
    routes: ipJson<IpRoute>(w, 'ip', ['-4', 'route', 'show', 'dev', DEV])
      .map((r) => `${r.dst} via ${r.gateway} ${(r.flags ?? []).join(',')}`)
      .sort(),
    neighbours: ipJson<IpNeighbour>(w, 'ip', ['-4', 'neigh', 'show', 'dev', DEV])
      .map((n) => `${n.dst} ${n.lladdr} ${(n.state ?? []).join(',')}`)
      .sort(),
    fdb: ipJson<FdbEntry>(w, 'bridge', ['fdb', 'show', 'dev', DEV])
      .map((f) => `${f.mac} ${f.dst}`)
      .sort(),
  });
  /** What a machine's device should hold for these peers. */
  const expected = async (peers: NetnsWorker[]) => {
    const nodes = await Promise.all(peers.map(node));
    return {
      routes: nodes.map((n) => `${n.spec!.podCIDR} via ${vtepAddress(n.spec!.podCIDR!)} onlink`).sort(),
      neighbours: nodes.map((n) => `${vtepAddress(n.spec!.podCIDR!)} ${n.metadata.annotations![VTEP_MAC_ANNOTATION]} PERMANENT`).sort(),
      fdb: nodes.map((n) => `${n.metadata.annotations![VTEP_MAC_ANNOTATION]} ${n.metadata.annotations![PUBLIC_IP_ANNOTATION]}`).sort(),
    };
  };
  const waitEntries = (w: NetnsWorker, peers: NetnsWorker[], what: string) =>
    waitFor(
      async () => {
        assert.deepEqual(entries(w), await expected(peers));
        return true;
      },
      { timeoutMs: 30_000, intervalMs: 200, description: `${w.machine.name}'s ${DEV} to hold ${what}` },
    );

  before(
    async () => {
      const started = Date.now();
      cluster = await createNetnsCluster({ machines: ['w1', 'w2', 'w3'], log: (line) => timings.push(line) });
      workers = cluster.workers;
      await api('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
      await Promise.all(
        workers.map((w) =>
          api('POST', `/api/v1/namespaces/${NS}/pods`, {
            apiVersion: 'v1',
            kind: 'Pod',
            metadata: { name: podName(w), namespace: NS, labels: { app: 'overlay-e2e' } },
            spec: {
              nodeName: w.nodeName,
              containers: [
                {
                  name: 'web',
                  image: 'python:3.11',
                  command: ['python3', '-c', SERVER],
                  ports: [{ containerPort: PORT }],
                  readinessProbe: { tcpSocket: { port: PORT }, periodSeconds: 1 },
                },
              ],
            },
          }),
        ),
      );
      await Promise.all(
        workers.map((w) =>
          waitFor(
            async () => {
              const p = await pod(w);
              return p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ? p : undefined;
            },
            { timeoutMs: 180_000, intervalMs: 250, description: `pod ${podName(w)} to be ready on ${w.nodeName}` },
          ),
        ),
      );
      timings.push(`cluster up and pods ready in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    },
    { timeout: 20 * 60_000 },
  );

  after(
    async () => {
      if (restarted && restarted.exitCode === null && restarted.signalCode === null) {
        const gone = new Promise((resolve) => restarted!.once('exit', resolve));
        restarted.kill('SIGTERM');
        const timer = setTimeout(() => restarted!.kill('SIGKILL'), 15_000);
        await gone;
        clearTimeout(timer);
      }
      await cluster?.destroy();
      console.log(`overlay timings:\n  ${timings.join('\n  ')}`);
    },
    { timeout: 180_000 },
  );

  it('gives each worker a VXLAN device (VNI 1, port 8472, its VTEP address) and publishes its MAC and address on its Node', async () => {
    for (const w of workers) {
      const n = await node(w);
      const [link] = ipJson<IpLink>(w, 'ip', ['-d', 'link', 'show', 'dev', DEV]);
      assert.equal(link.linkinfo.info_kind, 'vxlan');
      assert.deepEqual(
        [link.linkinfo.info_data.id, link.linkinfo.info_data.port, link.linkinfo.info_data.local, link.linkinfo.info_data.learning],
        [1, 8472, w.machine.ip, false],
      );
      assert.ok(link.flags.includes('UP'));
      assert.equal(n.metadata.annotations?.[VTEP_MAC_ANNOTATION], link.address);
      assert.equal(n.metadata.annotations?.[PUBLIC_IP_ANNOTATION], w.machine.ip);
      const [addr] = ipJson<IpAddress>(w, 'ip', ['-4', 'addr', 'show', 'dev', DEV]);
      assert.deepEqual(
        addr.addr_info.map((a) => `${a.local}/${a.prefixlen}`),
        [`${vtepAddress(n.spec!.podCIDR!)}/32`],
      );
      // Pods' traffic keeps their addresses: Docker does not masquerade the pod network, our chain does it for what leaves the cluster.
      const net = await w.machine.docker.getNetwork('minik8s0').inspect();
      assert.equal(net.Options?.['com.docker.network.bridge.enable_ip_masquerade'], 'false');
      const nat = onHost(w, findExecutable('iptables')!, ['-t', 'nat', '-S', 'MINIK8S-OVERLAY-NAT']);
      assert.match(nat, new RegExp(`-s ${n.spec!.podCIDR!.replace(/\./g, '\\.')} -d ${master().clusterCIDR.replace(/\./g, '\\.')} .*-j RETURN`));
      assert.match(onHost(w, findExecutable('iptables')!, ['-S', 'FORWARD']), /-A FORWARD -j MINIK8S-OVERLAY-FWD/);
    }
  });

  it('keeps on every worker a route, a permanent neighbour and an FDB entry for each other node, and nothing else', async () => {
    for (const w of workers)
      await waitEntries(
        w,
        workers.filter((o) => o !== w),
        'both peers',
      );
  });

  it("lets a pod on one node fetch HTTP from pods on the others by pod IP, the server seeing the client pod's own address", async () => {
    const ips = await Promise.all(workers.map(podIP));
    for (const [i, w] of workers.entries()) {
      const others = ips.filter((_, j) => j !== i);
      assert.deepEqual(fetchFromPod(w, others.map(url)), [ips[i], ips[i]], `from ${podName(w)} (${ips[i]}) to ${others.join(', ')}`);
    }
  });

  it("lets every node's host reach every pod: remote ones through its VTEP address, its own over the bridge", async () => {
    const ips = await Promise.all(workers.map(podIP));
    for (const w of workers) {
      const vtep = vtepAddress((await node(w)).spec!.podCIDR!);
      const own = await podIP(w);
      const seen = fetchFromHost(w, ips.map(url));
      assert.deepEqual(
        seen,
        ips.map((ip) => (ip === own ? ip.replace(/\.\d+$/, '.1') : vtep)),
        `from ${w.machine.name}'s host to ${ips.join(', ')}`,
      );
    }
  });

  it("masquerades pods' traffic that leaves the cluster: a pod reaches the master on the bridge", () => {
    const r = cli('exec', '-n', NS, podName(workers[0]!), '--', 'python3', '-c', PY_FETCH_WITH_CA, master().ca!, `${master().url}/healthz`);
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout.trim(), 'ok');
  });

  it('adopts the device when a worker restarts: same MAC, peers untouched, traffic flowing', async () => {
    const w2 = workers[1]!;
    const [before] = ipJson<IpLink>(w2, 'ip', ['-d', 'link', 'show', 'dev', DEV]);
    process.kill(w2.pid, 'SIGTERM');
    await waitFor(() => !running(w2.pid), { timeoutMs: 20_000, description: `worker ${w2.nodeName} to stop` });
    const logFile = join(w2.machine.dir, 'worker-restarted.log');
    const fd = openSync(logFile, 'a');
    try {
      restarted = spawn(
        findExecutable('nsenter')!,
        [
          `--net=/var/run/netns/${w2.machine.netns}`,
          '--',
          process.execPath,
          BINARY,
          '--role=worker',
          '--server',
          master().url,
          '--token',
          master().joinToken,
          '--name',
          w2.nodeName,
          '--node-ip',
          w2.machine.ip,
          '--data-dir',
          w2.dataDir,
          '--kubelet-port',
          String(w2.kubeletPort),
          '--bridge',
          'minik8s0',
          '--docker-host',
          w2.machine.dockerHost,
        ],
        { stdio: ['ignore', fd, fd] },
      );
    } finally {
      closeSync(fd);
    }
    const log = () => readFileSync(logFile, 'utf8');
    await waitFor(() => log().includes('syncing pods') || restarted!.exitCode !== null, {
      timeoutMs: 30_000,
      description: 'the restarted worker to start its kubelet',
    });
    assert.equal(restarted.exitCode, null, `the restarted worker exited: ${log()}`);
    assert.match(log(), new RegExp(`overlay: vxlan ${DEV.replace('.', '\\.')} .*: adopted as it was`));
    const [now] = ipJson<IpLink>(w2, 'ip', ['-d', 'link', 'show', 'dev', DEV]);
    assert.equal(now.address, before.address);
    assert.equal(now.ifindex, before.ifindex, 'the very same device');
    assert.equal((await node(w2)).metadata.annotations?.[VTEP_MAC_ANNOTATION], before.address);
    const ips = await Promise.all(workers.map(podIP));
    assert.deepEqual(fetchFromPod(workers[0]!, [url(ips[1]!)]), [ips[0]]);
    await waitEntries(w2, [workers[0]!, workers[2]!], 'both peers after the restart');
  });

  it("removes a deleted Node's route, neighbour and FDB entry from the others, and only those", async () => {
    const [w1, w2, w3] = workers as [NetnsWorker, NetnsWorker, NetnsWorker];
    const started = Date.now();
    await api('DELETE', `/api/v1/nodes/${w3.nodeName}`);
    await Promise.all([waitEntries(w1, [w2], `only ${w2.machine.name}`), waitEntries(w2, [w1], `only ${w1.machine.name}`)]);
    timings.push(`a deleted node's entries gone from the others ${Date.now() - started} ms after the delete`);
    const ips = await Promise.all([w1, w2].map(podIP));
    assert.deepEqual(fetchFromPod(w1, [url(ips[1]!)]), [ips[0]]);
  });
});
