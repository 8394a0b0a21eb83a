// End to end on a real Docker engine: an Indexed Job, a Job failing at its backoffLimit and a CronJob with Forbid, with real pods on a joined worker.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import type { CronJob } from '../src/core/api/cronjob.js';
import type { Job } from '../src/core/api/job.js';
import type { Pod } from '../src/core/api/pod.js';
import { waitFor } from '../src/core/wait-for.js';
import { BINARY, startMaster, type MasterProcess } from './helpers/master.js';
import { startWorker, type WorkerProcess } from './helpers/worker.js';

const NS = `jobs-e2e-${process.pid}`;
const IMAGE = 'busybox:1.35';

describe('Jobs and CronJobs end to end on Docker', () => {
  let master: MasterProcess;
  let worker: WorkerProcess;

  const cli = (...args: string[]) => spawnSync(process.execPath, [BINARY, ...args], { env: master.env, encoding: 'utf8', timeout: 60_000 });
  const api = async <T = unknown>(method: string, path: string, body?: unknown) => {
    const res = await fetch(`${master.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${master.token}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text}`);
    return (text ? JSON.parse(text) : undefined) as T;
  };
  const job = (name: string) => api<Job>('GET', `/apis/batch/v1/namespaces/${NS}/jobs/${name}`);
  const podsOf = async (jobName: string) =>
    (await api<{ items: Pod[] }>('GET', `/api/v1/namespaces/${NS}/pods?labelSelector=${encodeURIComponent(`batch.kubernetes.io/job-name=${jobName}`)}`)).items;
  const condition = (j: Job, type: string) => j.status?.conditions?.find((c) => c.type === type && c.status === 'True');
  const template = (command: string) => ({ spec: { restartPolicy: 'Never', containers: [{ name: 'main', image: IMAGE, command: ['sh', '-c', command] }] } });

  before(
    async () => {
      master = await startMaster({ seedImages: true });
      worker = await startWorker({ server: master.url, joinToken: master.joinToken });
      await api('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
      // All three up front, so that their waits overlap.
      await api('POST', `/apis/batch/v1/namespaces/${NS}/jobs`, {
        apiVersion: 'batch/v1',
        kind: 'Job',
        metadata: { name: 'indexed' },
        spec: { completions: 5, parallelism: 2, completionMode: 'Indexed', template: template('echo "index $JOB_COMPLETION_INDEX done"') },
      });
      await api('POST', `/apis/batch/v1/namespaces/${NS}/jobs`, {
        apiVersion: 'batch/v1',
        kind: 'Job',
        metadata: { name: 'failing' },
        spec: { backoffLimit: 1, template: template('echo failing; exit 3') },
      });
      await api('POST', `/apis/batch/v1/namespaces/${NS}/cronjobs`, {
        apiVersion: 'batch/v1',
        kind: 'CronJob',
        metadata: { name: 'tick' },
        spec: { schedule: '* * * * *', concurrencyPolicy: 'Forbid', jobTemplate: { spec: { template: template('sleep 300') } } },
      });
    },
    { timeout: 240_000 },
  );

  after(
    async () => {
      await api('DELETE', `/api/v1/namespaces/${NS}`).catch(() => {});
      await worker?.destroy();
      await master?.stop();
    },
    { timeout: 120_000 },
  );

  it('refuses a Job whose pods would restart Always, in Kubernetes words', async () => {
    await assert.rejects(
      api('POST', `/apis/batch/v1/namespaces/${NS}/jobs`, {
        apiVersion: 'batch/v1',
        kind: 'Job',
        metadata: { name: 'always' },
        spec: { template: { spec: { containers: [{ name: 'main', image: IMAGE }] } } },
      }),
      /422 .*spec\.template\.spec\.restartPolicy: Unsupported value: \\"Always\\": supported values: \\"OnFailure\\", \\"Never\\"/,
    );
  });

  it('an Indexed Job of 5 with parallelism 2 completes with each index in its pod logs', async () => {
    const done = await waitFor(async () => ((j) => (condition(j, 'Complete') ? j : undefined))(await job('indexed')), {
      timeoutMs: 120_000,
      intervalMs: 500,
      description: 'Job indexed Complete',
    });
    assert.equal(done.status?.succeeded, 5);
    assert.equal(done.status?.completedIndexes, '0-4');
    assert.ok(done.status?.completionTime);
    const pods = await podsOf('indexed');
    const outputs = new Set<string>();
    for (const pod of pods.filter((p) => p.status?.phase === 'Succeeded')) {
      const log = cli('logs', '-n', NS, pod.metadata.name!);
      assert.equal(log.status, 0, log.stderr);
      const index = pod.metadata.annotations?.['batch.kubernetes.io/job-completion-index'];
      assert.equal(log.stdout, `index ${index} done\n`);
      outputs.add(log.stdout.trim());
    }
    assert.deepEqual(
      [...outputs].sort(),
      [0, 1, 2, 3, 4].map((i) => `index ${i} done`),
    );
    const table = cli('get', 'jobs', '-n', NS, 'indexed');
    assert.match(table.stdout, /^NAME\s+STATUS\s+COMPLETIONS\s+DURATION\s+AGE\n/);
    assert.match(table.stdout, /\nindexed\s+Complete\s+5\/5\s+\d+s\s+\d+s\n/);
  });

  it('a failing Job stops at backoffLimit 1 with Failed/BackoffLimitExceeded', async () => {
    const failed = await waitFor(async () => ((j) => (condition(j, 'Failed') ? j : undefined))(await job('failing')), {
      timeoutMs: 120_000,
      intervalMs: 500,
      description: 'Job failing Failed',
    });
    const c = condition(failed, 'Failed')!;
    assert.equal(c.reason, 'BackoffLimitExceeded');
    assert.equal(c.message, 'Job has reached the specified backoff limit');
    assert.equal(failed.status?.failed, 2);
    const pods = await podsOf('failing');
    assert.equal(pods.length, 2, 'two pods: the first and one retry');
    assert.ok(pods.every((p) => p.status?.phase === 'Failed'));
  });

  it('a CronJob every minute with Forbid starts one Job named after its minute and records it', async () => {
    const cj = await waitFor(
      async () => {
        const c = await api<CronJob>('GET', `/apis/batch/v1/namespaces/${NS}/cronjobs/tick`);
        return c.status?.active?.length ? c : undefined;
      },
      { timeoutMs: 75_000, intervalMs: 500, description: 'CronJob tick has an active Job' },
    );
    const scheduled = Date.parse(cj.status!.lastScheduleTime!);
    assert.equal(cj.status!.active![0].name, `tick-${scheduled / 60_000}`);
    const jobs = (await api<{ items: Job[] }>('GET', `/apis/batch/v1/namespaces/${NS}/jobs`)).items.filter((j) => j.metadata.name!.startsWith('tick-'));
    assert.equal(jobs.length, 1);
    const table = cli('get', 'cronjobs', '-n', NS);
    assert.match(table.stdout, /^NAME\s+SCHEDULE\s+TIMEZONE\s+SUSPEND\s+ACTIVE\s+LAST SCHEDULE\s+AGE\n/);
    assert.match(table.stdout, /\ntick\s+\* \* \* \* \*\s+<none>\s+False\s+1\s+\d+s\s+\S+\n/);
  });
});
