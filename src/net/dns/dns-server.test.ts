// The DNS server's sockets on 127.0.0.1: answers over UDP and TCP, forwarding to an upstream started here, timeouts, truncation.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createSocket, type Socket as UdpSocket } from 'node:dgram';
import { connect, createServer, type Server } from 'node:net';
import { decode, encode, RECURSION_DESIRED, type Packet, type RecordType } from 'dns-packet';
import type { Endpoints } from '../../core/api/endpoints.js';
import type { Service } from '../../core/api/service.js';
import { buildClusterZone, type ClusterZone } from './cluster-zone.js';
import { RCODE, rcodeOf } from './dns-answer.js';
import { DnsServer } from './dns-server.js';
import type { Upstream } from './resolv-conf.js';
import { frame, TcpFrameReader } from './tcp-framing.js';

function svc(namespace: string, name: string, clusterIP: string): Service {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { namespace, name },
    spec: { type: 'ClusterIP', clusterIP, ports: [], sessionAffinity: 'None' },
    status: {},
  } as Service;
}

const many: Endpoints = {
  apiVersion: 'v1',
  kind: 'Endpoints',
  metadata: { namespace: 'db', name: 'big' },
  subsets: [{ addresses: Array.from({ length: 60 }, (_, i) => ({ ip: `10.244.9.${i + 1}` })) }],
} as Endpoints;

let zone: ClusterZone = buildClusterZone({ services: [svc('default', 'web', '10.96.0.20'), svc('db', 'big', 'None')], endpoints: [many] });

let nextId = 1;
function queryBytes(name: string, type: RecordType = 'A'): Buffer {
  return encode({ type: 'query', id: nextId++, flags: RECURSION_DESIRED, questions: [{ name, type, class: 'IN' }] });
}

function udpQuery(port: number, msg: Buffer, timeoutMs = 3000): Promise<ReturnType<typeof decode>> {
  const socket = createSocket('udp4');
  return new Promise<ReturnType<typeof decode>>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('no UDP answer')), timeoutMs);
    socket.on('message', (reply) => {
      clearTimeout(timer);
      resolve(decode(reply));
    });
    socket.send(msg, port, '127.0.0.1');
  }).finally(() => socket.close());
}

/** Sends every message on one connection, returns the answers by id. */
function tcpQueries(port: number, msgs: Buffer[]): Promise<Map<number, ReturnType<typeof decode>>> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port });
    const reader = new TcpFrameReader();
    const answers = new Map<number, ReturnType<typeof decode>>();
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`only ${answers.size} of ${msgs.length} TCP answers`));
    }, 5000);
    // Written in one go, so the server sees several messages in one chunk.
    socket.on('connect', () => socket.write(Buffer.concat(msgs.map(frame))));
    socket.on('data', (chunk) => {
      for (const m of reader.push(chunk)) {
        const p = decode(m);
        answers.set(p.id!, p);
      }
      if (answers.size === msgs.length) {
        clearTimeout(timer);
        socket.destroy();
        resolve(answers);
      }
    });
    socket.on('error', reject);
  });
}

/** A tiny upstream resolver: answers example.org with 93.184.216.34 over UDP and TCP, and counts what it is asked. */
async function startUpstream(): Promise<{ port: number; asked: string[]; close(): Promise<void> }> {
  const asked: string[] = [];
  const answer = (msg: Buffer): Buffer => {
    const q = decode(msg);
    const name = q.questions![0]!.name;
    asked.push(name);
    const known = name === 'example.org';
    const response: Packet = {
      type: 'response',
      id: q.id,
      flags: RECURSION_DESIRED | (known ? 0 : RCODE.NXDOMAIN),
      questions: q.questions,
      answers: known ? [{ type: 'A', name, ttl: 300, data: '93.184.216.34' }] : [],
    };
    return encode(response);
  };
  const udp = createSocket('udp4');
  udp.on('message', (msg, rinfo) => udp.send(answer(msg), rinfo.port, rinfo.address));
  await new Promise<void>((resolve) => udp.bind(0, '127.0.0.1', () => resolve()));
  const port = udp.address().port;
  const tcp: Server = createServer((socket) => {
    const reader = new TcpFrameReader();
    socket.on('data', (chunk) => {
      for (const m of reader.push(chunk)) socket.write(frame(answer(m)));
    });
    socket.on('error', () => socket.destroy());
  });
  await new Promise<void>((resolve) => tcp.listen(port, '127.0.0.1', () => resolve()));
  return {
    port,
    asked,
    close: () => Promise.all([new Promise<void>((r) => udp.close(() => r())), new Promise<void>((r) => tcp.close(() => r()))]).then(() => undefined),
  };
}

