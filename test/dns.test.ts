// The node-local DNS against a real master: service names and DNS hosts answered over UDP and TCP from its informers, changes followed, other names forwarded to an upstream started here, and answers kept while the master is down.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createSocket, type Socket as UdpSocket } from 'node:dgram';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect, createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decode, encode, RECURSION_DESIRED, type RecordType } from 'dns-packet';
import { dnsKind, type Dns } from '../src/core/api/dns.js';
import { namespaceKind } from '../src/core/api/namespace.js';
import { podKind, type Pod } from '../src/core/api/pod.js';
import { serviceKind, type Service } from '../src/core/api/service.js';
import { ApiClient } from '../src/core/client/api-client.js';
import { InformerFactory } from '../src/core/controller/informer-factory.js';
import { waitFor } from '../src/core/wait-for.js';
import { RCODE, rcodeOf } from '../src/net/dns/dns-answer.js';
import { NodeDns } from '../src/node/dns/node-dns.js';
import { frame, TcpFrameReader } from '../src/net/dns/tcp-framing.js';
import { BINARY, startMaster, type MasterProcess } from './helpers/master.js';
import { startWorker, type WorkerProcess } from './helpers/worker.js';

const NS = `dns-${process.pid}`;
/** A loopback address of its own for the fake upstream: resolv.conf names no port, so it listens on 53. */
const UPSTREAM = '127.0.53.1';
// Chosen here (in the service range, clear of 10.96.0.10); the gateway's comes from the allocator.
const WEB_IP = '10.96.78.20';

type Decoded = ReturnType<typeof decode>;
let nextId = 1;
const query = (name: string, type: RecordType = 'A') =>
  encode({ type: 'query', id: nextId++, flags: RECURSION_DESIRED, questions: [{ name, type, class: 'IN' }] });

function udp(port: number, name: string, type: RecordType = 'A'): Promise<Decoded> {
  const socket = createSocket('udp4');
  return new Promise<Decoded>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no UDP answer for ${name}`)), 5000);
    socket.on('message', (m) => {
      clearTimeout(timer);
      resolve(decode(m));
    });
    socket.send(query(name, type), port, '127.0.0.1');
  }).finally(() => socket.close());
}

function tcp(port: number, name: string, type: RecordType = 'A'): Promise<Decoded> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port });
    const reader = new TcpFrameReader();
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no TCP answer for ${name}`));
    }, 5000);
    socket.on('connect', () => socket.write(frame(query(name, type))));
    socket.on('data', (chunk) => {
      const [m] = reader.push(chunk);
      if (m) {
        clearTimeout(timer);
        socket.destroy();
        resolve(decode(m));
      }
    });
    socket.on('error', reject);
  });
}

const addresses = (p: Decoded) => (p.answers ?? []).map((a) => (a as { data: string }).data);

/** Answers every name with 192.0.2.1 over UDP and TCP on UPSTREAM:53, counting what it is asked. */
async function startUpstream(): Promise<{ asked: string[]; close(): Promise<void> }> {
  const asked: string[] = [];
  const answer = (msg: Buffer) => {
    const q = decode(msg);
    asked.push(q.questions![0]!.name);
    return encode({
      type: 'response',
      id: q.id,
      flags: RECURSION_DESIRED,
      questions: q.questions,
      answers: [{ type: 'A', name: q.questions![0]!.name, ttl: 60, data: '192.0.2.1' }],
    });
  };
  const u: UdpSocket = createSocket('udp4');
  u.on('message', (m, r) => u.send(answer(m), r.port, r.address));
  await new Promise<void>((resolve, reject) => {
    u.once('error', reject);
    u.bind(53, UPSTREAM, () => resolve());
  });
  const t: Server = createServer((s) => {
    const reader = new TcpFrameReader();
    s.on('data', (c) => {
      for (const m of reader.push(c)) s.write(frame(answer(m)));
    });
    s.on('error', () => s.destroy());
  });
  await new Promise<void>((resolve, reject) => {
    t.once('error', reject);
    t.listen(53, UPSTREAM, () => resolve());
  });
  return {
    asked,
    close: async () => {
      await new Promise<void>((r) => u.close(() => r()));
      await new Promise<void>((r) => t.close(() => r()));
    },
  };
}

