// End to end on Docker: pod and container security contexts as `id` inside and `ps` on the host see them, fsGroup on an emptyDir, Merge vs Strict, runAsNonRoot, a read-only root, a dropped capability, and the API's and the node's refusals.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import type { Pod } from '../src/core/api/pod.js';
import { waitFor } from '../src/core/wait-for.js';
import { LOCAL_REGISTRY } from './helpers/images.js';
import { BINARY, startMaster, type MasterProcess } from './helpers/master.js';
import { docker, startWorker, type WorkerProcess } from './helpers/worker.js';

const NS = `secctx-e2e-${process.pid}`;
// busybox with one group that lists `daemon` (uid 1) as a member: the group Merge adds and Strict leaves out.
const IMAGE = `localhost/minik8s-secctx-groups:${process.pid}`;

describe('security contexts on Docker', () => {
  let master: MasterProcess;
  let worker: WorkerProcess;

  const cli = (...args: string[]) => spawnSync(process.execPath, [BINARY, ...args], { env: master.env, encoding: 'utf8', timeout: 60_000 });
  const ok = (...args: string[]) => {
    const r = cli(...args);
    assert.equal(r.status, 0, `minik8s ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
    return r.stdout;
  };
  const request = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${master.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${master.token}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, json: (await res.json()) as Record<string, unknown> };
  };
  const api = async <T>(method: string, path: string, body?: unknown) => {
    const r = await request(method, path, body);
    if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${String(r.json.message)}`);
    return r.json as T;
  };
  const waitPod = (name: string, what: string, check: (pod: Pod) => boolean) =>
    waitFor(
      async () => {
        const pod = await api<Pod>('GET', `/api/v1/namespaces/${NS}/pods/${name}`).catch(() => undefined);
        return pod && check(pod) ? pod : undefined;
      },
      { timeoutMs: 90_000, intervalMs: 300, description: `pod ${name} ${what}` },
    );
  const allRunning = (pod: Pod) =>
    (pod.status?.containerStatuses ?? []).length === pod.spec.containers.length && (pod.status?.containerStatuses ?? []).every((c) => c.state?.running);
  const podBody = (name: string, spec: Record<string, unknown>) => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: NS },
    spec: { nodeName: worker.nodeName, terminationGracePeriodSeconds: 1, ...spec },
  });
  const sleeper = (name: string, extra: Record<string, unknown> = {}) => ({
    name,
    image: IMAGE,
    imagePullPolicy: 'Never',
    command: ['sleep', '3600'],
    volumeMounts: [{ name: 'data', mountPath: '/data' }],
    ...extra,
  });
  const idsIn = (pod: string, container: string) => ok('exec', '-n', NS, pod, '-c', container, '--', 'sh', '-c', 'echo $(id -u) $(id -g) "$(id -G)"').trim();
  const POD_SC = { runAsUser: 1, runAsGroup: 3000, fsGroup: 2000, supplementalGroups: [5000] };

  before(
    async () => {
      master = await startMaster({ seedImages: true });
      const build = spawnSync('docker', ['build', '-q', '-t', IMAGE, '-'], {
        input: `FROM ${LOCAL_REGISTRY}/busybox:1.35\nRUN echo 'extra:x:4242:daemon' >> /etc/group\n`,
        encoding: 'utf8',
      });
      assert.equal(build.status, 0, build.stderr);
      worker = await startWorker({ server: master.url, joinToken: master.joinToken });
      ok('create', 'namespace', NS);
      const volumes = [{ name: 'data', emptyDir: {} }];
      await Promise.all([
        api(
          'POST',
          `/api/v1/namespaces/${NS}/pods`,
          podBody('ids', {
            securityContext: POD_SC,
            containers: [sleeper('merge'), sleeper('override', { securityContext: { runAsUser: 1000, runAsGroup: 4000 } })],
            volumes,
          }),
        ),
        api(
          'POST',
          `/api/v1/namespaces/${NS}/pods`,
          podBody('strict', { securityContext: { ...POD_SC, supplementalGroupsPolicy: 'Strict' }, containers: [sleeper('app')], volumes }),
        ),
        api('POST', `/api/v1/namespaces/${NS}/pods`, podBody('nonroot', { securityContext: { runAsNonRoot: true }, containers: [sleeper('app')], volumes })),
        api(
          'POST',
          `/api/v1/namespaces/${NS}/pods`,
          podBody('locked', {
            containers: [
              sleeper('app', { securityContext: { readOnlyRootFilesystem: true, capabilities: { drop: ['CHOWN'] }, allowPrivilegeEscalation: false } }),
            ],
            volumes,
          }),
        ),
      ]);
    },
    { timeout: 180_000 },
  );

  after(async () => {
    await worker?.destroy();
    await master?.stop();
    await docker
      .getImage(IMAGE)
      .remove({ force: true })
      .catch(() => {});
  });

  it('runs with the pod-level ids, the image group added (Merge), and the container-level override for that container only', async () => {
    const pod = await waitPod('ids', 'running', allRunning);
    assert.equal(idsIn('ids', 'merge'), '1 3000 3000 2000 4242 5000');
    assert.equal(idsIn('ids', 'override'), '1000 4000 4000 2000 5000', 'uid 1000 is not in the image: no image groups');
    const user = (name: string) => pod.status?.containerStatuses?.find((c) => c.name === name)?.user?.linux;
    assert.deepEqual(user('merge'), { uid: 1, gid: 3000, supplementalGroups: [3000, 2000, 4242, 5000] });
    assert.deepEqual(user('override'), { uid: 1000, gid: 4000, supplementalGroups: [4000, 2000, 5000] });
  });

  it('shows the same ids in ps on the host as in status.user.linux', async () => {
    const pod = await waitPod('ids', 'running', allRunning);
    for (const status of pod.status?.containerStatuses ?? []) {
      const id = status.containerID!.replace('docker://', '');
      const pid = (await docker.getContainer(id).inspect()).State.Pid;
      const ps = spawnSync('ps', ['-o', 'uid=,gid=,supgid=', '-p', String(pid)], { encoding: 'utf8' });
      assert.equal(ps.status, 0, ps.stderr);
      const [uid, gid, groups] = ps.stdout.trim().split(/\s+/);
      const linux = status.user!.linux!;
      assert.deepEqual(
        [Number(uid), Number(gid), groups.split(',').map(Number).sort()],
        [linux.uid, linux.gid, [...linux.supplementalGroups!].sort()],
        status.name,
      );
    }
  });

  it('makes the emptyDir owned by the fsGroup, setgid, and writable by the non-root user', async () => {
    await waitPod('ids', 'running', allRunning);
    ok('exec', '-n', NS, 'ids', '-c', 'merge', '--', 'sh', '-c', 'echo hi > /data/file');
    assert.equal(ok('exec', '-n', NS, 'ids', '-c', 'override', '--', 'stat', '-c', '%u %g', '/data/file').trim(), '1 2000');
    assert.equal(ok('exec', '-n', NS, 'ids', '-c', 'override', '--', 'stat', '-c', '%g %a', '/data').trim(), '2000 2775');
  });

  it('leaves the image groups out with supplementalGroupsPolicy Strict', async () => {
    const pod = await waitPod('strict', 'running', allRunning);
    assert.equal(idsIn('strict', 'app'), '1 3000 3000 2000 5000');
    assert.deepEqual(pod.status?.containerStatuses?.[0].user?.linux, { uid: 1, gid: 3000, supplementalGroups: [3000, 2000, 5000] });
  });

  it('refuses to start a root image under runAsNonRoot, with the reason in status', async () => {
    const pod = await waitPod('nonroot', 'refused', (p) => p.status?.containerStatuses?.[0]?.state?.waiting?.reason === 'CreateContainerConfigError');
    assert.match(pod.status!.containerStatuses![0].state!.waiting!.message!, /^container has runAsNonRoot and image will run as root \(pod: "nonroot_/);
    assert.match(ok('get', 'pod', 'nonroot', '-n', NS), /CreateContainerConfigError/);
  });

  it('refuses writes to a read-only root and chown after CHOWN is dropped', async () => {
    await waitPod('locked', 'running', allRunning);
    const write = cli('exec', '-n', NS, 'locked', '--', 'touch', '/rootfile');
    assert.notEqual(write.status, 0);
    assert.match(write.stdout + write.stderr, /Read-only file system/);
    ok('exec', '-n', NS, 'locked', '--', 'touch', '/data/mine');
    const chown = cli('exec', '-n', NS, 'locked', '--', 'chown', '1', '/data/mine');
    assert.notEqual(chown.status, 0);
    assert.match(chown.stdout + chown.stderr, /Operation not permitted/);
  });

  it('answers 422 naming the field for contradictory settings, and writes nothing', async () => {
    const bad = podBody('bad', { containers: [{ name: 'app', image: IMAGE, securityContext: { privileged: true, allowPrivilegeEscalation: false } }] });
    const r = await request('POST', `/api/v1/namespaces/${NS}/pods`, bad);
    assert.equal(r.status, 422);
    assert.match(
      String(r.json.message),
      /spec\.containers\[0\]\.securityContext: Invalid value: .*cannot set `allowPrivilegeEscalation` to false and `privileged` to true/,
    );
    assert.equal((await request('GET', `/api/v1/namespaces/${NS}/pods/bad`)).status, 404);
  });

  it('rejects a pod asking for an unsafe sysctl at the node, Failed with SysctlForbidden', async () => {
    await api(
      'POST',
      `/api/v1/namespaces/${NS}/pods`,
      podBody('sysctl', {
        securityContext: { sysctls: [{ name: 'kernel.msgmax', value: '65536' }] },
        containers: [sleeper('app')],
        volumes: [{ name: 'data', emptyDir: {} }],
      }),
    );
    const pod = await waitPod('sysctl', 'rejected', (p) => p.status?.phase === 'Failed');
    assert.equal(pod.status?.reason, 'SysctlForbidden');
    assert.equal(pod.status?.message, 'Pod was rejected: forbidden sysctl: "kernel.msgmax" not allowlisted');
  });
});
