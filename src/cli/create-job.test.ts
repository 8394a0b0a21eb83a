// create job|cronjob: the objects kubectl create job|cronjob build, and the command line end to end against the test API server.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { CronJob } from '../core/api/cronjob.js';
import { runCliAgainst } from './cli-test-run.js';
import { cronJobFromImage, jobFromCronJob, jobFromImage, parseFrom } from './create-job.js';
import { startTestApiServer, type TestApiServer } from './test-api-server.js';

const cronJob = {
  apiVersion: 'batch/v1',
  kind: 'CronJob',
  metadata: { name: 'nightly', namespace: 'ns', uid: 'cj-1' },
  spec: {
    schedule: '0 3 * * *',
    jobTemplate: {
      metadata: { labels: { team: 'data' }, annotations: { note: 'x' } },
      spec: { backoffLimit: 2, template: { spec: { containers: [{ name: 'c', image: 'busybox', command: ['date'] }], restartPolicy: 'OnFailure' } } },
    },
  },
} as unknown as CronJob;

describe('create job and cronjob objects', () => {
  it('a Job from an image: one container named after the Job, the words after -- as its command, restartPolicy Never', () => {
    assert.deepEqual(jobFromImage({ name: 'pi', image: 'busybox', command: ['sh', '-c', 'echo 3.14'] }, 'ns'), {
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: { name: 'pi', namespace: 'ns' },
      spec: {
        template: { metadata: {}, spec: { containers: [{ name: 'pi', image: 'busybox', command: ['sh', '-c', 'echo 3.14'] }], restartPolicy: 'Never' } },
      },
    });
    const bare = jobFromImage({ name: 'pi', image: 'busybox', command: [] }, 'ns') as { spec: { template: { spec: { containers: unknown[] } } } };
    assert.deepEqual(bare.spec.template.spec.containers, [{ name: 'pi', image: 'busybox' }]);
  });

  it("a Job from a CronJob: its template's spec, labels and annotations, instantiate=manual, the CronJob as controller", () => {
    assert.deepEqual(jobFromCronJob('run-now', cronJob, 'ns'), {
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: {
        name: 'run-now',
        namespace: 'ns',
        labels: { team: 'data' },
        annotations: { 'cronjob.kubernetes.io/instantiate': 'manual', note: 'x' },
        ownerReferences: [{ apiVersion: 'batch/v1', kind: 'CronJob', name: 'nightly', uid: 'cj-1', controller: true }],
      },
      spec: cronJob.spec.jobTemplate.spec,
    });
  });

  it('a CronJob from an image: schedule, restartPolicy OnFailure unless given, the command', () => {
    assert.deepEqual(cronJobFromImage({ name: 'tick', image: 'busybox', schedule: '*/1 * * * *', command: ['date'] }, 'ns'), {
      apiVersion: 'batch/v1',
      kind: 'CronJob',
      metadata: { name: 'tick', namespace: 'ns' },
      spec: {
        schedule: '*/1 * * * *',
        jobTemplate: {
          metadata: { name: 'tick' },
          spec: { template: { metadata: {}, spec: { containers: [{ name: 'tick', image: 'busybox', command: ['date'] }], restartPolicy: 'OnFailure' } } },
        },
      },
    });
    const never = cronJobFromImage({ name: 't', image: 'i', schedule: '@hourly', restart: 'Never', command: [] }, 'ns') as {
      spec: { jobTemplate: { spec: { template: { spec: { restartPolicy: string } } } } };
    };
    assert.equal(never.spec.jobTemplate.spec.template.spec.restartPolicy, 'Never');
    assert.throws(() => cronJobFromImage({ name: 't', schedule: '@hourly', command: [] }, 'ns'), /--image must be specified/);
    assert.throws(() => cronJobFromImage({ name: 't', image: 'i', command: [] }, 'ns'), /--schedule must be specified/);
  });

  it('takes --from as cronjob/NAME by any of the kind names, nothing else', () => {
    assert.equal(parseFrom('cronjob/nightly'), 'nightly');
    assert.equal(parseFrom('cj/nightly'), 'nightly');
    assert.equal(parseFrom('cronjobs.batch/nightly'), 'nightly');
    assert.throws(() => parseFrom('nightly'), /--from must be of the form cronjob\/NAME/);
    assert.throws(() => parseFrom('deployment/web'), /unknown object type Deployment/);
  });
});

