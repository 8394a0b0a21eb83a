// Benchmark of the secure API: pod creates over HTTPS against the same over plain HTTP (two masters in the same run), the TLS handshake's cost per new connection, and the master's memory under 500 watchers plus 20 that never read; prints JSON.
//
// The floor of each figure is measured in the same run: plain HTTP for creates and for new
// connections, a bare Node HTTPS server for the handshake's own price on this machine, and the
// idle master's RSS for the watchers. Rounds alternate between the two masters so that the
// machine's noise falls on both alike.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage, type RequestOptions } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { connect as netConnect, type Socket } from 'node:net';
import { createSecureContext, type SecureContext, connect as tlsConnect } from 'node:tls';
import { spawn } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { issueServerCert, loadOrCreateCa } from '../src/core/pki/pki.js';
import { startMaster, type MasterProcess } from '../test/helpers/master.js';

const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);
const CREATES = Number(process.env.BENCH_CREATES ?? 1000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 200);
const WATCHERS = Number(process.env.BENCH_WATCHERS ?? 500);
const STALLED = Number(process.env.BENCH_STALLED_WATCHERS ?? 20);
/** `--watchers-only` skips the creates and handshakes; `--seconds N` shortens (or lengthens) the watcher part. */
const ARGS = process.argv.slice(2);
const WATCHERS_ONLY = ARGS.includes('--watchers-only');
const secondsArg = ARGS.indexOf('--seconds');
const WATCH_SECONDS = Number(secondsArg >= 0 ? ARGS[secondsArg + 1] : (process.env.BENCH_WATCH_SECONDS ?? 60));
const UPDATES_PER_SECOND = Number(process.env.BENCH_UPDATES_PER_SECOND ?? 64);

interface Target {
  name: string;
  master: MasterProcess;
  url: URL;
  /** Keep-alive agent for the load; undefined options for a fresh connection per request. */
  agent: HttpAgent;
  request: typeof httpRequest;
  /**
   * The client's TLS context, made once as a client (kubectl, a client library) makes its
   * transport once: a context per connection would add OpenSSL's context setup (milliseconds)
   * to each handshake measured.
   */
  tls?: { secureContext: SecureContext };
}

function target(name: string, master: MasterProcess): Target {
  const url = new URL(master.url);
  if (url.protocol === 'https:') {
    const ca = master.ca!;
    return {
      name,
      master,
      url,
      agent: new HttpsAgent({ keepAlive: true, maxSockets: CONCURRENCY * 2, ca }),
      request: httpsRequest,
      tls: { secureContext: createSecureContext({ ca }) },
    };
  }
  return { name, master, url, agent: new HttpAgent({ keepAlive: true, maxSockets: CONCURRENCY * 2 }), request: httpRequest };
}

function call(t: Target, method: string, path: string, body?: string, fresh = false): Promise<number> {
  return new Promise((resolve, reject) => {
    const options: RequestOptions & { ca?: string } = {
      host: t.url.hostname,
      port: t.url.port,
      method,
      path,
      // A fresh connection per request (no agent) is what measures the handshake.
      agent: fresh ? false : t.agent,
      ...(fresh && t.tls ? { secureContext: t.tls.secureContext } : {}),
      headers: {
        authorization: `Bearer ${t.master.token}`,
        'content-type': 'application/json',
        ...(body ? { 'content-length': Buffer.byteLength(body) } : {}),
      },
    };
    const req = t.request(options, (res: IncomingMessage) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

function podBody(name: string, app = 'bench'): string {
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, labels: { app } },
    spec: { containers: [{ name: 'app', image: 'busybox:1.36', command: ['sleep', '3600'] }] },
  });
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.max(0, Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

const round2 = (n: number) => Math.round(n * 100) / 100;

/** Runs `total` jobs through `concurrency` workers; per-job latencies (ms) and the elapsed time. */
async function drive(total: number, concurrency: number, job: (i: number) => Promise<void>) {
  const latencies: number[] = [];
  let next = 0;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let i = next++; i < total; i = next++) {
        const t0 = performance.now();
        await job(i);
        latencies.push(performance.now() - t0);
      }
    }),
  );
  return { latencies, elapsedMs: performance.now() - start };
}

interface Figures {
  perSecond: number[];
  p99Ms: number[];
  failures: number;
}

async function createRound(t: Target, round: number, figures: Figures): Promise<void> {
  const path = '/api/v1/namespaces/default/pods';
  const run = await drive(CREATES, CONCURRENCY, async (i) => {
    if ((await call(t, 'POST', path, podBody(`r${round}-${i}`))) !== 201) figures.failures++;
  });
  const sorted = run.latencies.sort((a, b) => a - b);
  figures.perSecond.push((CREATES / run.elapsedMs) * 1000);
  figures.p99Ms.push(percentile(sorted, 99));
}