describe('node-local DNS on a real master', () => {
  let master: MasterProcess;
  let client: ApiClient;
  let upstream: Awaited<ReturnType<typeof startUpstream>>;
  let dns: NodeDns;
  const stop = new AbortController();
  let running: Promise<void>;
  let port = 0;
  let gatewayIP = '';
  const dir = mkdtempSync(join(tmpdir(), 'minik8s-dns-'));
  const logs: string[] = [];

  before(async () => {
    master = await startMaster({ registry: false });
    client = new ApiClient({ server: master.url, token: master.token, tls: { ca: master.ca } });
    await client.create(namespaceKind, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
    await client.create(
      serviceKind,
      {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: 'web', namespace: NS },
        spec: { clusterIP: WEB_IP, selector: { app: 'web' }, ports: [{ port: 80 }] },
      },
      { namespace: NS },
    );
    upstream = await startUpstream();
    writeFileSync(join(dir, 'resolv.conf'), `# test\nnameserver ${UPSTREAM}\n`);
    const informers = new InformerFactory({ client, log: (m) => logs.push(m) });
    dns = new NodeDns({ informers, address: '127.0.0.1', port: 0, resolvConfPath: join(dir, 'resolv.conf'), log: (m) => logs.push(m) });
    port = await dns.listen();
    running = Promise.all([informers.start(stop.signal), dns.start(stop.signal)]).then(() => {});
    await waitFor(() => dns.zone().synced, { timeoutMs: 30_000, description: `the DNS server's caches to list (${logs.join('; ')})` });
  });

  after(async () => {
    stop.abort();
    await running;
    await upstream?.close();
    client?.close();
    await master?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers a service name over UDP and TCP, in any case and with the trailing dot', async () => {
    const name = `web.${NS}.svc.cluster.local`;
    await waitFor(async () => addresses(await udp(port, name))[0] === WEB_IP, { description: 'the service name to resolve' });
    assert.deepEqual(addresses(await tcp(port, `${name}.`.toUpperCase())), [WEB_IP]);
    const aaaa = await udp(port, name, 'AAAA');
    assert.equal(rcodeOf(aaaa), RCODE.NOERROR);
    assert.deepEqual(aaaa.answers, []);
  });

  it('denies unknown names under the cluster domain with NXDOMAIN and the SOA', async () => {
    for (const ask of [udp, tcp]) {
      const r = await ask(port, `nope.${NS}.svc.cluster.local`);
      assert.equal(rcodeOf(r), RCODE.NXDOMAIN);
      assert.equal(r.authorities?.[0]?.type, 'SOA');
    }
  });

  it('forwards other names to the resolvers in resolv.conf, over UDP and TCP', async () => {
    assert.deepEqual(addresses(await udp(port, 'example.org')), ['192.0.2.1']);
    assert.deepEqual(addresses(await tcp(port, 'example.net')), ['192.0.2.1']);
    assert.ok(upstream.asked.includes('example.org') && upstream.asked.includes('example.net'));
    assert.ok(!upstream.asked.some((n) => n.endsWith('cluster.local')), 'cluster names never go upstream');
  });

  it("answers a DNS object's host with the ClusterIP of the gateway service the master makes for it", async () => {
    await client.create(
      dnsKind,
      {
        apiVersion: 'minik8s.io/v1',
        kind: 'DNS',
        metadata: { name: 'shop', namespace: NS },
        spec: { host: `shop-${process.pid}.example.com`, paths: [{ path: '/web', serviceName: 'web', servicePort: 80 }] },
      },
      { namespace: NS },
    );
    const gateway = await waitFor(
      async () => {
        const svc = (await client.get(serviceKind, { namespace: 'kube-system', name: 'minik8s-gateway' }).catch(() => undefined)) as Service | undefined;
        return svc?.spec.clusterIP ? svc : undefined;
      },
      { description: 'the gateway service' },
    );
    gatewayIP = gateway.spec.clusterIP!;
    await waitFor(async () => addresses(await udp(port, `shop-${process.pid}.example.com`))[0] === gatewayIP, { description: 'the DNS host to resolve' });
    assert.deepEqual(addresses(await tcp(port, `Shop-${process.pid}.Example.com.`)), [gatewayIP]);
    const ready = await waitFor(
      async () => ((await client.get(dnsKind, { namespace: NS, name: 'shop' })) as Dns).status?.conditions?.find((c) => c.type === 'Ready'),
      { description: "the DNS object's Ready condition" },
    );
    assert.equal(ready.status, 'True', ready.message);
  });

  it('follows a changed and a deleted service', async () => {
    const name = `web.${NS}.svc.cluster.local`;
    await client.delete(serviceKind, { namespace: NS, name: 'web' });
    await waitFor(async () => rcodeOf(await udp(port, name)) === RCODE.NXDOMAIN, { description: 'the deleted service to be gone' });
    await client.create(
      serviceKind,
      {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: 'web', namespace: NS },
        spec: { clusterIP: '10.96.78.21', selector: { app: 'web' }, ports: [{ port: 80 }] },
      },
      { namespace: NS },
    );
    await waitFor(async () => addresses(await udp(port, name))[0] === '10.96.78.21', { description: 'the new service' });
  });

  it('keeps answering from its cache while the master is down', async () => {
    await master.kill();
    assert.deepEqual(addresses(await udp(port, `web.${NS}.svc.cluster.local`)), ['10.96.78.21']);
    assert.deepEqual(addresses(await tcp(port, `shop-${process.pid}.example.com`)), [gatewayIP]);
    assert.equal(rcodeOf(await udp(port, `gone.${NS}.svc.cluster.local`)), RCODE.NXDOMAIN);
  });
});

