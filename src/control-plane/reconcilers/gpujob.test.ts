// The GpuJob controller's decisions, table by table: finalizer first, one submitter at a time with resumption and a limit, phases from the submitter's reports, pods removed at the end, and deletion through a canceller; then the shell over a memory store.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { gpuJobKind, type GpuJob, type GpuJobStatus } from '../../core/api/gpujob.js';
import { namespaceKind } from '../../core/api/namespace.js';
import { podKind, type Pod } from '../../core/api/pod.js';
import { type Role, type RoleBinding, roleBindingKind, roleKind } from '../../core/api/rbac.js';
import { secretKind, type Secret } from '../../core/api/secret.js';
import { serviceAccountKind } from '../../core/api/serviceaccount.js';
import { slurmClusterKind, type SlurmCluster } from '../../core/api/slurmcluster.js';
import { LABEL_INDEX } from '../../core/controller/informer.js';
import { MemoryStore } from '../../core/store/memory-store.js';
import { waitFor } from '../../core/wait-for.js';
import { LocalClient } from '../api-server/local-client.js';
import { ObjectService } from '../api-server/object-service.js';
import { controllerFixture } from './controller-fixture.js';
import {
  CLEANUP_GRACE_MS,
  GPUJOB_CA_KEY,
  GPUJOB_FINALIZER,
  GPUJOB_ROLE_LABEL,
  GPUJOB_UID_LABEL,
  GpuJobController,
  gpuJobPodName,
  gpuJobTokenSecret,
  gpuJobTokenSecretName,
  localMounts,
  MAX_CANCEL_ATTEMPTS,
  MAX_SUBMIT_ATTEMPTS,
  planGpuJob,
  REPORT_GRACE_MS,
  submitterPod,
  type GpuJobAction,
  type GpuJobState,
} from './gpujob.js';

const UID = '0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0';
const NOW = Date.parse('2030-01-01T00:01:00Z');

function job(status: GpuJobStatus = {}, meta: Partial<GpuJob['metadata']> = {}): GpuJob {
  return {
    apiVersion: 'minik8s.io/v1',
    kind: 'GpuJob',
    metadata: { name: 'mm', namespace: 'gpu', uid: UID, resourceVersion: '5', finalizers: [GPUJOB_FINALIZER], ...meta },
    spec: { cluster: 'hpc', program: { files: { 'mm.cu': '' } }, slurm: {} },
    status,
  } as GpuJob;
}

function cluster(spec: Partial<SlurmCluster['spec']> = {}): SlurmCluster {
  return {
    apiVersion: 'minik8s.io/v1',
    kind: 'SlurmCluster',
    metadata: { name: 'hpc', namespace: 'gpu' },
    spec: {
      mode: 'local',
      local: { slurmConf: '/etc/slurm/slurm.conf', mungeSocketDir: '/run/munge', workDir: '/shared/jobs' },
      image: 'minik8s/slurm-client:22.05',
      pollIntervalSeconds: 1,
      ...spec,
    },
  } as SlurmCluster;
}

function pod(
  role: 'submit' | 'cancel',
  attempt: number,
  phase: string,
  extra: { finishedAt?: string; exitCode?: number; waiting?: string; deleting?: boolean } = {},
): Pod {
  const terminated =
    phase === 'Succeeded' || phase === 'Failed'
      ? { terminated: { exitCode: extra.exitCode ?? (phase === 'Succeeded' ? 0 : 1), finishedAt: extra.finishedAt ?? '2030-01-01T00:00:00Z' } }
      : extra.waiting
        ? { waiting: { reason: extra.waiting } }
        : { running: {} };
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: gpuJobPodName(job(), role, attempt),
      namespace: 'gpu',
      labels: { [GPUJOB_UID_LABEL]: UID, [GPUJOB_ROLE_LABEL]: role },
      ...(extra.deleting ? { deletionTimestamp: '2030-01-01T00:00:30Z' } : {}),
    },
    spec: { containers: [] },
    status: { phase, containerStatuses: [{ name: 'submitter', state: terminated }] },
  } as unknown as Pod;
}

