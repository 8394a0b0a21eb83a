// Benchmark of the service proxy: render+apply time of the iptables rules at 100, 1,000 and 5,000 services, and request latency through a ClusterIP against the same pod by pod IP (plus DNS query latency from a pod); prints one JSON object (progress goes to stderr).
//
// (a) rules: in a network namespace of its own (so the host's iptables is untouched), the real
// applier syncs N services of one TCP port and two fake endpoints each: the first (full) sync
// from nothing, a sync that changes nothing, a forced full resync, and then BENCH_ADD_REPEAT
// times adding one more service (the figure kube-proxy's iptables mode is known for: about
// 1.3 s at 1,000 and 6.5 s at 5,000 services to add one).
// (b) latency: a simulated two-machine cluster (test/helpers/netns-node.ts), an nginx pod on
// machine 1 behind a ClusterIP service with that one endpoint, and a client pod on each machine
// sending BENCH_REQUESTS sequential GETs (a new connection each, so every request passes the
// NAT rules) alternately to the pod IP and to the ClusterIP, interleaved in BENCH_ROUNDS rounds.
// Then DNS: UDP queries from a pod for kube-dns's own name at 10.96.0.10 (through the proxy to
// the node-local server) and at the node's DNS address directly.
// Everything made is removed at the end, also on failure or Ctrl-C.
import { spawnSync } from 'node:child_process';
import { cpus } from 'node:os';
import { execa } from 'execa';
import type { Endpoints } from '../src/core/api/endpoints.js';
import type { Node } from '../src/core/api/node.js';
import type { Pod } from '../src/core/api/pod.js';
import type { Service } from '../src/core/api/service.js';
import { waitFor } from '../src/core/wait-for.js';
import { NetCommandError, type NetRunner } from '../src/net/net-command.js';
import { syncProxyIptables, type ProxyApplyState } from '../src/net/proxy/proxy-iptables.js';
import { renderProxyRules } from '../src/net/proxy/proxy-rules.js';
import { podNetworkConfig } from '../src/core/api/ipv4.js';
import { BINARY } from '../test/helpers/master.js';
import { createNetnsCluster, findExecutable, netnsSkipReason, type NetnsCluster, type NetnsWorker } from '../test/helpers/netns-node.js';

const SIZES = (process.env.BENCH_SIZES ?? '100,1000,5000').split(',').map(Number);
const ADD_REPEAT = Number(process.env.BENCH_ADD_REPEAT ?? 5);
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 1000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 4);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 100);
const DNS_QUERIES = Number(process.env.BENCH_DNS_QUERIES ?? 1000);
const SKIP_LATENCY = process.env.BENCH_SKIP_LATENCY === '1';
const NS = `bench-proxy-${process.pid}`;
/** kube-proxy iptables mode, time to add one service's rules (the figures the issue quotes). */
const KUBE_PROXY_ADD_ONE_MS: Record<number, number> = { 1000: 1300, 5000: 6500 };
const SERVICE_IP = '10.96.88.20';

const startedAt = performance.now();
function log(message: string): void {
  process.stderr.write(`[proxy ${((performance.now() - startedAt) / 1000).toFixed(1)}s] ${message}\n`);
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}
const median = (xs: number[]) =>
  percentile(
    [...xs].sort((a, b) => a - b),
    50,
  );
const round1 = (n: number) => Math.round(n * 10) / 10;
const round2 = (n: number) => Math.round(n * 100) / 100;

function figures(samplesUs: number[], errors: number) {
  const sorted = [...samplesUs].sort((a, b) => a - b);
  const ms = (us: number) => Math.round(us) / 1000;
  return {
    requests: samplesUs.length,
    errors,
    p50Ms: ms(percentile(sorted, 50)),
    p99Ms: ms(percentile(sorted, 99)),
    meanMs: ms(samplesUs.reduce((a, b) => a + b, 0) / Math.max(1, samplesUs.length)),
  };
}

// ---------------------------------------------------------------------------------------------
// (a) render and apply at scale, in a network namespace of our own