describe('DnsServer on 127.0.0.1', () => {
  let upstream: Awaited<ReturnType<typeof startUpstream>>;
  let silent: UdpSocket;
  let upstreams: Upstream[] = [];
  const logs: string[] = [];
  const server = new DnsServer({
    address: '127.0.0.1',
    port: 0,
    zone: () => zone,
    upstreams: () => upstreams,
    forwardTimeoutMs: 300,
    forwardBudgetMs: 800,
    log: (m) => logs.push(m),
  });
  let port = 0;

  before(async () => {
    upstream = await startUpstream();
    // An upstream that never answers.
    silent = createSocket('udp4');
    await new Promise<void>((resolve) => silent.bind(0, '127.0.0.1', () => resolve()));
    upstreams = [{ address: '127.0.0.1', port: upstream.port }];
    port = await server.listen();
  });
  after(async () => {
    await server.close();
    await upstream.close();
    silent.close();
  });

  it('listens on one port for UDP and TCP', () => {
    assert.ok(port > 0);
    assert.equal(server.port, port);
  });

  it('answers a service name over UDP', async () => {
    const r = await udpQuery(port, queryBytes('web.default.svc.cluster.local'));
    assert.equal(rcodeOf(r), RCODE.NOERROR);
    assert.deepEqual(
      r.answers?.map((a) => (a as { data: string }).data),
      ['10.96.0.20'],
    );
  });

  it('answers several pipelined queries on one TCP connection', async () => {
    const msgs = [
      queryBytes('web.default.svc.cluster.local'),
      queryBytes('nope.default.svc.cluster.local'),
      queryBytes('example.org'),
      queryBytes('web.default.svc.cluster.local', 'AAAA'),
    ];
    const ids = msgs.map((m) => m.readUInt16BE(0));
    const answers = await tcpQueries(port, msgs);
    assert.deepEqual(
      (answers.get(ids[0]!)!.answers ?? []).map((a) => (a as { data: string }).data),
      ['10.96.0.20'],
    );
    assert.equal(rcodeOf(answers.get(ids[1]!)!), RCODE.NXDOMAIN);
    assert.deepEqual(
      (answers.get(ids[2]!)!.answers ?? []).map((a) => (a as { data: string }).data),
      ['93.184.216.34'],
    );
    assert.equal(rcodeOf(answers.get(ids[3]!)!), RCODE.NOERROR);
    assert.deepEqual(answers.get(ids[3]!)!.answers, []);
  });

  it('forwards other names over UDP to the upstream and relays its answer (and its NXDOMAIN)', async () => {
    const r = await udpQuery(port, queryBytes('example.org'));
    assert.deepEqual(
      r.answers?.map((a) => (a as { data: string }).data),
      ['93.184.216.34'],
    );
    assert.ok(upstream.asked.includes('example.org'));
    assert.equal(rcodeOf(await udpQuery(port, queryBytes('nothing.example'))), RCODE.NXDOMAIN);
    // Ours are never asked upstream.
    assert.ok(!upstream.asked.some((n) => n.endsWith('cluster.local')));
  });

  it('tries the next upstream when one is silent, and answers SERVFAIL when none answers in time', async () => {
    upstreams = [
      { address: '127.0.0.1', port: silent.address().port },
      { address: '127.0.0.1', port: upstream.port },
    ];
    const r = await udpQuery(port, queryBytes('example.org'));
    assert.deepEqual(
      r.answers?.map((a) => (a as { data: string }).data),
      ['93.184.216.34'],
    );
    upstreams = [{ address: '127.0.0.1', port: silent.address().port }];
    const started = Date.now();
    const failed = await udpQuery(port, queryBytes('example.org'));
    assert.equal(rcodeOf(failed), RCODE.SERVFAIL);
    assert.ok(Date.now() - started < 2000, 'within the forward budget');
    upstreams = [];
    assert.equal(rcodeOf(await udpQuery(port, queryBytes('example.org'))), RCODE.SERVFAIL);
    assert.ok(
      logs.some((l) => /no answer in 300 ms/.test(l)),
      logs.join('\n'),
    );
    upstreams = [{ address: '127.0.0.1', port: upstream.port }];
  });

  it('truncates a UDP answer that does not fit, and gives it whole over TCP', async () => {
    const udp = await udpQuery(port, queryBytes('big.db.svc.cluster.local'));
    assert.equal(udp.flag_tc, true);
    assert.deepEqual(udp.answers, []);
    const msg = queryBytes('big.db.svc.cluster.local');
    const tcp = (await tcpQueries(port, [msg])).get(msg.readUInt16BE(0))!;
    assert.equal(tcp.flag_tc, false);
    assert.equal(tcp.answers?.length, 60);
  });

  it('answers FORMERR to garbage with a header, and keeps serving', async () => {
    const garbage = Buffer.from([0x12, 0x34, 0x01, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xff, 0xff]);
    const r = await udpQuery(port, garbage);
    assert.equal(r.id, 0x1234);
    assert.equal(rcodeOf(r), RCODE.FORMERR);
    assert.equal(rcodeOf(await udpQuery(port, queryBytes('web.default.svc.cluster.local'))), RCODE.NOERROR);
  });

  it('answers from the zone as it is now', async () => {
    zone = buildClusterZone({ services: [svc('default', 'web', '10.96.0.21')] });
    const r = await udpQuery(port, queryBytes('web.default.svc.cluster.local'));
    assert.deepEqual(
      r.answers?.map((a) => (a as { data: string }).data),
      ['10.96.0.21'],
    );
  });

  it('reports a port in use', async () => {
    const other = new DnsServer({ address: '127.0.0.1', port, zone: () => zone, upstreams: () => [] });
    await assert.rejects(other.listen(), (err: NodeJS.ErrnoException) => err.code === 'EADDRINUSE');
  });
});
