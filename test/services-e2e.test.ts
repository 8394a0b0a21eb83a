// End to end on three simulated machines: ClusterIP and NodePort services through every node's proxy, endpoints following replicas, traffic through a master crash, cluster DNS from pods and hosts, the DNS kind's gateway, and bad input that never breaks the rule set.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Dns } from '../src/core/api/dns.js';
import type { Endpoints } from '../src/core/api/endpoints.js';
import type { Pod } from '../src/core/api/pod.js';
import type { Service } from '../src/core/api/service.js';
import type { Status } from '../src/core/errors.js';
import { waitFor } from '../src/core/wait-for.js';
import { BINARY } from './helpers/master.js';
import { createNetnsCluster, findExecutable, netnsSkipReason, type NetnsCluster, type NetnsWorker } from './helpers/netns-node.js';

const NS = `svc-e2e-${process.pid}`;
const resolvePackage = createRequire(import.meta.url).resolve;
const skip = netnsSkipReason();
const GATEWAY_HOST = 'shop.minik8s.test';
/** The name our own upstream resolver answers, to show that names outside the cluster are forwarded. */
const EXTERNAL_NAME = 'upstream-only.example.test';
const EXTERNAL_IP = '192.0.2.77';

/** A python HTTP server answering with its name (and, on /path, the path it was asked for). */
function serverContainer(name: string) {
  return {
    name: 'web',
    image: 'python:3.11',
    ports: [{ name: 'http', containerPort: 8080 }],
    command: [
      'python3',
      '-u',
      '-c',
      [
        'import http.server, os',
        'class H(http.server.BaseHTTPRequestHandler):',
        '    def do_GET(self):',
        '        body = (os.environ["NAME"] + " " + self.path).encode()',
        '        self.send_response(200); self.send_header("Content-Length", str(len(body))); self.end_headers(); self.wfile.write(body)',
        '    def log_message(self, *a): pass',
        'http.server.ThreadingHTTPServer(("", 8080), H).serve_forever()',
      ].join('\n'),
    ],
    env: [{ name: 'NAME', value: name }],
    readinessProbe: { httpGet: { path: '/', port: 8080 }, periodSeconds: 1 },
  };
}

/** A python client run in a pod: N requests to URL (a new connection each), prints JSON {answers: {body: count}, errors: [...]}. */
const CLIENT = [
  'import json, sys, urllib.request',
  'url, n = sys.argv[1], int(sys.argv[2])',
  'answers, errors = {}, []',
  'for i in range(n):',
  '    try:',
  '        body = urllib.request.urlopen(url, timeout=5).read().decode().split(" ")[0]',
  '        answers[body] = answers.get(body, 0) + 1',
  '    except Exception as e:',
  '        errors.append(type(e).__name__ + ": " + str(e))',
  'print(json.dumps({"answers": answers, "errors": errors}))',
].join('\n');