function fakeServices(n: number): { services: Service[]; endpoints: Endpoints[] } {
  const services: Service[] = [];
  const endpoints: Endpoints[] = [];
  for (let i = 0; i < n; i++) {
    const name = `svc-${i}`;
    // 10.96.0.0/16 holds 65,536: i + 256 keeps clear of 10.96.0.x.
    const ip = `10.96.${Math.floor((i + 256) / 256)}.${(i + 256) % 256}`;
    services.push({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { namespace: 'bench', name },
      spec: { type: 'ClusterIP', clusterIP: ip, sessionAffinity: 'None', ports: [{ name: 'http', port: 80, targetPort: 8080, protocol: 'TCP' }] },
      status: {},
    } as Service);
    endpoints.push({
      apiVersion: 'v1',
      kind: 'Endpoints',
      metadata: { namespace: 'bench', name },
      subsets: [
        {
          addresses: [{ ip: `10.244.${i % 250}.${2 + (i % 200)}` }, { ip: `10.244.${(i + 1) % 250}.${3 + (i % 200)}` }],
          ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
        },
      ],
    } as Endpoints);
  }
  return { services, endpoints };
}

/** Runs the tools inside the namespace: the host's tables are never touched. */
function netnsRunner(netns: string): NetRunner {
  const nsenter = findExecutable('nsenter')!;
  return async (command) => {
    const tool = findExecutable(command.tool);
    if (!tool) throw new NetCommandError(command, `${command.tool} is not installed`);
    try {
      const r = await execa(nsenter, [`--net=/run/netns/${netns}`, '--', tool, ...command.args], {
        input: command.input,
        timeout: 120_000,
        stripFinalNewline: false,
      });
      return r.stdout;
    } catch (err) {
      throw new NetCommandError(command, ((err as { stderr?: string }).stderr ?? String(err)).trim(), { cause: err });
    }
  };
}

async function ruleScale(): Promise<unknown[]> {
  const ip = findExecutable('ip')!;
  const results: unknown[] = [];
  for (const size of SIZES) {
    const netns = `mk8s-bench-proxy-${process.pid}`;
    await execa(ip, ['netns', 'add', netns]);
    try {
      const run = netnsRunner(netns);
      const all = fakeServices(size + ADD_REPEAT);
      let count = size;
      const render = (existing: { nat: string[]; filter: string[] }) =>
        renderProxyRules({
          services: all.services.slice(0, count),
          endpoints: all.endpoints.slice(0, count),
          clusterCIDR: '10.244.0.0/16',
          existingChains: existing,
        });
      const state: ProxyApplyState = { applied: {} };
      const timed = async (full = false) => {
        const t = performance.now();
        const r = await syncProxyIptables(run, render, state, { full });
        return {
          totalMs: performance.now() - t,
          readMs: r.readMs,
          renderMs: r.renderMs,
          restoreMs: r.restoreMs,
          restored: r.restored,
          rules: r.rules,
          chainsWritten: r.chainsWritten,
        };
      };
      const first = await timed();
      const natRules = first.rules.nat.rules.length;
      const natChains = first.rules.nat.chains.length;
      const noop = await timed();
      if (noop.restored.length) throw new Error(`a sync with nothing changed restored ${noop.restored.join(', ')}`);
      const fullResync = await timed(true);
      const adds: Awaited<ReturnType<typeof timed>>[] = [];
      for (let i = 0; i < ADD_REPEAT; i++) {
        count++;
        adds.push(await timed());
      }
      // Proof the rules are in the kernel: the namespace's nat table holds every service's chain.
      const saved = await run({ tool: 'iptables-save', args: ['-t', 'nat'] });
      const svcChains = saved.split('\n').filter((l) => l.startsWith(':MINIK8S-SVC-')).length;
      if (svcChains !== count) throw new Error(`expected ${count} service chains in the kernel, found ${svcChains}`);
      const addOne = {
        totalMs: round1(median(adds.map((a) => a.totalMs))),
        readMs: round1(median(adds.map((a) => a.readMs))),
        renderMs: round1(median(adds.map((a) => a.renderMs))),
        restoreMs: round1(median(adds.map((a) => a.restoreMs))),
      };
      const peer = KUBE_PROXY_ADD_ONE_MS[size];
      results.push({
        services: size,
        endpointsPerService: 2,
        natRules,
        natChains,
        firstSyncMs: { total: round1(first.totalMs), read: round1(first.readMs), render: round1(first.renderMs), restore: round1(first.restoreMs) },
        noChangeSyncMs: { total: round1(noop.totalMs), read: round1(noop.readMs), render: round1(noop.renderMs) },
        fullResyncMs: {
          total: round1(fullResync.totalMs),
          read: round1(fullResync.readMs),
          render: round1(fullResync.renderMs),
          restore: round1(fullResync.restoreMs),
        },
        addOneServiceMs: { ...addOne, chainsWritten: adds[0]!.chainsWritten, samples: adds.map((a) => round1(a.totalMs)) },
        ...(peer ? { kubeProxyIptablesAddOneMs: peer, ratioToKubeProxy: round2(addOne.totalMs / peer) } : {}),
      });
      log(
        `${size} services: first sync ${round1(first.totalMs)} ms, no-change ${round1(noop.totalMs)} ms, full resync ${round1(fullResync.totalMs)} ms, add one ${addOne.totalMs} ms (${natRules} nat rules)`,
      );
    } finally {
      await execa(ip, ['netns', 'delete', netns]).catch((err) => log(`could not delete netns ${netns}: ${err}`));
    }
  }
  return results;
}