/** Sequential requests, each on a new connection: the per-connection cost of the scheme. */
/** The bare server: cert and key from the environment, its port on stdout. */
const BARE_SERVER = `
const { createServer } = require('node:https');
const server = createServer({ cert: process.env.CERT, key: process.env.KEY }, (_req, res) => res.end('ok'));
server.listen(0, '127.0.0.1', () => process.stdout.write(server.address().port + '\\n'));
`;

/**
 * The floor of a handshake on this machine: a bare Node HTTPS server, in a process of its own as
 * the master is, with a certificate of the same kind (ECDSA P-256 from a CA made the same way)
 * answering 200 at once. What the master's new connections cost beyond it is the master's doing.
 */
async function startBareHttps(): Promise<{ target: Target; close: () => Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), 'minik8s-bench-tls-'));
  const ca = await loadOrCreateCa({ dir });
  const cert = await issueServerCert(ca, { commonName: 'bare', dnsNames: ['localhost'], ipAddresses: ['127.0.0.1'] });
  const child = spawn(process.execPath, ['-e', BARE_SERVER], { env: { CERT: cert.certPem, KEY: cert.keyPem }, stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout.once('data', (chunk: Buffer) => resolve(Number(chunk.toString().trim())));
    child.once('exit', (code) => reject(new Error(`the bare HTTPS server exited (${code})`)));
  });
  const target: Target = {
    name: 'bare-https',
    master: { token: 'unused' } as MasterProcess,
    url: new URL(`https://127.0.0.1:${port}`),
    agent: new HttpsAgent({ keepAlive: true }),
    request: httpsRequest,
    tls: { secureContext: createSecureContext({ ca: ca.certPem }) },
  };
  const close = async () => {
    target.agent.destroy();
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill();
    await exited;
    rmSync(dir, { recursive: true, force: true });
  };
  return { target, close };
}

async function connectionRound(t: Target, out: number[]): Promise<void> {
  for (let i = 0; i < CONNECTIONS; i++) {
    const t0 = performance.now();
    const status = await call(t, 'GET', '/healthz', undefined, true);
    if (status !== 200) throw new Error(`${t.name}: /healthz answered ${status}`);
    out.push(performance.now() - t0);
  }
}

const median = (xs: number[]) =>
  percentile(
    [...xs].sort((a, b) => a - b),
    50,
  );

function rssMiB(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith('VmRSS:'));
  return Number(/\d+/.exec(line ?? '')?.[0] ?? Number.NaN) / 1024;
}

/** A watch that reads every event (keeps its connection open until closed). */
function openReadingWatch(t: Target, path: string): Promise<() => void> {
  return new Promise((resolve, reject) => {
    const req = t.request(
      {
        host: t.url.hostname,
        port: t.url.port,
        path,
        agent: false,
        ...(t.tls ? { secureContext: t.tls.secureContext } : {}),
        headers: { authorization: `Bearer ${t.master.token}` },
      },
      (res) => {
        if (res.statusCode !== 200) return reject(new Error(`watch answered ${res.statusCode}`));
        res.resume();
        res.on('error', () => {});
        resolve(() => req.destroy());
      },
    );
    // An error before the response (a handshake cut short on a busy machine) fails the open; later ones end the watch.
    req.on('error', reject);
    req.end();
  });
}

/**
 * Opens `count` watches a batch at a time: 500 TLS handshakes at once on a small machine outlast
 * the server's handshake timeout. A watch whose open fails is tried again, up to three times.
 */
async function openMany<T>(count: number, open: () => Promise<T>): Promise<T[]> {
  const out: T[] = [];
  const batch = 25;
  for (let i = 0; i < count; i += batch) {
    const n = Math.min(batch, count - i);
    out.push(
      ...(await Promise.all(
        Array.from({ length: n }, async () => {
          for (let attempt = 1; ; attempt++) {
            try {
              return await open();
            } catch (err) {
              if (attempt >= 3) throw err;
            }
          }
        }),
      )),
    );
  }
  return out;
}

/** A watch that is asked for and then never read: the socket is paused, so the server's writes back up. */
function openStalledWatch(t: Target, path: string): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const onConnect = () => {
      socket.write(`GET ${path} HTTP/1.1\r\nHost: ${t.url.host}\r\nAuthorization: Bearer ${t.master.token}\r\n\r\n`);
      socket.pause();
      resolve(socket);
    };
    const socket: Socket = t.tls
      ? tlsConnect({ host: t.url.hostname, port: Number(t.url.port), secureContext: t.tls.secureContext, servername: 'localhost' }, onConnect)
      : netConnect({ host: t.url.hostname, port: Number(t.url.port) }, onConnect);
    socket.on('error', (err) => reject(err));
  });
}

