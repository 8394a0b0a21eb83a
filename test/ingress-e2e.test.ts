// End to end on a simulated machine: an Ingress written for Kubernetes, applied with the CLI, routes one host's two paths to two services through the nginx gateway, over HTTP and HTTPS, asked from the node's host.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Ingress } from '../src/core/api/ingress.js';
import type { Pod } from '../src/core/api/pod.js';
import { waitFor } from '../src/core/wait-for.js';
import { BINARY } from './helpers/master.js';
import { createNetnsCluster, findExecutable, netnsSkipReason, type NetnsCluster } from './helpers/netns-node.js';

const NS = `ing-e2e-${process.pid}`;
const HOST = 'shop.ingress.test';
const skip = netnsSkipReason();

/** A python HTTP server answering with its name and the path it was asked for. */
function server(name: string) {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: NS, labels: { app: name } },
    spec: {
      terminationGracePeriodSeconds: 1,
      containers: [
        {
          name: 'web',
          image: 'python:3.11',
          ports: [{ name: 'http', containerPort: 8080 }],
          command: [
            'python3',
            '-u',
            '-c',
            [
              'import http.server',
              'class H(http.server.BaseHTTPRequestHandler):',
              '    def do_GET(self):',
              `        body = ("${name} " + self.path).encode()`,
              '        self.send_response(200); self.send_header("Content-Length", str(len(body))); self.end_headers(); self.wfile.write(body)',
              '    def log_message(self, *a): pass',
              'http.server.ThreadingHTTPServer(("", 8080), H).serve_forever()',
            ].join('\n'),
          ],
          readinessProbe: { httpGet: { path: '/', port: 8080 }, periodSeconds: 1 },
        },
      ],
    },
  };
}

const service = (name: string) => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name, namespace: NS },
  spec: { selector: { app: name }, ports: [{ name: 'http', port: 80, targetPort: 'http' }] },
});

// As a chart would write it: no class (the cluster's default), Prefix and Exact paths, one by port name.
const INGRESS = {
  apiVersion: 'networking.k8s.io/v1',
  kind: 'Ingress',
  metadata: { name: 'shop', namespace: NS },
  spec: {
    rules: [
      {
        host: HOST,
        http: {
          paths: [
            { path: '/a', pathType: 'Prefix', backend: { service: { name: 'alpha', port: { number: 80 } } } },
            { path: '/b', pathType: 'Exact', backend: { service: { name: 'beta', port: { name: 'http' } } } },
          ],
        },
      },
    ],
  },
};