// ---------------------------------------------------------------------------------------------
// (b) request latency through a ClusterIP, and DNS

/** N GETs to http://HOST/ one after another, a new connection each; prints {"us": [...], "errors": n}. */
const CLIENT = [
  'import sys, time, json, http.client',
  'lat, errors = {h: [] for h in sys.argv[2:]}, {h: 0 for h in sys.argv[2:]}',
  'for i in range(int(sys.argv[1])):',
  '  for host in sys.argv[2:]:',
  '    t = time.perf_counter()',
  '    try:',
  '      conn = http.client.HTTPConnection(host, 80, timeout=5)',
  '      conn.request("GET", "/"); conn.getresponse().read(); conn.close()',
  '      lat[host].append(round((time.perf_counter() - t) * 1e6))',
  '    except Exception:',
  '      errors[host] += 1',
  'print(json.dumps({"us": lat, "errors": errors}))',
].join('\n');

/** N UDP DNS queries for an A record to SERVER:53; prints {"us": [...], "errors": n, "answer": "a.b.c.d"}. */
const DNS_CLIENT = [
  'import sys, time, json, socket, struct, random',
  'name, n = sys.argv[1], int(sys.argv[2])',
  'qname = b"".join(bytes([len(p)]) + p.encode() for p in name.strip(".").split(".")) + b"\\0"',
  'out = {}',
  'for server in sys.argv[3:]:',
  '  lat, errors, answer = [], 0, None',
  '  s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.settimeout(2)',
  '  for i in range(n):',
  '    qid = random.randrange(65536)',
  '    q = struct.pack(">HHHHHH", qid, 0x0100, 1, 0, 0, 0) + qname + struct.pack(">HH", 1, 1)',
  '    t = time.perf_counter()',
  '    try:',
  '      s.sendto(q, (server, 53))',
  '      while True:',
  '        r, _ = s.recvfrom(4096)',
  '        if struct.unpack(">H", r[:2])[0] == qid: break',
  '      lat.append(round((time.perf_counter() - t) * 1e6))',
  '      if answer is None and struct.unpack(">H", r[6:8])[0] > 0: answer = ".".join(str(b) for b in r[-4:])',
  '    except Exception:',
  '      errors += 1',
  '  out[server] = {"us": lat, "errors": errors, "answer": answer}',
  'print(json.dumps(out))',
].join('\n');