async function metric(t: Target, name: string): Promise<number | undefined> {
  return new Promise((resolve) => {
    const req = t.request(
      {
        host: t.url.hostname,
        port: t.url.port,
        path: '/metrics',
        agent: t.agent,
        headers: { authorization: `Bearer ${t.master.token}` },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => {
          text += c;
        });
        res.on('end', () => {
          const line = text.split('\n').find((l) => l.startsWith(`${name} `) || l.startsWith(`${name}{`));
          resolve(line ? Number(line.split(' ').at(-1)) : undefined);
        });
      },
    );
    req.on('error', () => resolve(undefined));
    req.end();
  });
}

/** 500 watchers that read and 20 that do not, on the TLS master, while a few pods change 64 times a second. */
async function watchersRun(t: Target) {
  const pid = t.master.child.pid!;
  const idleMiB = rssMiB(pid);
  const heapMiB = async () => ((await metric(t, 'nodejs_heap_size_used_bytes')) ?? Number.NaN) / 2 ** 20;
  const idleHeapMiB = await heapMiB();
  const ns = '/api/v1/namespaces/default/pods';
  const closers = await openMany(WATCHERS, () => openReadingWatch(t, `${ns}?watch=1&labelSelector=app%3Dchurn`));
  const stalled = await openMany(STALLED, () => openStalledWatch(t, `${ns}?watch=1`));
  const openMiB = rssMiB(pid);
  // Churn: a handful of pods annotated over and over, each update a few KiB so buffers fill.
  const padding = 'x'.repeat(4096);
  for (let i = 0; i < 8; i++) await call(t, 'POST', ns, podBody(`churn-${i}`, 'churn'));
  const samples: number[] = [];
  const bufferedSamples: number[] = [];
  const started = Date.now();
  const end = started + WATCH_SECONDS * 1000;
  let updates = 0;
  let failures = 0;
  while (Date.now() < end) {
    const tick = Date.now();
    await Promise.all(
      Array.from({ length: UPDATES_PER_SECOND / 4 }, async () => {
        const name = `churn-${updates++ % 8}`;
        const patch = JSON.stringify({ metadata: { annotations: { n: String(updates), padding } } });
        const status = await new Promise<number>((resolve, reject) => {
          const req = t.request(
            {
              host: t.url.hostname,
              port: t.url.port,
              method: 'PATCH',
              path: `${ns}/${name}`,
              agent: t.agent,
              headers: {
                authorization: `Bearer ${t.master.token}`,
                'content-type': 'application/merge-patch+json',
                'content-length': Buffer.byteLength(patch),
              },
            },
            (res) => {
              res.resume();
              res.on('end', () => resolve(res.statusCode ?? 0));
            },
          );
          req.on('error', reject);
          req.end(patch);
        });
        if (status !== 200) failures++;
      }),
    );
    samples.push(rssMiB(pid));
    bufferedSamples.push((await metric(t, 'apiserver_watch_buffered_bytes')) ?? 0);
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, 250 - (Date.now() - tick))));
  }
  const terminated = await metric(t, 'apiserver_terminated_watchers_total');
  const bufferedMax = await metric(t, 'apiserver_watch_buffered_bytes_max');
  const elapsedS = (Date.now() - started) / 1000;
  const encodedEvents = await metric(t, 'apiserver_watch_events_encoded_total');
  const sentEvents = await metric(t, 'apiserver_watch_events_sent_total');
  for (const close of closers) close();
  for (const s of stalled) s.destroy();
  const maxMiB = Math.max(...samples);
  const lastMiB = samples.at(-1)!;
  // Memory given back once they are gone: the queues empty, then a few seconds for the heap to shrink.
  const closedAt = Date.now();
  while (Date.now() - closedAt < 10_000 && ((await metric(t, 'apiserver_watch_buffered_bytes')) ?? 0) > 0) await new Promise((r) => setTimeout(r, 250));
  await new Promise((r) => setTimeout(r, 5000));
  const afterCloseMiB = rssMiB(pid);
  const afterCloseHeapMiB = await heapMiB();
  return {
    watchers: WATCHERS,
    stalledWatchers: STALLED,
    seconds: WATCH_SECONDS,
    updates,
    updatesPerSecond: round2(updates / elapsedS),
    updateFailures: failures,
    rssMiB: { idle: round2(idleMiB), watchersOpen: round2(openMiB), max: round2(maxMiB), last: round2(lastMiB), afterClose: round2(afterCloseMiB) },
    ratio: { maxVsIdle: round2(maxMiB / idleMiB), lastVsMax: round2(lastMiB / maxMiB), afterCloseVsIdle: round2(afterCloseMiB / idleMiB) },
    // The JavaScript heap in use: back near idle after the watchers close means nothing leaked, whatever the resident size.
    heapUsedMiB: { idle: round2(idleHeapMiB), afterClose: round2(afterCloseHeapMiB) },
    watchBufferedMiBMax: round2(Math.max(0, ...bufferedSamples) / 2 ** 20),
    eventsSent: sentEvents,
    eventsEncoded: encodedEvents,
    stalledWatchersClosed: terminated,
    watchBufferedBytesMax: bufferedMax,
  };
}