const CA_PEM = '-----BEGIN CERTIFICATE-----\nTUlOSUs4UyBURVNUIENB\n-----END CERTIFICATE-----\n';

/** `null`: no SlurmCluster of that name. */
function state(j: GpuJob, pods: Pod[] = [], c: SlurmCluster | null = cluster()): GpuJobState {
  return { job: j, cluster: c ?? undefined, pods, serverUrl: 'http://10.0.0.1:6443', nowMs: NOW };
}

/** Actions in a form tables can spell: createPod NAME, deletePod NAME, status {...}, event REASON, and the rest by type. */
function brief(actions: GpuJobAction[]): unknown[] {
  return actions.map((a) => {
    switch (a.type) {
      case 'createPod':
        return `createPod ${a.pod.metadata.name}`;
      case 'deletePod':
        return `deletePod ${a.name}`;
      case 'status':
        return { status: a.status };
      case 'event':
        return `event ${a.eventType} ${a.reason}: ${a.message}`;
      default:
        return a.type;
    }
  });
}

const S1 = gpuJobPodName(job(), 'submit', 1);
const S2 = gpuJobPodName(job(), 'submit', 2);
const C1 = gpuJobPodName(job(), 'cancel', 1);
const C2 = gpuJobPodName(job(), 'cancel', 2);

