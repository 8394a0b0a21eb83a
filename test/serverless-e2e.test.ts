// Serverless end to end on three simulated machines: a function created with the CLI cold-starts through the activator, 50 clients for 30 s all succeed while it scales out over nodes, it goes back to zero after the idle grace, a soft update under load loses no call, a hard update cold-starts the new version, a workflow's Choice takes two branches, and a raising handler gives a 500 with a record.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Docker from 'dockerode';
import type { Event } from '../src/core/api/event.js';
import type { FunctionObject } from '../src/core/api/function.js';
import type { InvocationRecord } from '../src/core/api/invocation-record.js';
import type { Node } from '../src/core/api/node.js';
import type { Pod } from '../src/core/api/pod.js';
import type { ReplicaSet } from '../src/core/api/replicaset.js';
import type { WorkflowExecutionSummary } from '../src/core/api/workflow-execution.js';
import { waitFor } from '../src/core/wait-for.js';
import { BINARY } from './helpers/master.js';
import { createNetnsCluster, netnsSkipReason, type NetnsCluster } from './helpers/netns-node.js';

const NS = `srv-${process.pid}`;
const FN = 'echo';
const EXAMPLE = new URL('../../examples/workflow-choice.yaml', import.meta.url).pathname;
const skip = netnsSkipReason();

/** The handler of version N: says its version, sleeps when asked (so calls overlap and the function scales), raises on "boom". */
const handler = (version: number) =>
  [
    'import time',
    'def handler(event, context):',
    '    if event == "boom":',
    '        raise ValueError("cannot take boom")',
    '    if isinstance(event, dict) and event.get("sleep"):',
    '        time.sleep(event["sleep"])',
    `    return {"version": ${version}, "echo": event}`,
    '',
  ].join('\n');

interface LoadResult {
  ok: number;
  /** Each failed call: its status or error, with its body. */
  failures: string[];
  /** Answers per version the handler reported. */
  versions: Map<number, number>;
  /** The version of the last answer each client got. */
  lastVersions: number[];
}

/**
 * Our own bounded load: `clients` loops, each sending one call after the other to `url` until
 * `stop` aborts or `maxMs` passes (whichever is first), so it ends by itself.
 */
async function load(o: { url: string; clients: number; maxMs: number; stop?: AbortSignal; body: unknown }): Promise<LoadResult> {
  const result: LoadResult = { ok: 0, failures: [], versions: new Map(), lastVersions: [] };
  const deadline = Date.now() + o.maxMs;
  const client = async (i: number) => {
    while (Date.now() < deadline && !o.stop?.aborted) {
      try {
        const res = await fetch(o.url, {
          method: 'POST',
          body: JSON.stringify(o.body),
          headers: { 'content-type': 'application/json' },
          signal: AbortSignal.timeout(90_000),
        });
        const text = await res.text();
        if (res.status !== 200) {
          result.failures.push(`${res.status}: ${text.slice(0, 200)}`);
          continue;
        }
        const version = (JSON.parse(text) as { version: number }).version;
        result.ok += 1;
        result.versions.set(version, (result.versions.get(version) ?? 0) + 1);
        result.lastVersions[i] = version;
      } catch (err) {
        result.failures.push(String(err));
      }
    }
  };
  await Promise.all(Array.from({ length: o.clients }, (_, i) => client(i)));
  return result;
}

