// What metadata.managedFields costs: pod creates and patches per second over HTTP against two API servers in this process, one tracking ownership and one not, on memory stores (so the figure is the API server's CPU alone, the worst case for the ratio); rounds alternate between them. Prints JSON.
import { Agent, request } from 'node:http';
import { MemoryStore } from '../src/core/store/memory-store.js';
import { ADMIN_USER, TokenAuthenticator } from '../src/control-plane/api-server/auth.js';
import { ObjectService } from '../src/control-plane/api-server/object-service.js';
import { startApiServer, type RunningApiServer } from '../src/control-plane/api-server/server.js';

const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);
const PER_ROUND = Number(process.env.BENCH_CREATES ?? 1000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const TOKEN = 'bench';

function send(agent: Agent, port: number, method: string, path: string, body: unknown, contentType = 'application/json'): Promise<number> {
  const text = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        method,
        path,
        agent,
        headers: { authorization: `Bearer ${TOKEN}`, 'content-type': contentType, 'content-length': Buffer.byteLength(text) },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', reject);
    req.end(text);
  });
}

function pod(name: string): unknown {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, labels: { app: 'bench', tier: 'web' } },
    spec: { containers: [{ name: 'app', image: 'nginx:1.27', ports: [{ containerPort: 80 }], env: [{ name: 'A', value: '1' }] }] },
  };
}

/** Runs `count` requests with CONCURRENCY in flight; returns requests per second. */
async function rate(count: number, one: (i: number) => Promise<number>): Promise<number> {
  let next = 0;
  const start = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < count) {
        const code = await one(next++);
        if (code >= 300) throw new Error(`request answered ${code}`);
      }
    }),
  );
  return count / (Number(process.hrtime.bigint() - start) / 1e9);
}

async function main(): Promise<void> {
  const ac = new AbortController();
  const authenticator = new TokenAuthenticator();
  authenticator.add(TOKEN, ADMIN_USER);
  const serve = (managedFields: boolean) => {
    const store = new MemoryStore();
    return startApiServer({ store, service: new ObjectService({ store, managedFields }), authenticator, address: '127.0.0.1', port: 0, signal: ac.signal });
  };
  const servers: Record<'with' | 'without', RunningApiServer> = { with: await serve(true), without: await serve(false) };
  const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  const figures = { with: { creates: [] as number[], patches: [] as number[] }, without: { creates: [] as number[], patches: [] as number[] } };
  for (let round = 0; round < ROUNDS; round++) {
    for (const which of ['with', 'without'] as const) {
      const port = servers[which].port;
      const base = round * PER_ROUND;
      figures[which].creates.push(await rate(PER_ROUND, (i) => send(agent, port, 'POST', '/api/v1/namespaces/default/pods', pod(`p-${base + i}`))));
      figures[which].patches.push(
        await rate(PER_ROUND, (i) =>
          send(
            agent,
            port,
            'PATCH',
            `/api/v1/namespaces/default/pods/p-${base + i}`,
            { metadata: { labels: { round: String(round) } } },
            'application/merge-patch+json',
          ),
        ),
      );
    }
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const out = {
    concurrency: CONCURRENCY,
    perRound: PER_ROUND,
    rounds: ROUNDS,
    createsPerSecond: { withManagedFields: Math.round(median(figures.with.creates)), without: Math.round(median(figures.without.creates)) },
    patchesPerSecond: { withManagedFields: Math.round(median(figures.with.patches)), without: Math.round(median(figures.without.patches)) },
    ratio: {
      creates: Number((median(figures.with.creates) / median(figures.without.creates)).toFixed(3)),
      patches: Number((median(figures.with.patches) / median(figures.without.patches)).toFixed(3)),
    },
  };
  console.log(JSON.stringify(out, null, 2));
  agent.destroy();
  ac.abort();
  await Promise.all([servers.with.closed, servers.without.closed]);
}

await main();