describe('planGpuJob: running a job', () => {
  const cases: [string, GpuJobState, unknown[], number?][] = [
    ['a new job gets the finalizer first, and nothing else', state(job({}, { finalizers: [] })), ['addFinalizer']],
    [
      'then its first submitter',
      state(job()),
      [
        `createPod ${S1}`,
        { status: { attempts: 1, podName: S1, phase: 'Pending', reason: 'Submitting', message: 'the submitter pod is starting' } },
        `event Normal SubmitterCreated: created submitter pod ${S1}`,
      ],
    ],
    [
      'no cluster of that name: Pending, and no pod',
      state(job(), [], null),
      [{ status: { phase: 'Pending', reason: 'ClusterNotFound', message: 'SlurmCluster "hpc" not found in namespace gpu' } }],
    ],
    [
      'a submitter that cannot pull its image: the job says why',
      state(job({ attempts: 1, phase: 'Pending', reason: 'Submitting' }), [pod('submit', 1, 'Pending', { waiting: 'ErrImagePull' })]),
      [{ status: { phase: 'Pending', reason: 'SubmitterPending', message: `submitter pod ${S1}: ErrImagePull` } }],
    ],
    [
      'Slurm has it pending',
      state(job({ attempts: 1, phase: 'Pending', jobId: '12', slurmState: 'PENDING', slurmReason: 'Resources' }), [pod('submit', 1, 'Running')]),
      [{ status: { phase: 'Pending', reason: 'SlurmPending', message: 'Slurm job 12 is PENDING (Resources)' } }],
    ],
    [
      'Slurm runs it',
      state(job({ attempts: 1, phase: 'Pending', jobId: '12', slurmState: 'RUNNING', node: 'vm' }), [pod('submit', 1, 'Running')]),
      [{ status: { phase: 'Running', reason: 'SlurmRunning', message: 'Slurm job 12 is RUNNING on vm' } }],
    ],
    [
      'nothing new: nothing written',
      state(
        job({
          attempts: 1,
          phase: 'Running',
          reason: 'SlurmRunning',
          message: 'Slurm job 12 is RUNNING on vm',
          jobId: '12',
          slurmState: 'RUNNING',
          node: 'vm',
        }),
        [pod('submit', 1, 'Running')],
      ),
      [],
    ],
    [
      'the cluster out of reach: Unknown',
      state(
        job({
          attempts: 1,
          phase: 'Running',
          jobId: '12',
          slurmState: 'RUNNING',
          clusterReachable: false,
          clusterMessage: 'Unable to contact slurm controller',
        }),
        [pod('submit', 1, 'Running')],
      ),
      [{ status: { phase: 'Unknown', reason: 'ClusterUnreachable', message: 'cannot reach the Slurm cluster: Unable to contact slurm controller' } }],
    ],
    [
      'results collected: Succeeded, with an event',
      state(job({ attempts: 1, phase: 'Running', jobId: '12', slurmState: 'COMPLETED', resultsCollected: true, node: 'vm' }), [pod('submit', 1, 'Running')]),
      [
        { status: { phase: 'Succeeded', reason: 'Completed', message: 'Slurm job 12 COMPLETED on vm' } },
        'event Normal Completed: Slurm job 12 COMPLETED on vm',
      ],
    ],
    [
      'a finished job: its pods go',
      state(job({ attempts: 1, phase: 'Succeeded', lastReportTime: '2030-01-01T00:00:59Z' }), [pod('submit', 1, 'Succeeded')]),
      [`deletePod ${S1}`],
    ],
    [
      'a finished job whose token still has its RoleBinding: access revoked, its pods go',
      {
        ...state(job({ attempts: 1, phase: 'Failed', lastReportTime: '2030-01-01T00:00:59Z' }), [pod('submit', 1, 'Failed')]),
        accessGranted: true,
      },
      ['revokeAccess', `deletePod ${S1}`],
    ],
    [
      'a finished job whose submitter still cleans up: left to exit',
      state(job({ attempts: 1, phase: 'Succeeded', lastReportTime: '2030-01-01T00:00:59Z' }), [pod('submit', 1, 'Running')]),
      [],
      CLEANUP_GRACE_MS - 1_000 + 100,
    ],
    [
      'a finished job whose submitter lingers past the grace: it goes',
      state(job({ attempts: 1, phase: 'Succeeded', lastReportTime: '2029-12-31T23:59:00Z' }), [pod('submit', 1, 'Running')]),
      [`deletePod ${S1}`],
    ],
    [
      'a submitter that exited 0 a moment ago: wait for its report',
      state(job({ attempts: 1, phase: 'Running', jobId: '12', slurmState: 'RUNNING' }), [
        pod('submit', 1, 'Succeeded', { finishedAt: '2030-01-01T00:00:58Z' }),
      ]),
      [],
      REPORT_GRACE_MS - 2_000 + 100,
    ],
    [
      'a submitter that failed: the next one resumes, the failed one goes',
      state(job({ attempts: 1, phase: 'Running', jobId: '12', slurmState: 'RUNNING' }), [pod('submit', 1, 'Failed', { exitCode: 1 })]),
      [
        `deletePod ${S1}`,
        `createPod ${S2}`,
        { status: { attempts: 2, podName: S2 } },
        `event Normal SubmitterCreated: created submitter pod ${S2}; it resumes after the last one (exit code 1)`,
      ],
    ],
    [
      'a submitter pod deleted by someone: the next one resumes',
      state(job({ attempts: 1, phase: 'Running', jobId: '12', slurmState: 'RUNNING' })),
      [
        `createPod ${S2}`,
        { status: { attempts: 2, podName: S2 } },
        `event Normal SubmitterCreated: created submitter pod ${S2}; it resumes after the last one (its pod is gone)`,
      ],
    ],
    [
      `after ${MAX_SUBMIT_ATTEMPTS} submitters: Failed with the last one's error`,
      state(job({ attempts: MAX_SUBMIT_ATTEMPTS, phase: 'Pending', submitterError: 'RuntimeError: staging failed' }), [
        pod('submit', MAX_SUBMIT_ATTEMPTS, 'Failed'),
      ]),
      [
        {
          status: {
            phase: 'Failed',
            reason: 'SubmitterFailed',
            message: `the submitter failed ${MAX_SUBMIT_ATTEMPTS} times; the last: RuntimeError: staging failed`,
          },
        },
        `event Warning SubmitterFailed: the submitter failed ${MAX_SUBMIT_ATTEMPTS} times; the last: RuntimeError: staging failed`,
      ],
    ],
  ];
  for (const [name, input, want, requeue] of cases) {
    it(name, () => {
      const plan = planGpuJob(input);
      assert.deepEqual(brief(plan.actions), want);
      assert.equal(plan.requeueAfterMs, requeue);
    });
  }
});