describe('serverless on the simulated cluster (three machines)', { skip }, () => {
  let cluster: NetnsCluster | undefined;
  const dir = mkdtempSync(join(tmpdir(), 'minik8s-srv-e2e-'));

  const master = () => cluster!.master;
  const fnUrl = (name = FN) => `${master().activatorUrl}/namespaces/${NS}/function/${name}`;
  /** The answer's JSON, as the caller says it is. */
  const api = async <T = unknown>(method: string, path: string, body?: unknown) => {
    const res = await fetch(`${master().url}${path}`, {
      method,
      headers: { authorization: `Bearer ${master().token}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const json: unknown = await res.json();
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${(json as { message?: string } | null)?.message}`);
    return json as T;
  };
  const cli = (...args: string[]) =>
    new Promise<{ status: number; stdout: string; stderr: string }>((resolve) => {
      execFile(process.execPath, [BINARY, '-n', NS, ...args], { env: master().env, encoding: 'utf8', timeout: 400_000 }, (err, stdout, stderr) => {
        resolve({ status: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
      });
    });
  const ok = async (...args: string[]) => {
    const r = await cli(...args);
    assert.equal(r.status, 0, `minik8s ${args.join(' ')} exited ${r.status}:\n${r.stdout}\n${r.stderr}`);
    return r;
  };
  /** The function's pods (not yet deleting), with their version, node and readiness. */
  const pods = async () =>
    (await api<{ items: Pod[] }>('GET', `/api/v1/namespaces/${NS}/pods?labelSelector=minik8s.io/function=${FN}`)).items.map((p) => ({
      name: p.metadata.name as string,
      version: Number(p.metadata.labels!['minik8s.io/function-version']),
      node: p.spec.nodeName as string | undefined,
      ready: Boolean(p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')),
    }));
  const invoke = async (body: unknown, name = FN) => {
    const res = await fetch(fnUrl(name), {
      method: 'POST',
      body: JSON.stringify(body),
      headers: { 'content-type': 'application/json' },
      signal: AbortSignal.timeout(120_000),
    });
    return { status: res.status, headers: res.headers, text: await res.text() };
  };

  before(async () => {
    cluster = await createNetnsCluster({ machines: ['a', 'b', 'c'] });
    await waitFor(
      async () => {
        const nodes = (await api<{ items: Node[] }>('GET', '/api/v1/nodes')).items;
        return nodes.filter((n) => n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')).length === 3;
      },
      { timeoutMs: 120_000, intervalMs: 500, description: 'three nodes Ready' },
    );
    await api('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
  });

  after(async () => {
    await cluster?.destroy();
    rmSync(dir, { recursive: true, force: true });
    // The function images the master built on this host's engine (functions/NAMESPACE-NAME, whatever registry address they carry).
    const docker = new Docker();
    for (const image of await docker.listImages().catch(() => [])) {
      const refs = [...(image.RepoTags ?? []), ...(image.RepoDigests ?? [])];
      if (refs.some((r) => r.includes(`/functions/${NS}-`)))
        await docker
          .getImage(image.Id)
          .remove({ force: true })
          .catch(() => {});
    }
  });

  it('creates a function with the CLI; the first call cold-starts it and answers', { timeout: 400_000 }, async () => {
    writeFileSync(join(dir, 'v1.py'), handler(1));
    await ok('function', 'create', FN, '-f', join(dir, 'v1.py'), '--handler', 'v1.handler', '--target', '5', '--max-scale', '6', '--idle-grace', '10');
    assert.deepEqual(await pods(), []);
    const first = await invoke({ n: 1 });
    assert.equal(first.status, 200, first.text);
    assert.deepEqual(JSON.parse(first.text), { version: 1, echo: { n: 1 } });
    assert.equal(first.headers.get('x-minik8s-cold-start'), 'true');
    const id = first.headers.get('x-minik8s-invocation-id')!;
    const record = await api<InvocationRecord>('GET', `/apis/minik8s.io/v1/namespaces/${NS}/functions/${FN}/invocations/${id}`);
    assert.equal(record.coldStart, true);
    assert.equal(record.status, 200);
  });

  it('a handler that raises gives a 500 and a record with the error and the traceback', async () => {
    const res = await invoke('boom');
    assert.equal(res.status, 500);
    const body = JSON.parse(res.text);
    assert.match(body.error, /ValueError: cannot take boom/);
    const id = res.headers.get('x-minik8s-invocation-id')!;
    const record = await api<InvocationRecord>('GET', `/apis/minik8s.io/v1/namespaces/${NS}/functions/${FN}/invocations/${id}`);
    assert.equal(record.status, 500);
    assert.match(record.error!, /^ValueError: cannot take boom/);
    assert.match(record.traceback!, /Traceback \(most recent call last\):[\s\S]*v1\.py", line 4, in handler[\s\S]*ValueError: cannot take boom/);
    // The runtime lives on.
    assert.equal((await invoke({ n: 2 })).status, 200);
  });

  it('50 clients for at least 30 s: every call succeeds, on more than one pod over more than one node', { timeout: 300_000 }, async () => {
    const seenPods = new Set<string>();
    const seenNodes = new Set<string>();
    const stopWatching = new AbortController();
    const stopLoad = new AbortController();
    const started = Date.now();
    // Ready pods seen while the load runs (the pods list, twice a second). The load runs 30 s, and
    // on past that (up to 120 s) until pods on a second node are Ready: a node that has never run
    // the function pulls its image first, which on a loaded machine can take longer than 30 s.
    const watching = (async () => {
      while (!stopWatching.signal.aborted) {
        for (const p of await pods().catch(() => [])) {
          if (p.ready) {
            seenPods.add(p.name);
            if (p.node) seenNodes.add(p.node);
          }
        }
        if (seenNodes.size > 1 && Date.now() - started >= 30_000) stopLoad.abort();
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
    })();
    const result = await load({ url: fnUrl(), clients: 50, maxMs: 120_000, stop: stopLoad.signal, body: { sleep: 0.1 } });
    stopWatching.abort();
    await watching;
    const seconds = (Date.now() - started) / 1000;
    process.stderr.write(
      `# load: ${result.ok} calls in ${seconds.toFixed(1)} s (${(result.ok / seconds).toFixed(0)}/s), ${result.failures.length} failed; Ready pods ${seenPods.size} on ${seenNodes.size} nodes\n`,
    );
    assert.deepEqual(result.failures, []);
    assert.ok(result.ok > 100, `only ${result.ok} calls answered`);
    assert.ok(seenPods.size > 1, `only ${seenPods.size} pod(s) served`);
    assert.ok(seenNodes.size > 1, `pods only on ${[...seenNodes].join(', ')}`);
    const events = (await api<{ items: Event[] }>('GET', `/api/v1/namespaces/${NS}/events`)).items
      .filter((e) => e.involvedObject.name === FN)
      .map((e) => e.reason);
    assert.ok(events.includes('ScaledUp'), events.join(','));
  });

  it('after the load and the idle grace it is back at zero pods', { timeout: 200_000 }, async () => {
    await waitFor(
      async () => (await api<ReplicaSet>('GET', `/apis/apps/v1/namespaces/${NS}/replicasets/${FN}-v1`)).spec.replicas === 0 && (await pods()).length === 0,
      { timeoutMs: 180_000, intervalMs: 1000, description: `${FN} at zero pods` },
    );
  });

  it('a soft update under load: no call fails, answers switch to v2, the old pods go', { timeout: 500_000 }, async () => {
    writeFileSync(join(dir, 'v1.py'), handler(2));
    const stop = new AbortController();
    const running = load({ url: fnUrl(), clients: 10, maxMs: 420_000, stop: stop.signal, body: { sleep: 0.05 } });
    try {
      // The load cold-starts v1 first: the update then replaces pods that serve.
      await waitFor(async () => (await pods()).some((p) => p.version === 1 && p.ready), {
        timeoutMs: 120_000,
        intervalMs: 500,
        description: 'a Ready v1 pod under load',
      });
      await ok('function', 'update', FN, '-f', join(dir, 'v1.py'), '--soft');
      await waitFor(
        async () => {
          const now = await pods();
          return now.length > 0 && now.every((p) => p.version === 2);
        },
        { timeoutMs: 180_000, intervalMs: 500, description: 'only v2 pods' },
      );
      // A few more seconds of calls on v2 alone.
      await new Promise((resolve) => setTimeout(resolve, 3000));
    } finally {
      stop.abort();
    }
    const result = await running;
    process.stderr.write(`# soft update: ${result.ok} calls, versions ${JSON.stringify([...result.versions])}, ${result.failures.length} failed\n`);
    assert.deepEqual(result.failures, []);
    assert.ok((result.versions.get(1) ?? 0) > 0 && (result.versions.get(2) ?? 0) > 0, JSON.stringify([...result.versions]));
    assert.deepEqual([...new Set(result.lastVersions)], [2]);
    assert.equal((await api<ReplicaSet>('GET', `/apis/apps/v1/namespaces/${NS}/replicasets/${FN}-v1`)).spec.replicas, 0);
  });

  it('a hard update deletes the old pods at once; the next call cold-starts the new version', { timeout: 500_000 }, async () => {
    assert.ok(
      (await pods()).some((p) => p.version === 2),
      'v2 pods before the hard update',
    );
    writeFileSync(join(dir, 'v1.py'), handler(3));
    await ok('function', 'update', FN, '-f', join(dir, 'v1.py'), '--hard');
    await waitFor(async () => (await api<ReplicaSet>('GET', `/apis/apps/v1/namespaces/${NS}/replicasets/${FN}-v2`)).spec.replicas === 0, {
      timeoutMs: 10_000,
      intervalMs: 200,
      description: `${FN}-v2 scaled to 0`,
    });
    // Deleted at once (their grace covers calls in flight; there are none).
    await waitFor(async () => (await pods()).every((p) => p.version !== 2), { timeoutMs: 60_000, intervalMs: 500, description: 'the v2 pods gone' });
    const next = await invoke({ n: 3 });
    assert.equal(next.status, 200, next.text);
    assert.deepEqual(JSON.parse(next.text), { version: 3, echo: { n: 3 } });
    assert.equal(next.headers.get('x-minik8s-cold-start'), 'true');
    assert.equal(next.headers.get('x-minik8s-version'), '3');
  });

  it('a workflow with a Choice takes different branches for two inputs', { timeout: 500_000 }, async () => {
    await ok('apply', '-f', EXAMPLE);
    for (const fn of ['add', 'add-five']) {
      await waitFor(
        async () => (await api<FunctionObject>('GET', `/apis/minik8s.io/v1/namespaces/${NS}/functions/${fn}`)).status?.build?.phase === 'Succeeded',
        { timeoutMs: 400_000, intervalMs: 1000, description: `function ${fn} built` },
      );
    }
    const run = async (input: unknown) => {
      const res = await fetch(`${master().activatorUrl}/namespaces/${NS}/workflow/add-and-judge`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(input),
        signal: AbortSignal.timeout(180_000),
      });
      const text = await res.text();
      assert.equal(res.status, 200, text);
      return JSON.parse(text);
    };
    assert.deepEqual(await run({ x: 6, y: 7 }), { x: 18, message: 'x is 18' });
    assert.deepEqual(await run({ x: 1, y: 2 }), { x: 8, message: 'x is not 18' });
    const executions = (JSON.parse((await ok('workflow', 'executions', 'add-and-judge', '-o', 'json')).stdout) as { items: WorkflowExecutionSummary[] }).items;
    assert.deepEqual(
      executions.map((e) => e.status),
      ['SUCCEEDED', 'SUCCEEDED'],
    );
  });
});