async function latency(): Promise<Record<string, unknown>> {
  let cluster: NetnsCluster | undefined;
  const stop = () => {
    log('interrupted: removing everything');
    void (cluster?.destroy() ?? Promise.resolve()).finally(() => process.exit(130));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  try {
    log('building a two-machine cluster (a master on a bridge, two workers in network namespaces, each with its own dockerd)');
    cluster = await createNetnsCluster({ machines: ['x1', 'x2'], tls: false, log });
    const c = cluster;
    const [w1, w2] = c.workers as [NetnsWorker, NetnsWorker];
    const api = async (method: string, path: string, body?: unknown): Promise<unknown> => {
      const request = () =>
        fetch(`${c.master.url}${path}`, {
          method,
          headers: { authorization: `Bearer ${c.master.token}`, 'content-type': 'application/json' },
          body: body === undefined ? undefined : JSON.stringify(body),
          signal: AbortSignal.timeout(30_000),
        });
      // A kept-alive connection the server closed while the clients ran fails the next request once ("fetch failed"): a read is tried again.
      const res = await request().catch((err) => {
        if (method !== 'GET') throw err;
        return request();
      });
      const json = (await res.json()) as { message?: string } | null;
      if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${json?.message}`);
      return json;
    };
    const makePod = (name: string, w: NetnsWorker, container: Record<string, unknown>) =>
      api('POST', `/api/v1/namespaces/${NS}/pods`, {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name, namespace: NS },
        spec: { nodeName: w.nodeName, containers: [container] },
      });
    await api('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
    await Promise.all([
      makePod('server', w1, { name: 'nginx', image: 'nginx:1.22', readinessProbe: { tcpSocket: { port: 80 }, periodSeconds: 1 } }),
      makePod('client-same-node', w1, { name: 'client', image: 'python:3.11', command: ['sleep', '36000'] }),
      makePod('client-other-node', w2, { name: 'client', image: 'python:3.11', command: ['sleep', '36000'] }),
    ]);
    const ready = (name: string) =>
      waitFor(
        async () => {
          const pod = (await api('GET', `/api/v1/namespaces/${NS}/pods/${name}`)) as Pod;
          return pod.status?.conditions?.some((x) => x.type === 'Ready' && x.status === 'True') ? pod : undefined;
        },
        { timeoutMs: 300_000, intervalMs: 250, description: `pod ${name} to be ready` },
      );
    const [server] = await Promise.all([ready('server'), ready('client-same-node'), ready('client-other-node')]);
    const serverIP = server.status!.podIP!;
    // A service with exactly that pod behind it (no selector: the bench owns the Endpoints), so both paths reach the same nginx.
    await api('POST', `/api/v1/namespaces/${NS}/services`, {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'web', namespace: NS },
      spec: { clusterIP: SERVICE_IP, ports: [{ name: 'http', port: 80, targetPort: 80, protocol: 'TCP' }] },
    });
    await api('POST', `/api/v1/namespaces/${NS}/endpoints`, {
      apiVersion: 'v1',
      kind: 'Endpoints',
      metadata: { name: 'web', namespace: NS },
      subsets: [{ addresses: [{ ip: serverIP, nodeName: w1.nodeName }], ports: [{ name: 'http', port: 80, protocol: 'TCP' }] }],
    });
    const nsenter = findExecutable('nsenter')!;
    const iptablesSave = findExecutable('iptables-save')!;
    await Promise.all(
      [w1, w2].map((w) =>
        waitFor(
          () =>
            spawnSync(nsenter, [`--net=/run/netns/${w.machine.netns}`, '--', iptablesSave, '-t', 'nat'], { encoding: 'utf8' }).stdout.includes(
              `--to-destination ${serverIP}:80`,
            ),
          {
            timeoutMs: 30_000,
            intervalMs: 200,
            description: `${w.machine.name}'s rules for the service`,
          },
        ),
      ),
    );
    log(`pods ready: nginx at ${serverIP} (ClusterIP ${SERVICE_IP}) on ${w1.nodeName}; clients on ${w1.nodeName} and ${w2.nodeName}`);

    const exec = (client: string, script: string, args: string[]) => {
      const r = spawnSync(process.execPath, [BINARY, 'exec', '-n', NS, client, '--', 'python3', '-c', script, ...args], {
        env: c.master.env,
        encoding: 'utf8',
        timeout: 10 * 60_000,
        maxBuffer: 64 * 1024 * 1024,
      });
      if (r.status !== 0) throw new Error(`exec in ${client} exited ${r.status ?? r.signal}: ${r.stderr}`);
      return JSON.parse(r.stdout);
    };

    const http: Record<string, unknown> = {};
    for (const client of ['client-same-node', 'client-other-node']) {
      exec(client, CLIENT, [String(WARMUP), serverIP, SERVICE_IP]);
      const direct = { us: [] as number[], errors: 0 };
      const viaService = { us: [] as number[], errors: 0 };
      for (let i = 0; i < ROUNDS; i++) {
        // Alternating which goes first, request by request, so that load elsewhere falls on both alike.
        const order = i % 2 === 0 ? [serverIP, SERVICE_IP] : [SERVICE_IP, serverIP];
        const r = exec(client, CLIENT, [String(Math.ceil(REQUESTS / ROUNDS)), ...order]) as { us: Record<string, number[]>; errors: Record<string, number> };
        direct.us.push(...r.us[serverIP]!);
        direct.errors += r.errors[serverIP]!;
        viaService.us.push(...r.us[SERVICE_IP]!);
        viaService.errors += r.errors[SERVICE_IP]!;
        log(`${client}: round ${i + 1}/${ROUNDS} done`);
      }
      const d = figures(direct.us, direct.errors);
      const s = figures(viaService.us, viaService.errors);
      http[client === 'client-same-node' ? 'sameNode' : 'otherNode'] = {
        podIP: d,
        clusterIP: s,
        ratio: { p50: round2(s.p50Ms / d.p50Ms), p99: round2(s.p99Ms / d.p99Ms), mean: round2(s.meanMs / d.meanMs) },
      };
    }

    // DNS, if the cluster serves it: kube-dns's own name, through 10.96.0.10 and at the node's DNS server directly.
    let dns: Record<string, unknown>;
    const nodeDns = podNetworkConfig(((await api('GET', `/api/v1/nodes/${w2.nodeName}`)) as Node).spec.podCIDR!).gateway;
    const kubeDns = await (api('GET', '/api/v1/namespaces/kube-system/services/kube-dns') as Promise<Service>).catch(() => undefined);
    if (!kubeDns) {
      dns = { skipped: 'no kube-system/kube-dns service in this build' };
    } else {
      const name = 'kube-dns.kube-system.svc.cluster.local';
      const viaService = kubeDns.spec.clusterIP as string;
      exec('client-other-node', DNS_CLIENT, [name, String(WARMUP), viaService, nodeDns]);
      const r = exec('client-other-node', DNS_CLIENT, [name, String(DNS_QUERIES), viaService, nodeDns]) as Record<
        string,
        { us: number[]; errors: number; answer: string | null }
      >;
      const s = r[viaService]!;
      const d = r[nodeDns]!;
      if (s.us.length === 0) {
        dns = { skipped: `no answer from ${viaService} (${s.errors} errors): is the node-local DNS server on in this build?` };
      } else {
        const fs = figures(s.us, s.errors);
        const fd = figures(d.us, d.errors);
        dns = {
          query: `A ${name} over UDP from a pod on ${w2.nodeName}`,
          answer: s.answer,
          viaClusterIP: { server: `${viaService}:53`, ...fs },
          nodeServerDirect: { server: `${nodeDns}:53`, ...fd },
          ratio: { p50: round2(fs.p50Ms / fd.p50Ms), p99: round2(fs.p99Ms / fd.p99Ms) },
        };
      }
    }
    return {
      requestsPerCase: REQUESTS,
      rounds: ROUNDS,
      warmupPerCase: WARMUP,
      client: 'python3 http.client in a python:3.11 pod, sequential GETs, a new connection each (every request passes the DNAT), 5 s timeout',
      server: 'nginx:1.22 pod on machine 1; the ClusterIP service has that one endpoint',
      target: 'ClusterIP / pod IP <= 1.1',
      http,
      dns,
    };
  } finally {
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
    log('removing the cluster');
    await cluster?.destroy();
  }
}