describe('an Ingress served by the gateway on a simulated machine', { skip }, () => {
  let cluster: NetnsCluster;
  let scratch: string;
  const cli = (...args: string[]) => spawnSync(process.execPath, [BINARY, ...args], { env: cluster.master.env, encoding: 'utf8', timeout: 60_000 });
  /** GET http://IP/PATH with Host: HOST from the node's own network (not a pod): prints the status and body. */
  const fromNode = (ip: string, path: string, host = HOST, ca?: string) => {
    const r = spawnSync(
      findExecutable('nsenter')!,
      [`--net=/var/run/netns/${cluster.workers[0]!.machine.netns}`, '--', process.execPath, join(scratch, 'get.mjs'), ip, path, host, ...(ca ? [ca] : [])],
      { encoding: 'utf8', timeout: 30_000 },
    );
    return r.stdout.trim();
  };

  before(
    async () => {
      scratch = mkdtempSync(join(tmpdir(), 'minik8s-ing-e2e-'));
      // node:http, not fetch: fetch does not let a caller set Host, and the gateway picks its server by it.
      writeFileSync(
        join(scratch, 'get.mjs'),
        [
          "import { get } from 'node:http';",
          "import { get as getTls } from 'node:https';",
          "import { readFileSync } from 'node:fs';",
          'const [ip, path, host, ca] = process.argv.slice(2);',
          // With a CA file: HTTPS on 443, the certificate checked against it for the Host's name (SNI picks the server).
          'const tls = ca ? { port: 443, ca: readFileSync(ca), servername: host } : { port: 80 };',
          '(ca ? getTls : get)({ host: ip, path, headers: { host }, timeout: 5000, ...tls }, (res) => {',
          "  let body = ''; res.on('data', (d) => { body += d; });",
          "  res.on('end', () => console.log(res.statusCode + ' ' + body.split('\\n')[0]));",
          "}).on('error', (err) => console.log('error ' + err.message)).on('timeout', function () { this.destroy(new Error('timed out')); });",
        ].join('\n'),
      );
      cluster = await createNetnsCluster({ machines: ['i1'] });
      const files = join(scratch, 'objects.json');
      writeFileSync(
        files,
        JSON.stringify({
          apiVersion: 'v1',
          kind: 'List',
          items: [{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } }, server('alpha'), server('beta'), service('alpha'), service('beta')],
        }),
      );
      const made = cli('apply', '-f', files);
      assert.equal(made.status, 0, made.stderr);
    },
    { timeout: 240_000 },
  );

  after(
    async () => {
      if (scratch) rmSync(scratch, { recursive: true, force: true });
      await cluster?.destroy();
    },
    { timeout: 120_000 },
  );

  it('routes /a (Prefix) and /b (Exact) to two services; other paths get 404', async () => {
    const file = join(scratch, 'ingress.json');
    writeFileSync(file, JSON.stringify(INGRESS));
    const applied = cli('apply', '-f', file);
    assert.equal(applied.status, 0, applied.stderr);
    const ingress = await waitFor(
      async () => {
        const r = cli('get', 'ingress', 'shop', '-n', NS, '-o', 'json');
        const ing = r.status === 0 ? (JSON.parse(r.stdout) as Ingress) : undefined;
        return ing?.status?.loadBalancer?.ingress?.[0]?.ip ? ing : undefined;
      },
      { timeoutMs: 60_000, description: "the gateway's address in the Ingress status" },
    );
    const ip = ingress.status!.loadBalancer!.ingress![0]!.ip!;
    await waitFor(
      () => {
        const pods = cli('get', 'pods', '-n', NS, '-o', 'json');
        return (
          pods.status === 0 &&
          (JSON.parse(pods.stdout) as { items: Pod[] }).items.every((p) => p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'))
        );
      },
      { timeoutMs: 120_000, intervalMs: 1000, description: 'the backends to be Ready' },
    );
    await waitFor(() => fromNode(ip, '/a') === '200 alpha /a', {
      timeoutMs: 120_000,
      intervalMs: 1000,
      description: `the gateway at ${ip} to serve /a (last: ${fromNode(ip, '/a')})`,
    });
    assert.equal(fromNode(ip, '/a/x?y=1'), '200 alpha /a/x?y=1', 'Prefix matches below the path, and the path reaches the backend unchanged');
    assert.equal(fromNode(ip, '/b'), '200 beta /b');
    assert.match(fromNode(ip, '/b/x'), /^404 /, 'Exact matches the path only');
    assert.match(fromNode(ip, '/abc'), /^404 /, 'Prefix matches whole path elements');
    assert.match(fromNode(ip, '/a', 'other.test'), /^404 /, 'an unknown host without a default backend');
    const listed = cli('get', 'ingress', '-n', NS);
    assert.equal(listed.status, 0, listed.stderr);
    assert.match(listed.stdout, /^NAME\s+CLASS\s+HOSTS\s+ADDRESS\s+PORTS\s+AGE$/m);
    assert.match(listed.stdout, new RegExp(`^shop\\s+<none>\\s+${HOST.replaceAll('.', '\\.')}\\s+${ip.replaceAll('.', '\\.')}\\s+80\\s`, 'm'));
    const classes = cli('get', 'ingressclass');
    assert.match(classes.stdout, /^minik8s\s+minik8s\.io\/gateway\s+<none>\s/m);
  });

  it("serves the host over HTTPS with a TLS Secret's certificate, which stays out of the pod spec", async () => {
    const key = join(scratch, 'tls.key');
    const crt = join(scratch, 'tls.crt');
    const made = spawnSync(
      findExecutable('openssl')!,
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-days',
        '1',
        '-subj',
        `/CN=${HOST}`,
        '-addext',
        `subjectAltName=DNS:${HOST}`,
        '-keyout',
        key,
        '-out',
        crt,
      ],
      { encoding: 'utf8' },
    );
    assert.equal(made.status, 0, made.stderr);
    const keyB64 = readFileSync(key).toString('base64');
    const file = join(scratch, 'tls.json');
    writeFileSync(
      file,
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'List',
        items: [
          {
            apiVersion: 'v1',
            kind: 'Secret',
            metadata: { name: 'shop-cert', namespace: NS },
            type: 'kubernetes.io/tls',
            data: { 'tls.crt': readFileSync(crt).toString('base64'), 'tls.key': keyB64 },
          },
          { ...INGRESS, spec: { ...INGRESS.spec, tls: [{ hosts: [HOST], secretName: 'shop-cert' }] } },
        ],
      }),
    );
    const applied = cli('apply', '-f', file);
    assert.equal(applied.status, 0, applied.stderr);
    const ip = (JSON.parse(cli('get', 'ingress', 'shop', '-n', NS, '-o', 'json').stdout) as Ingress).status!.loadBalancer!.ingress![0]!.ip!;
    await waitFor(() => fromNode(ip, '/a/tls', HOST, crt) === '200 alpha /a/tls', {
      timeoutMs: 120_000,
      intervalMs: 1000,
      description: `HTTPS from the gateway (last: ${fromNode(ip, '/a/tls', HOST, crt)})`,
    });
    assert.equal(fromNode(ip, '/b'), '200 beta /b', 'plain HTTP keeps working');
    const pods = cli('get', 'pods', '-n', 'kube-system', '-l', 'app=minik8s-gateway', '-o', 'json');
    assert.equal(pods.status, 0, pods.stderr);
    assert.ok(pods.stdout.includes('minik8s-gateway-tls'), 'the gateway pod mounts its TLS Secret');
    assert.ok(!pods.stdout.includes(keyB64.slice(0, 40)), 'no key material in the pod spec');
  });
});
