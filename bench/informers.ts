// Benchmark of shared informers: master RSS and ReplicaSet sync time with many pods, this tree against a base commit built beside it; prints one JSON object (progress on stderr).
//
// One real etcd holds BENCH_PODS pods in BENCH_NAMESPACES namespaces, each namespace with one
// ReplicaSet owning its pods (no nodes, no scheduler: nothing changes while measuring). Then, for
// the base commit (BENCH_BASE_REF, default the last commit before the shared informers; built in
// a temporary git worktree) and for this tree, in the same run and on the same data:
// - master: a real `minik8s --role=master --etcd-endpoints` (free ports, its own data dir, no CLI
//   config written) with every ReplicaSet's status cleared first; measured: seconds until every
//   ReplicaSet's status is written again (its informers listed everything and the controller
//   looked at each), then the resident set size over the next seconds (median of 10 samples);
// - sync: the ReplicaSet controller of that tree in this process over the same etcd, its
//   informers synced, then BENCH_SYNCS calls of its reconcile for ReplicaSets round the
//   namespaces (a steady state: every call plans and writes nothing); p50, p99 and mean.
// Ratios are this tree over the base. Without git history (or BENCH_BASE_REF=none) only this
// tree is measured.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { namespaceKind } from '../src/core/api/namespace.js';
import { podKind } from '../src/core/api/pod.js';
import { replicaSetKind, type ReplicaSet } from '../src/core/api/replicaset.js';
import { ApiClient } from '../src/core/client/api-client.js';
import { waitFor } from '../src/core/wait-for.js';
import { startEtcd } from '../test/helpers/etcd.js';
import { freePort } from '../test/helpers/master.js';

const PODS = sizeOf('BENCH_PODS', 10_000);
const NAMESPACES = sizeOf('BENCH_NAMESPACES', 100);
const SYNCS = sizeOf('BENCH_SYNCS', 500);
const BASE_REF = process.env.BENCH_BASE_REF ?? 'c60809a';
const PER_NS = Math.ceil(PODS / NAMESPACES);
/** The repository root: this file runs as dist/bench/informers.js. */
const REPO = resolve(fileURLToPath(new URL('../..', import.meta.url)));
const startedAt = performance.now();

function sizeOf(env: string, fallback: number): number {
  const text = process.env[env];
  const n = text === undefined ? fallback : Number(text);
  if (!Number.isInteger(n) || n < 1) {
    process.stderr.write(`bench failed: ${env} must be a whole number of at least 1, not "${text}"\n`);
    process.exit(2);
  }
  return n;
}

function log(message: string): void {
  process.stderr.write(`[informers ${((performance.now() - startedAt) / 1000).toFixed(1)}s] ${message}\n`);
}

const round = (n: number, digits = 1) => Math.round(n * 10 ** digits) / 10 ** digits;

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))]!;
}

/** The tree a measurement runs: its compiled root and how its modules are laid out. */
interface Tree {
  label: string;
  /** The directory holding dist/ of that tree. */
  root: string;
  /** Builds the tree's ReplicaSet controller over the etcd, its informers started; returns reconcile and stop. */
  replicaSetSync(endpoint: string): Promise<{ reconcile(key: string): Promise<unknown>; stop(): Promise<void> }>;
}

/** This tree: a client over the object service and the process's shared informer factory. */
function currentTree(): Tree {
  return {
    label: 'current',
    root: REPO,
    async replicaSetSync(endpoint) {
      const dist = join(REPO, 'dist/src');
      const { openStore } = await import(join(dist, 'control-plane/master/open-store.js'));
      const { ObjectService } = await import(join(dist, 'control-plane/api-server/object-service.js'));
      const { LocalClient } = await import(join(dist, 'control-plane/api-server/local-client.js'));
      const { InformerFactory } = await import(join(dist, 'core/controller/informer-factory.js'));
      const { ReplicaSetController } = await import(join(dist, 'control-plane/reconcilers/replicaset.js'));
      const store = await openStore({ endpoints: [endpoint] });
      const service = new ObjectService({ store });
      const informers = new InformerFactory({ client: new LocalClient(service.forClient('shared-informers')) });
      const controller = new ReplicaSetController({ client: new LocalClient(service.forClient('replicaset-controller')), informers });
      const stop = new AbortController();
      const running = informers.start(stop.signal);
      await informers.whenSynced();
      return {
        reconcile: (key) => controller.reconcile(key),
        async stop() {
          stop.abort();
          await running;
          await store.close();
        },
      };
    },
  };
}