describe('services, DNS and the gateway on three machines', { skip }, () => {
  let cluster: NetnsCluster;
  let workers: NetnsWorker[];
  let upstream: ChildProcess | undefined;
  let scratch: string;
  const timings: string[] = [];

  const master = () => cluster.master;
  const cli = (...args: string[]) => spawnSync(process.execPath, [BINARY, ...args], { env: master().env, encoding: 'utf8', timeout: 60_000 });
  /** The answer, its JSON as the caller says it is. */
  const call = async <T = unknown>(method: string, path: string, body?: unknown): Promise<{ status: number; body: T }> => {
    const send = () =>
      fetch(`${master().url}${path}`, {
        method,
        headers: { authorization: `Bearer ${master().token}`, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    // While this process sat in spawnSync the server may have closed the idle kept-alive connection
    // without our noticing: a request on it fails before it was sent, so sending it once more is safe.
    const res = await send().catch((err: Error & { cause?: { code?: string } }) => {
      if (err.cause?.code !== 'UND_ERR_SOCKET' && err.cause?.code !== 'ECONNRESET') throw err;
      return send();
    });
    return { status: res.status, body: (await res.json()) as T };
  };
  const api = async <T = unknown>(method: string, path: string, body?: unknown) => {
    const res = await call(method, path, body);
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${(res.body as { message?: string } | null)?.message}`);
    return res.body as T;
  };
  const createPod = (name: string, nodeName: string, containers: unknown[], labels: Record<string, string> = {}) =>
    api('POST', `/api/v1/namespaces/${NS}/pods`, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, namespace: NS, labels },
      spec: { nodeName, terminationGracePeriodSeconds: 2, containers },
    });
  const waitReady = (name: string) =>
    waitFor(
      async () => {
        const pod = await api<Pod>('GET', `/api/v1/namespaces/${NS}/pods/${name}`);
        return pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ? pod : undefined;
      },
      { timeoutMs: 120_000, intervalMs: 200, description: `pod ${name} to be Ready` },
    );
  const endpointIPs = async (service: string) => {
    const ep = await call<Endpoints | null>('GET', `/api/v1/namespaces/${NS}/endpoints/${service}`);
    return (ep.body?.subsets ?? []).flatMap((s) => (s.addresses ?? []).map((a) => a.ip)).sort();
  };
  const exec = (pod: string, ...command: string[]) => cli('exec', pod, '-n', NS, '--', ...command);
  const fromPod = (pod: string, url: string, n: number) => {
    const r = exec(pod, 'python3', '-c', CLIENT, url, String(n));
    assert.equal(r.status, 0, `client in ${pod}: ${r.stderr}`);
    return JSON.parse(r.stdout) as { answers: Record<string, number>; errors: string[] };
  };
  const onHost = (w: NetnsWorker, ...command: string[]) =>
    spawnSync(findExecutable('nsenter')!, [`--net=/var/run/netns/${w.machine.netns}`, '--', ...command], { encoding: 'utf8', timeout: 60_000 });
  /** What a program on node w's host gets from URL after resolving its host name through the cluster DNS (10.96.0.10). */
  const fromHost = (w: NetnsWorker, url: string) => {
    const r = onHost(w, process.execPath, join(scratch, 'host-get.mjs'), url);
    return { ok: r.status === 0, out: r.stdout.trim(), err: r.stderr.trim() };
  };
  const serviceIP = async (name: string) => (await api<Service>('GET', `/api/v1/namespaces/${NS}/services/${name}`)).spec.clusterIP as string;

  before(
    async () => {
      scratch = mkdtempSync(join(tmpdir(), 'minik8s-svc-e2e-'));
      // What a node's host runs: resolve through the cluster DNS, then GET (a curl that asks 10.96.0.10).
      writeFileSync(
        join(scratch, 'host-get.mjs'),
        [
          "import { Resolver } from 'node:dns/promises';",
          'const url = new URL(process.argv[2]);',
          "const r = new Resolver({ timeout: 3000, tries: 2 }); r.setServers(['10.96.0.10']);",
          'const ip = /^[0-9.]+$/.test(url.hostname) ? url.hostname : (await r.resolve4(url.hostname))[0];',
          // node:http, not fetch: fetch does not let a caller set Host, and the gateway picks its server by it.
          "import { get } from 'node:http';",
          'get({ host: ip, port: url.port || 80, path: url.pathname, headers: { host: url.host }, timeout: 5000 }, (res) => {',
          "  let body = ''; res.on('data', (d) => { body += d; });",
          // biome-ignore lint/suspicious/noTemplateCurlyInString: the line is the source of a script written to a file, where the template literal is meant
          "  res.on('end', () => { process.stdout.write(body); if (res.statusCode !== 200) console.error(`HTTP ${res.statusCode}`); process.exit(res.statusCode === 200 ? 0 : 1); });",
          "}).on('error', (err) => { console.error(err.message); process.exit(1); }).on('timeout', function () { this.destroy(new Error('timed out')); });",
        ].join('\n'),
      );

      // Our own upstream resolver on the host, the only one to know EXTERNAL_NAME. A process of its own:
      // this one blocks in spawnSync while a pod resolves through it.
      writeFileSync(
        join(scratch, 'upstream.mjs'),
        [
          "import { createSocket } from 'node:dgram';",
          `import dnsPacket from ${JSON.stringify(resolvePackage('dns-packet'))};`,
          "const socket = createSocket('udp4');",
          "socket.on('message', (msg, rinfo) => {",
          '  const q = dnsPacket.decode(msg);',
          '  const question = q.questions?.[0];',
          `  const known = question?.name.toLowerCase() === ${JSON.stringify(EXTERNAL_NAME)} && question.type === 'A';`,
          "  socket.send(dnsPacket.encode({ id: q.id, type: 'response', flags: dnsPacket.RECURSION_DESIRED | dnsPacket.RECURSION_AVAILABLE | (known ? 0 : 3),",
          `    questions: q.questions, answers: known ? [{ type: 'A', name: question.name, ttl: 30, data: ${JSON.stringify(EXTERNAL_IP)} }] : [] }), rinfo.port, rinfo.address);`,
          '});',
          "socket.bind(0, '0.0.0.0', () => console.log(socket.address().port));",
          // Ends with the test, even a killed one.
          "process.stdin.resume(); process.stdin.on('end', () => process.exit(0));",
        ].join('\n'),
      );
      upstream = spawn(process.execPath, [join(scratch, 'upstream.mjs')], { stdio: ['pipe', 'pipe', 'inherit'] });
      const upstreamPort = await new Promise<number>((resolve, reject) => {
        upstream!.stdout!.once('data', (d) => resolve(Number(String(d).trim())));
        upstream!.once('exit', (code) => reject(new Error(`the test's upstream resolver exited (${code})`)));
      });

      cluster = await createNetnsCluster({
        machines: ['s1', 's2', 's3'],
        workerArgs: ({ hostIP }) => ['--dns-upstream', `${hostIP}:${upstreamPort}`],
        log: (line) => timings.push(line),
      });
      workers = cluster.workers;
      await api('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
      await Promise.all([
        ...workers.map((w, i) => createPod(`web-${i}`, w.nodeName, [serverContainer(`web-${i}`)], { app: 'web' })),
        ...workers.map((w, i) => createPod(`client-${i}`, w.nodeName, [{ name: 'c', image: 'python:3.11', command: ['sleep', '3600'] }])),
        createPod('other', workers[1]!.nodeName, [serverContainer('other')], { app: 'other' }),
      ]);
      await api('POST', `/api/v1/namespaces/${NS}/services`, {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: 'web' },
        spec: { selector: { app: 'web' }, ports: [{ name: 'http', port: 80, targetPort: 'http' }] },
      });
      await api('POST', `/api/v1/namespaces/${NS}/services`, {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: 'web-np' },
        spec: { type: 'NodePort', selector: { app: 'web' }, ports: [{ port: 80, targetPort: 8080 }] },
      });
      await api('POST', `/api/v1/namespaces/${NS}/services`, {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: 'other' },
        spec: { selector: { app: 'other' }, ports: [{ port: 8000, targetPort: 8080 }] },
      });
      await Promise.all([0, 1, 2].flatMap((i) => [waitReady(`web-${i}`), waitReady(`client-${i}`)]).concat(waitReady('other')));
      await waitFor(async () => (await endpointIPs('web')).length === 3, { timeoutMs: 10_000, description: 'three web endpoints' });
    },
    { timeout: 20 * 60_000 },
  );

  after(
    async () => {
      upstream?.kill();
      if (scratch) rmSync(scratch, { recursive: true, force: true });
      const started = Date.now();
      try {
        await cluster?.destroy();
      } finally {
        timings.push(`cleanup took ${((Date.now() - started) / 1000).toFixed(1)} s`);
        console.log(`services-e2e timings:\n  ${timings.join('\n  ')}`);
      }
    },
    { timeout: 120_000 },
  );

  it('gives services addresses from 10.96.0.0/16 and node ports from 30000-32767; kube-dns holds 10.96.0.10', async () => {
    assert.match(await serviceIP('web'), /^10\.96\.\d+\.\d+$/);
    const np = await api<Service>('GET', `/api/v1/namespaces/${NS}/services/web-np`);
    assert.ok(np.spec.ports[0].nodePort! >= 30000 && np.spec.ports[0].nodePort! <= 32767);
    const dns = await api<Service>('GET', '/api/v1/namespaces/kube-system/services/kube-dns');
    assert.equal(dns.spec.clusterIP, '10.96.0.10');
    const listed = cli('get', 'svc', '-n', NS);
    assert.match(listed.stdout, new RegExp(`web-np\\s+NodePort\\s+10\\.96\\.\\S+\\s+<none>\\s+80:${np.spec.ports[0].nodePort}/TCP`));
  });

  it('reaches a ClusterIP from a pod on every node, spreading 300 requests over the three replicas (each at least 20%)', async () => {
    const ip = await serviceIP('web');
    for (const i of [0, 1, 2]) {
      const got = fromPod(`client-${i}`, `http://${ip}/`, i === 0 ? 300 : 30);
      assert.deepEqual(got.errors, [], `client-${i}`);
      if (i === 0) {
        for (const r of ['web-0', 'web-1', 'web-2'])
          assert.ok((got.answers[r] ?? 0) >= 60, `${r} served ${got.answers[r] ?? 0} of 300: ${JSON.stringify(got.answers)}`);
      } else {
        assert.equal(
          Object.values(got.answers).reduce((a, b) => a + b, 0),
          30,
        );
      }
    }
  });

  it("reaches the ClusterIP from every node's host, and the NodePort on every node's address", async () => {
    const ip = await serviceIP('web');
    const nodePort = (await api<Service>('GET', `/api/v1/namespaces/${NS}/services/web-np`)).spec.ports[0].nodePort;
    for (const w of workers) {
      const r = fromHost(w, `http://${ip}/`);
      assert.ok(r.ok, `${w.machine.name} -> ${ip}: ${r.err}`);
      assert.match(r.out, /^web-\d \/$/);
    }
    // From outside every node (the master's host, on the bridge), to each node's own address.
    for (const w of workers) {
      const seen = new Set<string>();
      for (let i = 0; i < 20; i++) {
        const res = await fetch(`http://${w.machine.ip}:${nodePort}/`, { signal: AbortSignal.timeout(5000) });
        assert.equal(res.status, 200);
        seen.add((await res.text()).split(' ')[0]!);
      }
      assert.ok(seen.size >= 2, `node port on ${w.machine.name} reached only ${[...seen].join(', ')}`);
    }
  });

  it('takes a deleted replica out of rotation (no failed request once its endpoint is gone) and adds a new one', async () => {
    const ip = await serviceIP('web');
    const gone = (await api<Pod>('GET', `/api/v1/namespaces/${NS}/pods/web-2`)).status!.podIP!;
    await api('DELETE', `/api/v1/namespaces/${NS}/pods/web-2`);
    const t0 = Date.now();
    await waitFor(async () => !(await endpointIPs('web')).includes(gone), { timeoutMs: 5_000, intervalMs: 50, description: 'web-2 out of the endpoints' });
    timings.push(`deleted replica left the endpoints after ${Date.now() - t0} ms`);
    const after = fromPod('client-0', `http://${ip}/`, 100);
    assert.deepEqual(after.errors, []);
    assert.equal(after.answers['web-2'], undefined);

    await createPod('web-3', workers[2]!.nodeName, [serverContainer('web-3')], { app: 'web' });
    const added = (await waitReady('web-3')).status!.podIP!;
    await waitFor(async () => (await endpointIPs('web')).includes(added), { timeoutMs: 5_000, description: 'web-3 in the endpoints' });
    const withNew = await waitFor(
      () => {
        const got = fromPod('client-1', `http://${ip}/`, 60);
        return got.answers['web-3'] ? got : undefined;
      },
      { timeoutMs: 20_000, description: 'web-3 to take requests' },
    );
    assert.deepEqual(withNew.errors, []);
  });

  it('resolves service names in pods on every node (short and full), and forwards other names upstream', async () => {
    const ip = await serviceIP('web');
    const resolve = (pod: string, name: string) => exec(pod, 'python3', '-c', `import socket; print(socket.gethostbyname(${JSON.stringify(name)}))`);
    for (const i of [0, 1, 2]) {
      for (const name of ['web', `web.${NS}`, `web.${NS}.svc`, `web.${NS}.svc.cluster.local`]) {
        const r = resolve(`client-${i}`, name);
        assert.equal(r.status, 0, `${name} in client-${i}: ${r.stderr}`);
        assert.equal(r.stdout.trim(), ip, name);
      }
      const ext = resolve(`client-${i}`, EXTERNAL_NAME);
      assert.equal(ext.status, 0, ext.stderr);
      assert.equal(ext.stdout.trim(), EXTERNAL_IP);
      const missing = resolve(`client-${i}`, `nothing.${NS}.svc.cluster.local`);
      assert.notEqual(missing.status, 0);
    }
    // And by name through the service, from a pod.
    const byName = fromPod('client-2', 'http://web/', 10);
    assert.deepEqual(byName.errors, []);
  });

  it("routes one host's two paths to two services through the gateway, from a pod and from a node's host", async () => {
    await api('POST', `/apis/minik8s.io/v1/namespaces/${NS}/dnses`, {
      apiVersion: 'minik8s.io/v1',
      kind: 'DNS',
      metadata: { name: 'shop' },
      spec: {
        host: GATEWAY_HOST,
        paths: [
          { path: '/path1', serviceName: 'web', servicePort: 80 },
          { path: '/path2', serviceName: 'other', servicePort: 8000 },
        ],
      },
    });
    const fromClient = await waitFor(
      () => {
        const r = exec(
          'client-0',
          'python3',
          '-c',
          `import urllib.request as u; print(u.urlopen("http://${GATEWAY_HOST}/path1/x", timeout=5).read().decode()); print(u.urlopen("http://${GATEWAY_HOST}/path2", timeout=5).read().decode())`,
        );
        return r.status === 0 ? r.stdout.trim().split('\n') : undefined;
      },
      { timeoutMs: 90_000, intervalMs: 1000, description: 'the gateway to answer for both paths' },
    );
    assert.match(fromClient[0]!, /^web-\d \/x$/, 'path1 reaches web with its prefix stripped');
    assert.match(fromClient[1]!, /^other \/$/);
    const host = fromHost(workers[1]!, `http://${GATEWAY_HOST}/path2`);
    assert.ok(host.ok, host.err);
    assert.match(host.out, /^other \/$/);
    const listed = cli('get', 'dns', '-n', NS);
    assert.equal(listed.status, 0, listed.stderr);
    assert.match(listed.stdout, new RegExp(`shop\\s+${GATEWAY_HOST.replace(/\./g, '\\.')}`));
  });

  it('refuses bad input clearly and keeps every rule working', async () => {
    const ip = await serviceIP('web');
    // A selector that matches nothing: no endpoints, a clean refusal.
    await api('POST', `/api/v1/namespaces/${NS}/services`, {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'nobody' },
      spec: { selector: { app: 'nobody' }, ports: [{ port: 80 }] },
    });
    const nobody = await serviceIP('nobody');
    const refused = await waitFor(
      () => {
        const got = fromPod('client-1', `http://${nobody}/`, 1);
        return got.errors[0]?.includes('Connection refused') ? got : undefined;
      },
      { timeoutMs: 10_000, description: 'a service with no endpoints to refuse connections' },
    );
    assert.equal(refused.errors.length, 1);
    // A targetPort name no container declares: no endpoints either.
    await api('POST', `/api/v1/namespaces/${NS}/services`, {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'misnamed' },
      spec: { selector: { app: 'web' }, ports: [{ port: 80, targetPort: 'grpc' }] },
    });
    await waitFor(async () => (await call('GET', `/api/v1/namespaces/${NS}/endpoints/misnamed`)).status === 200, {
      timeoutMs: 5_000,
      description: 'misnamed endpoints',
    });
    assert.deepEqual(await endpointIPs('misnamed'), []);
    // Node ports out of range or taken: 422, nothing written.
    const taken = (await api<Service>('GET', `/api/v1/namespaces/${NS}/services/web-np`)).spec.ports[0].nodePort;
    for (const [nodePort, message] of [
      [80, /provided port is not in the valid range/],
      [taken, /provided port is already allocated/],
    ] as const) {
      const res = await call<Status>('POST', `/api/v1/namespaces/${NS}/services`, {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: `bad-${nodePort}` },
        spec: { type: 'NodePort', selector: { app: 'web' }, ports: [{ port: 80, nodePort }] },
      });
      assert.equal(res.status, 422);
      assert.match(res.body.message, message);
      assert.equal((await call('GET', `/api/v1/namespaces/${NS}/services/bad-${nodePort}`)).status, 404);
    }
    // A DNS object naming a missing service: its condition says so; the other paths keep working.
    await api('POST', `/apis/minik8s.io/v1/namespaces/${NS}/dnses`, {
      apiVersion: 'minik8s.io/v1',
      kind: 'DNS',
      metadata: { name: 'broken' },
      spec: { host: 'broken.minik8s.test', paths: [{ path: '/a', serviceName: 'missing', servicePort: 80 }] },
    });
    const condition = await waitFor(
      async () => {
        const obj = await api<Dns>('GET', `/apis/minik8s.io/v1/namespaces/${NS}/dnses/broken`);
        return obj.status?.conditions?.find((c) => c.type === 'Ready' && c.status === 'False');
      },
      { timeoutMs: 15_000, description: 'the broken DNS object to say why' },
    );
    assert.match(condition.message!, /missing/);
    // Everything that worked still works.
    assert.deepEqual(fromPod('client-2', `http://${ip}/`, 30).errors, []);
    const gateway = exec(
      'client-1',
      'python3',
      '-c',
      `import urllib.request as u; print(u.urlopen("http://${GATEWAY_HOST}/path2", timeout=5).read().decode())`,
    );
    assert.equal(gateway.status, 0, gateway.stderr);
  });

  it('keeps service traffic flowing while the master is down, and a restarted master changes nothing that works', async () => {
    const ip = await serviceIP('web');
    process.kill(master().pid, 'SIGKILL');
    await waitFor(
      async () => {
        try {
          await fetch(`${master().url}/readyz`);
          return false;
        } catch {
          return true;
        }
      },
      { timeoutMs: 10_000, description: 'the master to be gone' },
    );
    // No exec without the master: a node's host reaches the service and the DNS on its own.
    for (const w of workers) {
      const r = fromHost(w, `http://${ip}/`);
      assert.ok(r.ok, `${w.machine.name} with the master down: ${r.err}`);
      const byName = fromHost(w, `http://web.${NS}.svc.cluster.local/`);
      assert.ok(byName.ok, `${w.machine.name} by name with the master down: ${byName.err}`);
    }
    await cluster.restartMaster();
    assert.equal(await serviceIP('web'), ip);
    const got = fromPod('client-0', `http://${ip}/`, 60);
    assert.deepEqual(got.errors, []);
    assert.equal(Object.keys(got.answers).length, 3);
  });
});