function watcherTargets(watchers: Awaited<ReturnType<typeof watchersRun>>) {
  return {
    rssMaxVsIdle: { want: '< 3 (bounded while 20 watchers never read)', ok: watchers.ratio.maxVsIdle < 3 },
    stalledWatchersClosed: { want: `>= ${STALLED}`, ok: (watchers.stalledWatchersClosed ?? 0) >= STALLED },
  };
}

/** The watcher part alone, on one HTTPS master. */
async function watchersOnly(): Promise<void> {
  const secure = await startMaster({ tls: true, registry: false });
  const t = target('https', secure);
  try {
    const watchers = await watchersRun(t);
    process.stdout.write(`${JSON.stringify({ benchmark: 'tls-watchers', watchers, targets: watcherTargets(watchers) }, null, 2)}\n`);
  } finally {
    t.agent.destroy();
    await secure.stop();
  }
}

async function main(): Promise<void> {
  if (WATCHERS_ONLY) return watchersOnly();
  const [secure, plain] = await Promise.all([startMaster({ tls: true, registry: false }), startMaster({ tls: false, registry: false })]);
  const tlsTarget = target('https', secure);
  const httpTarget = target('http', plain);
  const bare = await startBareHttps();
  try {
    // Warm both (connections, JIT).
    for (const t of [tlsTarget, httpTarget])
      await drive(200, CONCURRENCY, (i) => call(t, 'POST', '/api/v1/namespaces/default/pods', podBody(`warm-${i}`)).then(() => {}));
    const creates = { https: { perSecond: [], p99Ms: [], failures: 0 } as Figures, http: { perSecond: [], p99Ms: [], failures: 0 } as Figures };
    const connections = { https: [] as number[], http: [] as number[], bare: [] as number[] };
    for (let r = 0; r < ROUNDS; r++) {
      // Alternate which goes first, so neither always meets a warmer or colder machine.
      const order = r % 2 === 0 ? [tlsTarget, httpTarget] : [httpTarget, tlsTarget];
      for (const t of order) await createRound(t, r, creates[t.name as 'https' | 'http']);
      for (const t of order) await connectionRound(t, connections[t.name as 'https' | 'http']);
      await connectionRound(bare.target, connections.bare);
    }
    const watchers = await watchersRun(tlsTarget);
    const rate = (f: Figures) => Math.round(median(f.perSecond));
    const p99 = (f: Figures) => round2(median(f.p99Ms));
    const sortedConn = (xs: number[]) => [...xs].sort((a, b) => a - b);
    const connP50 = {
      https: percentile(sortedConn(connections.https), 50),
      http: percentile(sortedConn(connections.http), 50),
      bare: percentile(sortedConn(connections.bare), 50),
    };
    const result = {
      benchmark: 'tls',
      concurrency: CONCURRENCY,
      rounds: ROUNDS,
      creates: {
        https: { perSecond: rate(creates.https), p99Ms: p99(creates.https), failures: creates.https.failures },
        httpFloor: { perSecond: rate(creates.http), p99Ms: p99(creates.http), failures: creates.http.failures },
        ratio: { perSecondVsFloor: round2(rate(creates.https) / rate(creates.http)), p99VsFloor: round2(p99(creates.https) / p99(creates.http)) },
      },
      newConnection: {
        count: CONNECTIONS * ROUNDS,
        httpsP50Ms: round2(connP50.https),
        httpFloorP50Ms: round2(connP50.http),
        handshakeCostMs: round2(connP50.https - connP50.http),
        ratio: round2(connP50.https / connP50.http),
        bareNodeHttpsP50Ms: round2(connP50.bare),
        vsBareNodeHttps: round2(connP50.https / connP50.bare),
      },
      watchers,
      targets: {
        createsPerSecondVsHttp: { want: '>= 0.7', ok: rate(creates.https) / rate(creates.http) >= 0.7 },
        // The handshake's price is the machine's (a bare Node HTTPS server pays it too): the master should add little to it.
        newConnectionVsBareNodeHttps: { want: '< 1.5', ok: connP50.https / connP50.bare < 1.5 },
        ...watcherTargets(watchers),
      },
    };
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  } finally {
    tlsTarget.agent.destroy();
    httpTarget.agent.destroy();
    await bare.close();
    await Promise.all([secure.stop(), plain.stop()]);
  }
}

main().catch((err) => {
  process.stderr.write(`bench failed: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