describe('planGpuJob: deleting a job', () => {
  const deleting = (status: GpuJobStatus) => job(status, { deletionTimestamp: '2030-01-01T00:00:30Z' });
  const cases: [string, GpuJobState, unknown[]][] = [
    ['never submitted: outputs and finalizer go at once', state(deleting({})), ['removeOutputs', 'removeFinalizer']],
    [
      'running: the submitter goes and a canceller starts',
      state(deleting({ attempts: 1, jobId: '12', slurmState: 'RUNNING' }), [pod('submit', 1, 'Running')]),
      [`deletePod ${S1}`, `createPod ${C1}`],
    ],
    [
      'submitted but not yet reported: cancelled all the same (by name)',
      state(deleting({ attempts: 1 }), [pod('submit', 1, 'Running', { deleting: true })]),
      [`createPod ${C1}`],
    ],
    ['the canceller at work: wait', state(deleting({ attempts: 1, jobId: '12', slurmState: 'RUNNING' }), [pod('cancel', 1, 'Running')]), []],
    [
      'the canceller done: the finalizer goes',
      state(deleting({ attempts: 1, jobId: '12', slurmState: 'RUNNING' }), [pod('cancel', 1, 'Succeeded')]),
      ['event Normal Cancelled: cancelled Slurm job 12', `deletePod ${C1}`, 'removeOutputs', 'removeFinalizer'],
    ],
    [
      'the canceller failed: another one',
      state(deleting({ attempts: 1, jobId: '12', slurmState: 'RUNNING' }), [pod('cancel', 1, 'Failed')]),
      [`createPod ${C2}`],
    ],
    [
      `${MAX_CANCEL_ATTEMPTS} cancellers failed: let go, with a warning`,
      state(
        deleting({ attempts: 1, jobId: '12', slurmState: 'RUNNING' }),
        Array.from({ length: MAX_CANCEL_ATTEMPTS }, (_, i) => pod('cancel', i + 1, 'Failed')),
      ),
      [
        `event Warning CancelFailed: gave up cancelling Slurm job 12 after ${MAX_CANCEL_ATTEMPTS} attempts (last: exit code 1); it may still run in Slurm`,
        ...Array.from({ length: MAX_CANCEL_ATTEMPTS }, (_, i) => `deletePod ${gpuJobPodName(job(), 'cancel', i + 1)}`),
        'removeOutputs',
        'removeFinalizer',
      ],
    ],
    [
      'its cluster is gone: nothing can cancel, let go with a warning',
      state(deleting({ attempts: 1, jobId: '12', slurmState: 'RUNNING' }), [], null),
      ['event Warning CancelSkipped: cannot cancel Slurm job 12: SlurmCluster "hpc" not found', 'removeOutputs', 'removeFinalizer'],
    ],
    [
      'finished in Slurm already: nothing to cancel',
      state(deleting({ attempts: 1, jobId: '12', slurmState: 'COMPLETED', phase: 'Running' })),
      ['removeOutputs', 'removeFinalizer'],
    ],
    [
      'finished as a job: nothing to cancel',
      state(deleting({ attempts: 1, phase: 'Failed' }), [pod('submit', 1, 'Succeeded')]),
      [`deletePod ${S1}`, 'removeOutputs', 'removeFinalizer'],
    ],
    ['without our finalizer: not ours to hold', state(job({}, { finalizers: [], deletionTimestamp: '2030-01-01T00:00:30Z' })), []],
  ];
  for (const [name, input, want] of cases) it(name, () => assert.deepEqual(brief(planGpuJob(input).actions), want));
});