describe('minik8s create job|cronjob', () => {
  let api: TestApiServer;
  before(async () => {
    api = await startTestApiServer();
    api.objects.set('/apis/batch/v1/namespaces/default/cronjobs/nightly', { ...cronJob, metadata: { ...cronJob.metadata, namespace: 'default' } });
  });
  after(() => api.close());
  interface Stored {
    metadata: { annotations: Record<string, string>; ownerReferences: { name: string }[] };
    spec: { schedule: string; template: { spec: { containers: unknown[] } }; jobTemplate: { spec: { template: { spec: unknown } } } };
  }
  const stored = (path: string) => api.objects.get(path) as unknown as Stored | undefined;

  it('creates a Job with the command after --, and prints what kubectl prints', async () => {
    const r = await runCliAgainst(api.url, ['create', 'job', 'pi', '--image=busybox', '--', 'sh', '-c', 'echo hi']);
    assert.equal(r.err, '');
    assert.equal(r.out, 'job.batch/pi created\n');
    assert.equal(r.code, 0);
    assert.deepEqual(stored('/apis/batch/v1/namespaces/default/jobs/pi')?.spec.template.spec.containers, [
      { name: 'pi', image: 'busybox', command: ['sh', '-c', 'echo hi'] },
    ]);
  });

  it("creates a Job from a CronJob's template", async () => {
    const r = await runCliAgainst(api.url, ['create', 'job', 'now', '--from=cronjob/nightly']);
    assert.equal(r.out, 'job.batch/now created\n');
    const job = stored('/apis/batch/v1/namespaces/default/jobs/now');
    assert.equal(job?.metadata.annotations['cronjob.kubernetes.io/instantiate'], 'manual');
    assert.equal(job?.metadata.ownerReferences[0].name, 'nightly');
    assert.deepEqual(job?.spec.template.spec.containers, [{ name: 'c', image: 'busybox', command: ['date'] }]);
  });

  it('creates a CronJob', async () => {
    const r = await runCliAgainst(api.url, ['create', 'cronjob', 'tick', '--image=busybox', '--schedule=*/1 * * * *', '--restart=Never', '--', 'date']);
    assert.equal(r.out, 'cronjob.batch/tick created\n');
    const cj = stored('/apis/batch/v1/namespaces/default/cronjobs/tick');
    assert.equal(cj?.spec.schedule, '*/1 * * * *');
    assert.deepEqual(cj?.spec.jobTemplate.spec.template.spec, { containers: [{ name: 'tick', image: 'busybox', command: ['date'] }], restartPolicy: 'Never' });
  });

  const refused: [string, string[], RegExp][] = [
    ['neither --image nor --from', ['create', 'job', 'x'], /either --image or --from must be specified/],
    ['both --image and --from', ['create', 'job', 'x', '--image=i', '--from=cronjob/nightly'], /either --image or --from must be specified/],
    ['--from with a command', ['create', 'job', 'x', '--from=cronjob/nightly', '--', 'date'], /cannot specify --from and command/],
    ['a missing CronJob', ['create', 'job', 'x', '--from=cronjob/none'], /"none" not found/],
    ['no NAME', ['create', 'job', '--image=i'], /exactly one NAME is required, got 0/],
    ['two NAMEs', ['create', 'job', 'a', 'b', '--image=i'], /exactly one NAME is required, got 2/],
    ['a cronjob without --schedule', ['create', 'cronjob', 'x', '--image=i'], /--schedule must be specified/],
  ];
  for (const [what, args, message] of refused) {
    it(`refuses ${what}, writing nothing`, async () => {
      const before = api.objects.size;
      const r = await runCliAgainst(api.url, args);
      assert.notEqual(r.code, 0);
      assert.match(r.err, message);
      assert.doesNotMatch(r.err, /\n\s+at /);
      assert.equal(api.objects.size, before);
    });
  }
});
