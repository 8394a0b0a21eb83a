// Benchmark of `get pods` as kubectl asks for it (a meta.k8s.io Table) against the plain list of the same 1,000 pods, in the same run: latency and bytes; prints JSON.
//
// Rounds alternate the three forms so the machine's noise falls on all alike. The plain list is
// the floor: a Table is built from the same cached objects, row by row, so it should cost about
// as much to answer and much less to send.
import { startMaster } from '../test/helpers/master.js';

const PODS = Number(process.env.BENCH_PODS ?? 1000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 30);
const CONCURRENCY = 16;

const TABLE = 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json';

const FORMS = {
  list: { accept: 'application/json', query: '' },
  /** What `kubectl get pods` sends: rows with each object's metadata (includeObject=Metadata is the default). */
  table: { accept: TABLE, query: '' },
  tableNoObject: { accept: TABLE, query: '?includeObject=None' },
} as const;

type Form = keyof typeof FORMS;

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor((s.length - 1) / 2)]!;
}

const round2 = (n: number) => Math.round(n * 100) / 100;

async function main(): Promise<void> {
  const master = await startMaster({ tls: false, registry: false });
  const headers = { authorization: `Bearer ${master.token}` };
  const pods = `${master.url}/api/v1/namespaces/default/pods`;
  try {
    let next = 0;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        for (let i = next++; i < PODS; i = next++) {
          const res = await fetch(pods, {
            method: 'POST',
            headers: { ...headers, 'content-type': 'application/json' },
            body: JSON.stringify({
              apiVersion: 'v1',
              kind: 'Pod',
              metadata: { name: `p-${i}`, labels: { app: 'bench' } },
              spec: { containers: [{ name: 'app', image: 'busybox:1.36', command: ['sleep', '3600'], ports: [{ containerPort: 8080 }] }] },
            }),
          });
          if (res.status !== 201) throw new Error(`create answered ${res.status}: ${await res.text()}`);
        }
      }),
    );
    const latency: Record<Form, number[]> = { list: [], table: [], tableNoObject: [] };
    const bytes: Record<Form, number> = { list: 0, table: 0, tableNoObject: 0 };
    const forms = Object.keys(FORMS) as Form[];
    for (let r = 0; r < ROUNDS; r++) {
      // Rotate which goes first.
      for (let k = 0; k < forms.length; k++) {
        const form = forms[(r + k) % forms.length]!;
        const t0 = performance.now();
        const res = await fetch(`${pods}${FORMS[form].query}`, { headers: { ...headers, accept: FORMS[form].accept } });
        const body = await res.arrayBuffer();
        latency[form].push(performance.now() - t0);
        if (res.status !== 200) throw new Error(`${form} answered ${res.status}`);
        bytes[form] = body.byteLength;
        if (r === 0) {
          const parsed = JSON.parse(new TextDecoder().decode(body)) as { kind: string; items?: unknown[]; rows?: unknown[] };
          const count = parsed.items?.length ?? parsed.rows?.length;
          if (count !== PODS) throw new Error(`${form} (${parsed.kind}) held ${count} pods, not ${PODS}`);
        }
      }
    }
    const p50 = (f: Form) => round2(median(latency[f]));
    const result = {
      benchmark: 'table',
      pods: PODS,
      rounds: ROUNDS,
      list: { p50Ms: p50('list'), bytes: bytes.list },
      table: { p50Ms: p50('table'), bytes: bytes.table },
      tableNoObject: { p50Ms: p50('tableNoObject'), bytes: bytes.tableNoObject },
      ratio: {
        tableLatencyVsList: round2(p50('table') / p50('list')),
        tableBytesVsList: round2(bytes.table / bytes.list),
        tableNoObjectLatencyVsList: round2(p50('tableNoObject') / p50('list')),
        tableNoObjectBytesVsList: round2(bytes.tableNoObject / bytes.list),
      },
      targets: {
        tableLatencyVsList: { want: '<= 1.5', ok: p50('table') / p50('list') <= 1.5 },
        tableBytesVsList: { want: '< 1', ok: bytes.table < bytes.list },
      },
    };
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  } finally {
    await master.stop();
  }
}

main().catch((err) => {
  process.stderr.write(`bench failed: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