/** The base commit: each controller made its own informers over the object service (roles/ layout). */
function baseTree(root: string): Tree {
  return {
    label: `base ${BASE_REF}`,
    root,
    async replicaSetSync(endpoint) {
      const dist = join(root, 'dist/src/roles');
      const { openStore } = await import(join(dist, 'master/open-store.js'));
      const { ObjectService } = await import(join(dist, 'api/object-service.js'));
      const { ReplicaSetController } = await import(join(dist, 'reconcilers/replicaset.js'));
      const store = await openStore({ endpoints: [endpoint] });
      const controller = new ReplicaSetController({ service: new ObjectService({ store }).forClient('replicaset-controller') });
      const stop = new AbortController();
      const running = [controller.replicaSets.start(stop.signal), controller.pods.start(stop.signal)];
      await Promise.all([controller.replicaSets.whenSynced(), controller.pods.whenSynced()]);
      return {
        reconcile: (key) => controller.reconcile(key),
        async stop() {
          stop.abort();
          await Promise.all(running);
          await store.close();
        },
      };
    },
  };
}

/** Builds BASE_REF in a temporary worktree (sharing this tree's node_modules); undefined with the reason when it cannot. */
function buildBase(): { tree?: Tree; dir?: string; why?: string } {
  if (BASE_REF === 'none') return { why: 'BENCH_BASE_REF=none' };
  const dir = mkdtempSync(join(tmpdir(), 'minik8s-bench-base-'));
  try {
    execFileSync('git', ['-C', REPO, 'worktree', 'add', '--detach', '--force', dir, BASE_REF], { stdio: 'pipe' });
    symlinkSync(join(REPO, 'node_modules'), join(dir, 'node_modules'));
    log(`building ${BASE_REF} in ${dir}`);
    execFileSync(process.execPath, [join(REPO, 'node_modules/typescript/bin/tsc'), '-p', join(dir, 'tsconfig.json')], { stdio: 'pipe' });
    return { tree: baseTree(dir), dir };
  } catch (err) {
    const e = err as { stderr?: Buffer; message: string };
    return { dir, why: `cannot build ${BASE_REF}: ${(e.stderr?.toString() || e.message).trim().split('\n')[0]}` };
  }
}

function removeBase(dir: string | undefined): void {
  if (!dir) return;
  try {
    execFileSync('git', ['-C', REPO, 'worktree', 'remove', '--force', dir], { stdio: 'pipe' });
  } catch {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Namespaces, one ReplicaSet each and its pods, written through this tree's object service (validated, with owners). */
async function seed(endpoint: string): Promise<void> {
  const dist = join(REPO, 'dist/src');
  const { openStore } = await import(join(dist, 'control-plane/master/open-store.js'));
  const { ObjectService } = await import(join(dist, 'control-plane/api-server/object-service.js'));
  const store = await openStore({ endpoints: [endpoint] });
  const service = new ObjectService({ store });
  const template = { metadata: { labels: { app: 'bench' } }, spec: { containers: [{ name: 'c', image: 'busybox', command: ['sleep', '3600'] }] } };
  for (let i = 0; i < NAMESPACES; i++)
    await service.create(namespaceKind, undefined, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: `bench-${i}` } });
  const owners: { namespace: string; uid: string }[] = [];
  for (let i = 0; i < NAMESPACES; i++) {
    const rs = await service.create(replicaSetKind, `bench-${i}`, {
      apiVersion: 'apps/v1',
      kind: 'ReplicaSet',
      metadata: { name: 'rs' },
      spec: { replicas: PER_NS, selector: { matchLabels: { app: 'bench' } }, template },
    });
    owners.push({ namespace: `bench-${i}`, uid: rs.metadata.uid! });
  }
  let next = 0;
  const worker = async () => {
    for (let n = next++; n < PODS; n = next++) {
      const owner = owners[n % NAMESPACES]!;
      await service.create(podKind, owner.namespace, {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: {
          name: `rs-${n}`,
          labels: { app: 'bench' },
          ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'rs', uid: owner.uid, controller: true, blockOwnerDeletion: true }],
        },
        spec: template.spec,
      });
    }
  };
  await Promise.all(Array.from({ length: 32 }, worker));
  await store.close();
}

