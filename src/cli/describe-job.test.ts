// `describe job`: kubectl's layout line for line, from a finished Indexed Job with events and from a fresh one.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Event } from '../core/api/event.js';
import type { Job } from '../core/api/job.js';
import { capIndexes, describeJob } from './describe-job.js';

const now = new Date('2026-11-26T08:00:00Z');
const job = {
  apiVersion: 'batch/v1',
  kind: 'Job',
  metadata: {
    name: 'pi',
    namespace: 'default',
    uid: 'j-1',
    labels: { 'batch.kubernetes.io/job-name': 'pi' },
    annotations: { 'minik8s.io/last-applied-configuration': '{}' },
    ownerReferences: [{ apiVersion: 'batch/v1', kind: 'CronJob', name: 'nightly', uid: 'c-1', controller: true }],
  },
  spec: {
    parallelism: 2,
    completions: 5,
    completionMode: 'Indexed',
    suspend: false,
    backoffLimit: 6,
    selector: { matchLabels: { 'batch.kubernetes.io/controller-uid': 'j-1' } },
    template: {
      metadata: { labels: { 'batch.kubernetes.io/job-name': 'pi' } },
      spec: { containers: [{ name: 'pi', image: 'busybox', command: ['sh', '-c', 'echo $JOB_COMPLETION_INDEX'] }], restartPolicy: 'Never' },
    },
  },
  status: {
    startTime: '2026-11-26T07:50:00Z',
    completionTime: '2026-11-26T07:51:05Z',
    active: 0,
    ready: 0,
    succeeded: 5,
    failed: 1,
    completedIndexes: '0-4',
  },
} as unknown as Job;

const events = [
  {
    type: 'Normal',
    reason: 'SuccessfulCreate',
    message: 'Created pod: pi-0-abcde',
    source: { component: 'job-controller' },
    lastTimestamp: '2026-11-26T07:50:00Z',
    involvedObject: { kind: 'Job', name: 'pi' },
  },
  {
    type: 'Normal',
    reason: 'Completed',
    message: 'Job completed',
    source: { component: 'job-controller' },
    lastTimestamp: '2026-11-26T07:51:05Z',
    involvedObject: { kind: 'Job', name: 'pi' },
  },
] as unknown as Event[];

describe('describe job', () => {
  it('prints what kubectl prints for a finished Indexed Job', () => {
    assert.equal(
      describeJob({ job, events, now }),
      `Name:               pi
Namespace:          default
Selector:           batch.kubernetes.io/controller-uid=j-1
Labels:             batch.kubernetes.io/job-name=pi
Annotations:        <none>
Controlled By:      CronJob/nightly
Parallelism:        2
Completions:        5
Completion Mode:    Indexed
Suspend:            false
Backoff Limit:      6
Start Time:         Thu, 26 Nov 2026 07:50:00 +0000
Completed At:       Thu, 26 Nov 2026 07:51:05 +0000
Duration:           65s
Pods Statuses:      0 Active (0 Ready) / 5 Succeeded / 1 Failed
Completed Indexes:  0-4
Pod Template:
  Labels:  batch.kubernetes.io/job-name=pi
  Containers:
   pi:
    Image:      busybox
    Port:       <none>
    Host Port:  <none>
    Command:
      sh
      -c
      echo $JOB_COMPLETION_INDEX
    Environment:   <none>
    Mounts:        <none>
  Volumes:         <none>
  Node-Selectors:  <none>
  Tolerations:     <none>
Events:
  Type    Reason            Age    From            Message
  ----    ------            ----   ----            -------
  Normal  SuccessfulCreate  10m    job-controller  Created pod: pi-0-abcde
  Normal  Completed         8m55s  job-controller  Job completed
`,
    );
  });

  it('leaves out what a fresh Job has not got yet, and says <unset> and <none> as kubectl does', () => {
    const fresh = {
      ...job,
      metadata: { name: 'w', namespace: 'default' },
      spec: { ...job.spec, completions: undefined, completionMode: 'NonIndexed', parallelism: 1 },
      status: {},
    } as unknown as Job;
    const text = describeJob({ job: fresh, events: [], now });
    assert.match(text, /^Completions:\s+<unset>$/m);
    assert.match(text, /^Pods Statuses:\s+0 Active \/ 0 Succeeded \/ 0 Failed$/m);
    assert.match(text, /^Events:\s+<none>$/m);
    assert.doesNotMatch(text, /Start Time|Completed At|Duration|Completed Indexes|Controlled By/);
  });

  it('cuts a long list of completed indexes after the first comma past 50 characters', () => {
    assert.equal(capIndexes(undefined), '<none>');
    assert.equal(capIndexes('1,3-5'), '1,3-5');
    const long = Array.from({ length: 30 }, (_, i) => String(i * 2)).join(',');
    assert.equal(capIndexes(long), `${long.slice(0, long.indexOf(',', 50) + 1)}...`);
  });
});