async function main(): Promise<void> {
  const skip = netnsSkipReason();
  if (skip) throw new Error(`cannot make network namespaces here: ${skip}`);
  log(`rules: ${SIZES.join(', ')} services, two endpoints each, in a network namespace of our own`);
  const rules = await ruleScale();
  const requests = SKIP_LATENCY ? { skipped: 'BENCH_SKIP_LATENCY=1' } : await latency();
  process.stdout.write(
    `${JSON.stringify(
      {
        benchmark: 'proxy',
        what: 'service proxy (iptables mode): time to sync the rules for N services, and request latency through a ClusterIP against the same pod by pod IP',
        rules: {
          how: "the proxy's applier in a fresh network namespace: a full sync (iptables-save of nat and filter, render, one iptables-restore --noflush per table rewriting every chain: the first, and every 5 minutes) and incremental syncs (the built-in chains read with iptables -S, render, one restore of only the chains that changed); addOneService is the median of adding one service at a time",
          peer: 'kube-proxy iptables mode: about 1.3 s at 1,000 and 6.5 s at 5,000 services to add one rule (published figures)',
          results: rules,
        },
        latency: requests,
        machine: {
          cores: cpus().length,
          cpu: cpus()[0]?.model,
          iptables: spawnSync(findExecutable('iptables')!, ['--version'], { encoding: 'utf8' }).stdout.trim(),
        },
      },
      null,
      2,
    )}\n`,
  );
}

await main().catch((err) => {
  process.stderr.write(`proxy: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = 1;
});