/** Every ReplicaSet's status set back to nothing, so the next master has to look at each again. */
async function clearReplicaSetStatus(client: ApiClient): Promise<void> {
  const list = await client.list(replicaSetKind);
  await Promise.all(
    list.items.map((rs) =>
      client.replace(
        replicaSetKind,
        { namespace: rs.metadata.namespace, name: rs.metadata.name! },
        { ...rs, status: { replicas: 0 } },
        { subresource: 'status' },
      ),
    ),
  );
}

function rssMiB(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith('VmRSS:'));
  return Number(/(\d+)/.exec(line ?? '')?.[1] ?? 0) / 1024;
}

async function measureMaster(tree: Tree, endpoint: string, seedClient: ApiClient): Promise<{ settleS: number; rssMiB: number; rssMaxMiB: number }> {
  await clearReplicaSetStatus(seedClient);
  const dataDir = mkdtempSync(join(tmpdir(), 'minik8s-bench-data-'));
  const home = mkdtempSync(join(tmpdir(), 'minik8s-bench-home-'));
  const [port, activatorPort] = [await freePort(), await freePort()];
  let output = '';
  const started = performance.now();
  const child: ChildProcess = spawn(
    process.execPath,
    [
      join(tree.root, 'dist/bin/minik8s.js'),
      '--role=master',
      // Plain HTTP: this bench measures the API's work, not TLS (bench/tls.ts compares the two).
      '--insecure-http',
      '--data-dir',
      dataDir,
      '--address',
      '127.0.0.1',
      '--port',
      String(port),
      '--etcd-endpoints',
      endpoint,
      '--no-registry',
      '--no-write-config',
      '--disable-scheduler',
      '--activator-port',
      String(activatorPort),
      '--node-monitor-grace-period',
      '3600',
    ],
    { env: { ...process.env, HOME: home }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  child.stdout!.on('data', (d) => {
    output = (output + d).slice(-20_000);
  });
  child.stderr!.on('data', (d) => {
    output = (output + d).slice(-20_000);
  });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  try {
    const token = await waitFor(
      () => {
        if (child.exitCode !== null) throw new Error(`master exited:\n${output}`);
        return output.includes('master ready') ? readFileSync(join(dataDir, 'admin-token'), 'utf8').trim() : undefined;
      },
      { timeoutMs: 120_000, description: `${tree.label} master to be ready` },
    );
    const client = new ApiClient({ server: `http://127.0.0.1:${port}`, token });
    await waitFor(
      async () => {
        const list = await client.list(replicaSetKind);
        return list.items.every((rs) => (rs as ReplicaSet).status?.replicas === PER_NS);
      },
      { timeoutMs: 300_000, intervalMs: 250, description: `${tree.label} master to write every ReplicaSet's status` },
    );
    const settleS = (performance.now() - started) / 1000;
    client.close();
    const samples: number[] = [];
    for (let i = 0; i < 10; i++) {
      samples.push(rssMiB(child.pid!));
      await new Promise((r) => setTimeout(r, 500));
    }
    samples.sort((a, b) => a - b);
    return { settleS: round(settleS, 2), rssMiB: round(percentile(samples, 50)), rssMaxMiB: round(samples.at(-1)!) };
  } finally {
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    await exited;
    clearTimeout(timer);
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(home, { recursive: true, force: true });
  }
}

async function measureSync(tree: Tree, endpoint: string): Promise<{ p50Us: number; p99Us: number; meanUs: number }> {
  const sync = await tree.replicaSetSync(endpoint);
  try {
    for (let i = 0; i < Math.min(50, SYNCS); i++) await sync.reconcile(`bench-${i % NAMESPACES}/rs`);
    const times: number[] = [];
    for (let i = 0; i < SYNCS; i++) {
      const t0 = performance.now();
      await sync.reconcile(`bench-${i % NAMESPACES}/rs`);
      times.push((performance.now() - t0) * 1000);
    }
    times.sort((a, b) => a - b);
    return { p50Us: round(percentile(times, 50)), p99Us: round(percentile(times, 99)), meanUs: round(times.reduce((a, b) => a + b, 0) / times.length) };
  } finally {
    await sync.stop();
  }
}

async function main(): Promise<void> {
  if (!existsSync(join(REPO, 'dist/bin/minik8s.js'))) throw new Error('build first: npm run build');
  const etcd = await startEtcd();
  const base = buildBase();
  if (base.why) log(`base not measured: ${base.why}`);
  try {
    log(`seeding ${PODS} pods in ${NAMESPACES} namespaces`);
    const t0 = performance.now();
    await seed(etcd.endpoint);
    log(`seeded in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    // A throwaway master of this tree serves the status resets between the measured runs.
    const trees = [...(base.tree ? [base.tree] : []), currentTree()];
    const results: Record<string, unknown> = {};
    const resetter = await startResetter(etcd.endpoint);
    try {
      for (const tree of trees) {
        log(`${tree.label}: master`);
        const master = await measureMaster(tree, etcd.endpoint, resetter.client);
        log(`${tree.label}: master ${JSON.stringify(master)}; ReplicaSet sync`);
        const sync = await measureSync(tree, etcd.endpoint);
        log(`${tree.label}: sync ${JSON.stringify(sync)}`);
        results[tree === base.tree ? 'base' : 'current'] = { tree: tree.label, master, replicaSetSync: sync };
      }
    } finally {
      await resetter.stop();
    }
    const b = results.base as { master: { rssMiB: number; settleS: number }; replicaSetSync: { p50Us: number } } | undefined;
    const c = results.current as { master: { rssMiB: number; settleS: number }; replicaSetSync: { p50Us: number } };
    process.stdout.write(
      `${JSON.stringify(
        {
          bench: 'informers',
          pods: PODS,
          namespaces: NAMESPACES,
          syncs: SYNCS,
          ...results,
          ...(base.why ? { baseSkipped: base.why } : {}),
          ratios: b
            ? {
                masterRss: round(c.master.rssMiB / b.master.rssMiB, 2),
                masterSettle: round(c.master.settleS / b.master.settleS, 2),
                replicaSetSyncP50: round(c.replicaSetSync.p50Us / b.replicaSetSync.p50Us, 3),
              }
            : undefined,
        },
        null,
        2,
      )}\n`,
    );
  } finally {
    removeBase(base.dir);
    await etcd.stop();
  }
}

/** An API over the bench's etcd for the status resets (this tree's server, in process, admin only). */
async function startResetter(endpoint: string): Promise<{ client: ApiClient; stop(): Promise<void> }> {
  const dist = join(REPO, 'dist/src');
  const { openStore } = await import(join(dist, 'control-plane/master/open-store.js'));
  const { startApiServer } = await import(join(dist, 'control-plane/api-server/server.js'));
  const { TokenAuthenticator, anyOf, ADMIN_USER } = await import(join(dist, 'control-plane/api-server/auth.js'));
  const store = await openStore({ endpoints: [endpoint] });
  const admins = new TokenAuthenticator();
  admins.add('bench', ADMIN_USER);
  const stop = new AbortController();
  const api = await startApiServer({ store, authenticator: anyOf(admins), address: '127.0.0.1', port: 0, signal: stop.signal });
  const client = new ApiClient({ server: api.url, token: 'bench' });
  return {
    client,
    async stop() {
      client.close();
      stop.abort();
      await api.closed;
      await store.close();
    },
  };
}

main().catch((err) => {
  process.stderr.write(`bench failed: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
