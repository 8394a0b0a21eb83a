// Benchmark of RBAC's cost: the authorizer alone (p50/p99 per request with 1,000 RoleBindings) and API creates per second by an RBAC user against the admin (system:masters, which skips the authorizer) in the same run; prints one JSON object (progress on stderr).
//
// The authorizer part builds the bootstrap policy (aggregated) plus BENCH_BINDINGS RoleBindings
// (one user each, over 50 namespaces, half to edit and half to view) in memory and times the whole
// chain (requestAttributes, the Node rules, RBAC) for BENCH_DECISIONS requests of those users.
// The API part starts a real TLS master, creates the same RoleBindings there, then creates
// BENCH_CREATES Secrets with BENCH_CONCURRENCY clients first as the admin and then as a user
// with a client certificate bound to edit (so every create passes RBAC), in one namespace.
import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import type { RoleBinding } from '../src/core/api/rbac.js';
import { ApiClient } from '../src/core/client/api-client.js';
import { issueClientCert, loadOrCreateCa } from '../src/core/pki/pki.js';
import { authorize, requestAttributes } from '../src/control-plane/api-server/authorization.js';
import { aggregatedRules, defaultClusterRoleBindings, defaultClusterRoles } from '../src/control-plane/rbac/default-roles.js';
import { RbacIndex } from '../src/control-plane/rbac/rbac-authorizer.js';
import { rbacChain } from '../src/control-plane/rbac/rbac-chain.js';
import { waitFor } from '../src/core/wait-for.js';
import { startMaster, type MasterProcess } from '../test/helpers/master.js';

const num = (env: string, fallback: number) => {
  const n = Number(process.env[env] ?? fallback);
  if (!Number.isInteger(n) || n < 1) {
    process.stderr.write(`bench failed: ${env} must be a positive whole number, not "${process.env[env]}"\n`);
    process.exit(2);
  }
  return n;
};
const BINDINGS = num('BENCH_BINDINGS', 1000);
const DECISIONS = num('BENCH_DECISIONS', 200_000);
const CREATES = num('BENCH_CREATES', 1000);
const CONCURRENCY = num('BENCH_CONCURRENCY', 8);
const NAMESPACES = 50;
const G = 'rbac.authorization.k8s.io';
const log = (m: string) => process.stderr.write(`${m}\n`);

function binding(i: number): RoleBinding {
  return {
    apiVersion: `${G}/v1`,
    kind: 'RoleBinding',
    metadata: { namespace: `bench-${i % NAMESPACES}`, name: `user-${i}` },
    subjects: [{ kind: 'User', apiGroup: G, name: `user-${i}` }],
    roleRef: { apiGroup: G, kind: 'ClusterRole', name: i % 2 === 0 ? 'edit' : 'view' },
  };
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

function authorizerFigures() {
  const index = new RbacIndex();
  const roles = defaultClusterRoles();
  for (let pass = 0; pass < 2; pass++) for (const r of roles) r.rules = aggregatedRules(r, roles) ?? r.rules;
  for (const r of roles) index.setClusterRole(r);
  for (const b of defaultClusterRoleBindings()) index.setBinding(b);
  for (let i = 0; i < BINDINGS; i++) index.setBinding(binding(i));
  const chain = rbacChain(index);
  const requests = [
    ['GET', 'pods'],
    ['POST', 'pods'],
    ['GET', 'secrets/s'],
    ['DELETE', 'services/web'],
  ] as const;
  const samples: number[] = [];
  let allowed = 0;
  for (let n = 0; n < DECISIONS; n++) {
    const i = n % BINDINGS;
    const [method, what] = requests[n % requests.length]!;
    // Half the requests in the user's own namespace, half in another (denied after looking at every binding of the user).
    const ns = `bench-${(i + (n % 2)) % NAMESPACES}`;
    const user = { name: `user-${i}`, groups: ['team'] };
    const start = process.hrtime.bigint();
    const d = authorize(user, requestAttributes(method, `/api/v1/namespaces/${ns}/${what}`), chain);
    samples.push(Number(process.hrtime.bigint() - start) / 1000);
    if (d.allowed) allowed++;
  }
  samples.sort((a, b) => a - b);
  return {
    bindings: BINDINGS,
    decisions: DECISIONS,
    allowedFraction: +(allowed / DECISIONS).toFixed(3),
    p50Us: +percentile(samples, 50).toFixed(2),
    p99Us: +percentile(samples, 99).toFixed(2),
  };
}

async function createsPerSecond(client: ApiClient, namespace: string, prefix: string): Promise<number> {
  let next = 0;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      for (let i = next++; i < CREATES; i = next++) {
        await client.request('POST', `/api/v1/namespaces/${namespace}/secrets`, {
          body: { apiVersion: 'v1', kind: 'Secret', metadata: { name: `${prefix}-${i}` }, stringData: { k: 'v' } },
        });
      }
    }),
  );
  return +(CREATES / ((performance.now() - start) / 1000)).toFixed(1);
}

async function main(): Promise<void> {
  log(`authorizer: ${BINDINGS} RoleBindings, ${DECISIONS} decisions`);
  const authorizer = authorizerFigures();
  log(`authorizer: ${JSON.stringify(authorizer)}`);
  let master: MasterProcess | undefined;
  const dir = mkdtempSync(join(tmpdir(), 'minik8s-bench-rbac-'));
  try {
    master = await startMaster({ tls: true, registry: false });
    const admin = new ApiClient({ server: master.url, token: master.token, tls: { ca: master.ca } });
    for (let n = 0; n < NAMESPACES; n++)
      await admin.request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: `bench-${n}` } } });
    log(`api: creating ${BINDINGS} RoleBindings`);
    for (let i = 0; i < BINDINGS; i++) {
      const b = binding(i);
      await admin.request('POST', `/apis/${G}/v1/namespaces/${b.metadata.namespace}/rolebindings`, { body: b });
    }
    // user-0 holds edit in bench-0: creates Secrets there by RBAC.
    const ca = await loadOrCreateCa({ dir: join(master.dataDir, 'pki') });
    const cert = await issueClientCert(ca, { user: 'user-0', groups: ['team'] });
    const user = new ApiClient({ server: master.url, tls: { ca: master.ca, cert: cert.certPem, key: cert.keyPem } });
    await waitFor(
      async () =>
        user.request('GET', '/api/v1/namespaces/bench-0/secrets').then(
          () => true,
          () => undefined,
        ),
      { timeoutMs: 30_000, description: 'user-0 bound' },
    );
    log(`api: ${CREATES} Secret creates with ${CONCURRENCY} clients, admin then RBAC user`);
    const adminRate = await createsPerSecond(admin, 'bench-0', 'admin');
    const rbacRate = await createsPerSecond(user, 'bench-0', 'user');
    admin.close();
    user.close();
    const api = {
      creates: CREATES,
      concurrency: CONCURRENCY,
      adminCreatesPerS: adminRate,
      rbacUserCreatesPerS: rbacRate,
      rbacOverAdmin: +(rbacRate / adminRate).toFixed(3),
    };
    process.stdout.write(`${JSON.stringify({ authorizer, api }, null, 2)}\n`);
  } finally {
    await master?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`bench failed: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