describe("pods on a worker resolve through their node's DNS", () => {
  let master: MasterProcess;
  let worker: WorkerProcess;
  const cli = (...args: string[]) => spawnSync(process.execPath, [BINARY, ...args], { env: master.env, encoding: 'utf8', timeout: 60_000 });

  before(
    async () => {
      master = await startMaster({ seedImages: true });
      // --proxy=none (set by the helper): pods then get the node's DNS address itself as their nameserver.
      worker = await startWorker({ server: master.url, joinToken: master.joinToken });
      const client = new ApiClient({ server: master.url, token: master.token, tls: { ca: master.ca } });
      try {
        await client.create(namespaceKind, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
        await client.create(
          serviceKind,
          {
            apiVersion: 'v1',
            kind: 'Service',
            metadata: { name: 'web', namespace: NS },
            spec: { clusterIP: WEB_IP, selector: { app: 'web' }, ports: [{ port: 80 }] },
          },
          { namespace: NS },
        );
        await client.create(
          podKind,
          {
            apiVersion: 'v1',
            kind: 'Pod',
            metadata: { name: 'client', namespace: NS },
            spec: {
              nodeName: worker.nodeName,
              terminationGracePeriodSeconds: 0,
              containers: [{ name: 'py', image: 'python:3.11', command: ['sleep', '3600'] }],
            },
          },
          { namespace: NS },
        );
        await waitFor(async () => ((await client.get(podKind, { namespace: NS, name: 'client' })) as Pod).status?.phase === 'Running', {
          timeoutMs: 90_000,
          description: 'the client pod to run',
        });
      } finally {
        client.close();
      }
    },
    { timeout: 180_000 },
  );

  after(async () => {
    await worker?.destroy();
    await master?.stop();
  });

  it("gives pods the node's DNS with the namespace search path and ndots:5", () => {
    const r = cli('exec', '-n', NS, 'client', '--', 'cat', '/etc/resolv.conf');
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /^nameserver 10\.\d+\.\d+\.1$/m);
    assert.match(r.stdout, new RegExp(`^search ${NS}\\.svc\\.cluster\\.local svc\\.cluster\\.local cluster\\.local$`, 'm'));
    assert.match(r.stdout, /^options ndots:5$/m);
  });

  it('resolves the service by its short, namespaced and full names inside the pod', () => {
    const names = ['web', `web.${NS}`, `web.${NS}.svc`, `web.${NS}.svc.cluster.local`];
    const r = cli('exec', '-n', NS, 'client', '--', 'python3', '-c', 'import socket, sys\nfor n in sys.argv[1:]: print(socket.gethostbyname(n))', ...names);
    assert.equal(r.status, 0, r.stderr);
    assert.deepEqual(
      r.stdout.trim().split('\n'),
      names.map(() => WEB_IP),
    );
    const missing = cli(
      'exec',
      '-n',
      NS,
      'client',
      '--',
      'python3',
      '-c',
      'import socket\ntry: socket.gethostbyname("nope")\nexcept socket.gaierror as e: print("gaierror", e.errno)',
    );
    assert.match(missing.stdout, /gaierror/);
  });

  it('resolves cluster names on the machine itself after `dns host enable`, and gives the resolver back with `disable`', () => {
    // A private mount namespace with its own resolv.conf bound over /etc/resolv.conf: the machine's stays untouched.
    const dir = mkdtempSync(join(tmpdir(), 'minik8s-host-dns-'));
    const original = "# the user's\nnameserver 192.0.2.53\noptions timeout:1 attempts:1\n";
    writeFileSync(join(dir, 'resolv.conf'), original);
    const minik8s = `'${process.execPath}' '${BINARY}'`;
    const script = [
      `mount --bind '${dir}/resolv.conf' /etc/resolv.conf`,
      `${minik8s} dns host enable --data-dir '${worker.dataDir}'`,
      'echo ---',
      `getent hosts web.${NS}.svc.cluster.local`,
      'echo ---',
      'cat /etc/resolv.conf',
      'echo ---',
      `${minik8s} dns host disable --data-dir '${worker.dataDir}'`,
      'echo ---',
      'cat /etc/resolv.conf',
    ].join(' && ');
    try {
      const r = spawnSync('unshare', ['--mount', '--propagation', 'private', 'sh', '-c', script], { encoding: 'utf8', timeout: 60_000 });
      assert.equal(r.status, 0, r.stderr + r.stdout);
      const [enabled, looked, during, disabled, after] = r.stdout.split('---\n');
      assert.match(enabled!, /^host DNS: cluster names resolve through 10\.\d+\.\d+\.1;/);
      assert.match(looked!, new RegExp(`^${WEB_IP.replaceAll('.', '\\.')}\\s+web\\.${NS}\\.svc\\.cluster\\.local$`, 'm'));
      // The node's server first, the user's own resolver kept after it.
      assert.match(during!, /nameserver 10\.\d+\.\d+\.1\nnameserver 192\.0\.2\.53\n/);
      assert.match(disabled!, /restored/);
      assert.equal(after, original);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('runs the gateway for a DNS object: nginx with the rendered configuration, its host resolving to the gateway service', async () => {
    const client = new ApiClient({ server: master.url, token: master.token, tls: { ca: master.ca } });
    try {
      await client.create(
        dnsKind,
        {
          apiVersion: 'minik8s.io/v1',
          kind: 'DNS',
          metadata: { name: 'shop', namespace: NS },
          spec: { host: 'shop.example', paths: [{ path: '/web', serviceName: 'web', servicePort: 80 }] },
        },
        { namespace: NS },
      );
      const pod = await waitFor(
        async () => {
          const list = await client.list(podKind, { namespace: 'kube-system', labelSelector: 'app=minik8s-gateway' });
          return (list.items as Pod[]).find((p) => p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'));
        },
        { timeoutMs: 90_000, description: 'a Ready gateway pod' },
      );
      const gateway = (await client.get(serviceKind, { namespace: 'kube-system', name: 'minik8s-gateway' })) as Service;
      // nginx serves the rendered configuration (the service address itself leads nowhere without a proxy on this worker: the netns e2e covers that).
      const conf = cli('exec', '-n', 'kube-system', pod.metadata.name!, '--', 'cat', '/etc/nginx/conf.d/default.conf');
      assert.match(conf.stdout, /server_name shop\.example;/);
      assert.match(conf.stdout, new RegExp(`location /web/ \\{\\n\\s+proxy_pass http://${WEB_IP.replaceAll('.', '\\.')}:80/;`));
      const probe =
        'import sys, urllib.request as u\nr = u.Request("http://" + sys.argv[1] + "/web/x", headers={"Host": "other.example"})\ntry: print(u.urlopen(r, timeout=10).status)\nexcept Exception as e: print(getattr(e, "code", e))';
      const r = cli('exec', '-n', NS, 'client', '--', 'python3', '-c', probe, pod.status!.podIP!);
      assert.equal(r.stdout.trim(), '404', `an unknown host gets nginx's 404: ${r.stdout}${r.stderr}`);
      const resolved = cli('exec', '-n', NS, 'client', '--', 'python3', '-c', 'import socket; print(socket.gethostbyname("shop.example"))');
      assert.equal(resolved.stdout.trim(), gateway.spec.clusterIP);
      await client.delete(dnsKind, { namespace: NS, name: 'shop' });
      await waitFor(
        async () =>
          await client.get(serviceKind, { namespace: 'kube-system', name: 'minik8s-gateway' }).then(
            () => false,
            () => true,
          ),
        { timeoutMs: 30_000, description: 'the gateway service to go with the last DNS object' },
      );
    } finally {
      client.close();
    }
  });
});