describe('the submitter pod', () => {
  it("runs our image with the job token, never restarts, and mounts the node's Slurm client setup at its own paths", () => {
    const p = submitterPod(state(job()), 'submit', 1);
    assert.equal(p.metadata.name, 'mm-0f1e2d-submit-1');
    assert.deepEqual(p.metadata.ownerReferences, [
      { apiVersion: 'minik8s.io/v1', kind: 'GpuJob', name: 'mm', uid: UID, controller: true, blockOwnerDeletion: true },
    ]);
    assert.equal(p.spec.restartPolicy, 'Never');
    // The job's own account, whose token comes from the Secret: no second one mounted.
    assert.equal(p.spec.serviceAccountName, `gpujob-${UID}`);
    assert.equal(p.spec.automountServiceAccountToken, false);
    const c = p.spec.containers[0];
    assert.deepEqual(c.command, ['python3', '/opt/minik8s/gpujob-submitter.py', 'submit']);
    assert.deepEqual(c.env, [
      { name: 'MINIK8S_SERVER', value: 'http://10.0.0.1:6443' },
      { name: 'MINIK8S_TOKEN', valueFrom: { secretKeyRef: { name: `gpujob-token-${UID}`, key: 'token' } } },
      { name: 'GPUJOB_NAMESPACE', value: 'gpu' },
      { name: 'GPUJOB_NAME', value: 'mm' },
      { name: 'SLURM_CONF', value: '/etc/slurm/slurm.conf' },
    ]);
    assert.deepEqual(c.volumeMounts, [
      { name: 'slurm-0', mountPath: '/etc/slurm', readOnly: true },
      { name: 'slurm-1', mountPath: '/run/munge', readOnly: false },
      { name: 'slurm-2', mountPath: '/shared/jobs', readOnly: false },
    ]);
    assert.deepEqual(
      p.spec.volumes?.map((v) => v.hostPath?.path),
      ['/etc/slurm', '/run/munge', '/shared/jobs'],
    );
  });

  it("over HTTPS gets the cluster CA from the job's token Secret, never in the pod itself", () => {
    const p = submitterPod({ ...state(job()), serverUrl: 'https://10.0.0.1:6443', caPem: CA_PEM }, 'submit', 1);
    const env = p.spec.containers[0].env ?? [];
    assert.deepEqual(env.slice(0, 3), [
      { name: 'MINIK8S_SERVER', value: 'https://10.0.0.1:6443' },
      { name: 'MINIK8S_TOKEN', valueFrom: { secretKeyRef: { name: `gpujob-token-${UID}`, key: 'token' } } },
      { name: 'MINIK8S_CA_DATA', valueFrom: { secretKeyRef: { name: `gpujob-token-${UID}`, key: 'ca.crt' } } },
    ]);
    assert.ok(!JSON.stringify(p).includes('BEGIN CERTIFICATE'), 'the PEM is not in the pod object');
  });

  it('the token Secret carries the token, and ca.crt when the API server serves HTTPS', () => {
    const plain = gpuJobTokenSecret(job(), 'gj1.tok.mac');
    assert.deepEqual(plain.data, { token: Buffer.from('gj1.tok.mac').toString('base64') });
    const withCa = gpuJobTokenSecret(job(), 'gj1.tok.mac', CA_PEM);
    assert.equal(GPUJOB_CA_KEY, 'ca.crt');
    assert.deepEqual(withCa.data, { token: Buffer.from('gj1.tok.mac').toString('base64'), 'ca.crt': Buffer.from(CA_PEM).toString('base64') });
    assert.equal(withCa.metadata.name, `gpujob-token-${UID}`);
    assert.deepEqual(withCa.metadata.ownerReferences?.[0]?.uid, UID);
  });

  it("in ssh mode mounts nothing (the key comes from the submission) and keeps to the cluster's nodes", () => {
    const ssh = cluster({
      mode: 'ssh',
      local: undefined,
      ssh: { host: 'login', port: 22, user: 'u', secretName: 'k', privateKeyKey: 'ssh-privatekey', knownHostsKey: 'known_hosts', workDir: 'jobs' },
      nodeSelector: { 'hpc-access': 'yes' },
    });
    const p = submitterPod(state(job(), [], ssh), 'cancel', 2);
    assert.equal(p.metadata.name, 'mm-0f1e2d-cancel-2');
    assert.deepEqual(p.spec.containers[0].command, ['python3', '/opt/minik8s/gpujob-submitter.py', 'cancel']);
    assert.equal(p.spec.containers[0].volumeMounts, undefined);
    assert.deepEqual(p.spec.nodeSelector, { 'hpc-access': 'yes' });
  });

  it('mounts a directory holding another once, written through when it holds the socket or the jobs', () => {
    const nested = cluster({ local: { slurmConf: '/srv/slurm/slurm.conf', mungeSocketDir: '/srv/slurm/munge', workDir: '/srv/slurm/jobs' } });
    assert.deepEqual(localMounts(nested), [{ path: '/srv/slurm', readOnly: false }]);
  });

  it("names pods within 63 characters whatever the job's name", () => {
    const long = job({}, { name: 'x'.repeat(200) });
    const name = gpuJobPodName(long, 'cancel', 3);
    assert.ok(name.length <= 63, name);
    assert.match(name, /^x+-0f1e2d-cancel-3$/);
  });
});

describe('GpuJobController on a memory store', () => {
  it('waits for its cluster, then holds its finalizer and runs one submitter pod, found again by its label', async () => {
    const service = new ObjectService({ store: new MemoryStore() });
    await service.create(namespaceKind, undefined, { metadata: { name: 'gpu' } });
    const { client, informers, run } = controllerFixture(new LocalClient(service));
    const controller = new GpuJobController({
      client,
      informers,
      outputs: { uids: async () => [], remove: async () => {} },
      issueToken: async () => ({ token: 'sa.jwt.token' }),
      serverUrl: 'http://10.0.0.1:6443',
    });
    const stop = new AbortController();
    const running = run(stop.signal, controller);
    const stored = async () => (await service.get(gpuJobKind, 'gpu', 'mm')) as GpuJob;
    try {
      await service.create(gpuJobKind, 'gpu', {
        metadata: { name: 'mm' },
        spec: { cluster: 'hpc', program: { files: { 'hello.c': 'int main(void) { return 0; }' } }, slurm: {} },
      });
      await waitFor(async () => (await stored()).status?.reason === 'ClusterNotFound', { description: 'the job to wait for its cluster' });
      // The cluster's arrival wakes the jobs of its namespace that name it.
      await service.create(slurmClusterKind, 'gpu', { metadata: { name: 'hpc' }, spec: cluster().spec });
      const uid = (await stored()).metadata.uid!;
      const pods = await waitFor(
        async () => {
          const items = (await service.list(podKind, 'gpu', { labelSelector: `${GPUJOB_UID_LABEL}=${uid}` })).items;
          return items.length > 0 ? items : undefined;
        },
        { description: 'a submitter pod' },
      );
      assert.deepEqual(
        pods.map((p) => p.metadata.name),
        [gpuJobPodName(await stored(), 'submit', 1)],
      );
      assert.deepEqual((await stored()).metadata.finalizers, [GPUJOB_FINALIZER]);
      // Once the cache holds the pod, another round finds it through the label index and makes no second one.
      await waitFor(() => controller.pods.byIndex(LABEL_INDEX, `${GPUJOB_UID_LABEL}=${uid}`).length === 1, { description: 'the pod in the cache' });
      await waitFor(async () => controller.jobs.get('gpu/mm')?.metadata.resourceVersion === (await stored()).metadata.resourceVersion, {
        description: 'the job in the cache',
      });
      await controller.reconcile('gpu/mm');
      assert.equal((await service.list(podKind, 'gpu')).items.length, 1);
    } finally {
      stop.abort();
      await running;
    }
  });

  it("with an HTTPS API server puts a fresh token of the job's account and the cluster CA in the job's Secret, also into one made before", async () => {
    const issued: unknown[] = [];
    const service = new ObjectService({ store: new MemoryStore() });
    await service.create(namespaceKind, undefined, { metadata: { name: 'gpu' } });
    const { client, informers, run } = controllerFixture(new LocalClient(service));
    const controller = new GpuJobController({
      client,
      informers,
      outputs: { uids: async () => [], remove: async () => {} },
      issueToken: async (input) => {
        issued.push(input);
        return { token: 'sa.jwt.token' };
      },
      serverUrl: 'https://10.0.0.1:6443',
      caPem: CA_PEM,
    });
    const stop = new AbortController();
    const running = run(stop.signal, controller);
    const stored = async () => (await service.get(gpuJobKind, 'gpu', 'mm')) as GpuJob;
    try {
      await service.create(gpuJobKind, 'gpu', {
        metadata: { name: 'mm' },
        spec: { cluster: 'hpc', program: { files: { 'hello.c': 'int main(void) { return 0; }' } }, slurm: {} },
      });
      await waitFor(async () => (await stored()).status?.reason === 'ClusterNotFound', { description: 'the job to wait for its cluster' });
      // The Secret as a master without TLS made it: the token only.
      const job = await stored();
      const old = gpuJobTokenSecret(job, 'old.jwt.token');
      await service.create(secretKind, 'gpu', old);
      await service.create(slurmClusterKind, 'gpu', { metadata: { name: 'hpc' }, spec: cluster().spec });
      const pod = await waitFor(
        async () => (await service.list(podKind, 'gpu', { labelSelector: `${GPUJOB_UID_LABEL}=${job.metadata.uid}` })).items[0] as Pod | undefined,
        {
          description: 'a submitter pod',
        },
      );
      assert.ok(pod.spec.containers[0]?.env?.some((e) => e.name === 'MINIK8S_CA_DATA' && e.valueFrom?.secretKeyRef?.key === 'ca.crt'));
      const secret = (await service.get(secretKind, 'gpu', gpuJobTokenSecretName(job))) as Secret;
      assert.deepEqual(secret.data, { token: Buffer.from('sa.jwt.token').toString('base64'), 'ca.crt': Buffer.from(CA_PEM).toString('base64') });
      // Its own account, Role and binding, all owned by the job; the token is bound to the job and lives past its time limit.
      const access = `gpujob-${job.metadata.uid}`;
      const sa = await service.get(serviceAccountKind, 'gpu', access);
      const role = (await service.get(roleKind, 'gpu', access)) as Role;
      const binding = (await service.get(roleBindingKind, 'gpu', access)) as RoleBinding;
      for (const o of [sa, role, binding]) assert.equal(o.metadata.ownerReferences?.[0]?.uid, job.metadata.uid);
      assert.ok(role.rules.every((r) => r.resourceNames?.join() === 'mm'));
      assert.deepEqual(binding.subjects, [{ kind: 'ServiceAccount', name: access, namespace: 'gpu' }]);
      assert.deepEqual(issued, [
        {
          namespace: 'gpu',
          serviceAccount: { name: access, uid: sa.metadata.uid },
          job: { name: 'mm', uid: job.metadata.uid },
          expirationSeconds: 7 * 24 * 3600,
        },
      ]);
    } finally {
      stop.abort();
      await running;
    }
  });
});
