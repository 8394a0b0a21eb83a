// The one contract suite every PodProvider must pass (the fake and Docker run it), so the kubelet's unit tests on the fake mean something.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:net';
import type { Readable } from 'node:stream';
import type { Container, Pod } from '../core/api/pod.js';
import { waitFor } from '../core/wait-for.js';
import { ContainerStartError, type ExecResult, type PodProvider, type PodRef, type RuntimeContainer } from './provider.js';

export interface ProviderHarness {
  provider: PodProvider;
  /** A second provider over the same backend, as a restarted kubelet makes. */
  reopen(): Promise<PodProvider>;
  /** Makes a running container of the contract's command exit on its own with this code. */
  exitContainer(ref: PodRef, container: string, exitCode: number): Promise<void>;
  /** Tells a fake what a command prints and returns; a real runtime runs it and needs nothing. */
  scriptExec?(ref: PodRef, container: string, result: ExecResult): void;
  /** Tells a fake what a container printed; a real runtime has it from CONTRACT_COMMAND. */
  scriptLogs?(ref: PodRef, container: string, lines: string[]): void;
  /** The pod subnet to pass to createPod, when it is only known once the backend is up (overrides the option). */
  podCIDR?: string;
  /** Removes everything the suite made (both providers included). */
  cleanup(): Promise<void>;
}

export interface ProviderContractOptions {
  /** A local image with a POSIX shell and sleep (busybox): the suite's containers run CONTRACT_COMMAND in it. */
  image: string;
  /** An image that neither the node nor any reachable registry has. */
  missingImage: string;
  /** The node's pod subnet, passed to createPod. */
  podCIDR?: string;
}

/** Where a container of CONTRACT_COMMAND finds the exit code it should exit with (a harness writes it there). */
export const CONTRACT_EXIT_FILE = '/tmp/contract-exit';

/** What the suite's containers print before they wait for CONTRACT_EXIT_FILE. */
export const CONTRACT_LOG_LINES = ['line1', 'line2', 'line3', 'line4', 'line5'];

/**
 * Prints CONTRACT_LOG_LINES, then waits until CONTRACT_EXIT_FILE appears and exits with the
 * code in it. SIGTERM is not trapped, so a kill ends it with 143 (128 + SIGTERM) at once.
 */
export const CONTRACT_COMMAND = [
  'sh',
  '-c',
  `for l in ${CONTRACT_LOG_LINES.join(' ')}; do echo $l; done; while [ ! -f ${CONTRACT_EXIT_FILE} ]; do sleep 0.1; done; exit $(cat ${CONTRACT_EXIT_FILE})`,
];

const EXEC_COMMAND = ['sh', '-c', 'echo out; echo err >&2; exit 4'];

async function readAll(stream: Readable): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as string));
  return Buffer.concat(chunks).toString('utf8');
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export function runProviderContract(name: string, makeProvider: () => Promise<ProviderHarness>, options: ProviderContractOptions): void {
  describe(`PodProvider contract: ${name}`, () => {
    let h: ProviderHarness;
    let provider: PodProvider;
    const changes: string[] = [];
    let n = 0;

    const container = (cname: string, extra: Partial<Container> = {}): Container =>
      ({
        name: cname,
        image: options.image,
        imagePullPolicy: 'IfNotPresent',
        command: CONTRACT_COMMAND,
        ...extra,
      }) as Container;

    /** A fresh pod per test, so tests never see each other's containers. */
    const makePod = (containers: Container[]): Pod =>
      ({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: `contract-${n++}`, namespace: 'default', uid: randomUUID() },
        spec: {
          containers,
          restartPolicy: 'Always',
          terminationGracePeriodSeconds: 5,
          dnsPolicy: 'ClusterFirst',
          schedulerName: 'default-scheduler',
          nodeName: 'contract-node',
        },
        status: { phase: 'Pending' },
      }) as Pod;
    const refOf = (pod: Pod): PodRef => ({ uid: pod.metadata.uid!, namespace: pod.metadata.namespace!, name: pod.metadata.name! });
    const current = async (pod: Pod, cname: string): Promise<RuntimeContainer | undefined> =>
      (await provider.getPod(pod.metadata.uid!))?.containers.find((c) => c.name === cname);
    const exited = (pod: Pod, cname: string) =>
      waitFor(
        async () => {
          const c = await current(pod, cname);
          return c?.state === 'exited' ? c : undefined;
        },
        { timeoutMs: 15_000, description: `container ${cname} to exit` },
      );
    const changed = (pod: Pod) => waitFor(() => changes.includes(pod.metadata.uid!), { timeoutMs: 15_000, description: 'onPodChange for the pod' });
    const started = async (cnames: string[], extra: Partial<Container> = {}) => {
      const pod = makePod(cnames.map((c) => container(c, extra)));
      await provider.createPod(pod, { podCIDR: h.podCIDR ?? options.podCIDR });
      for (const c of cnames) await provider.updatePod(pod, { type: 'start', container: c, attempt: 0 });
      return pod;
    };
    const fullLogs = (pod: Pod, cname: string, previous = false) =>
      waitFor(
        async () => {
          const text = await readAll(await provider.logs(refOf(pod), cname, { previous }));
          return text.includes(CONTRACT_LOG_LINES.at(-1)!) ? text : undefined;
        },
        { timeoutMs: 15_000, description: `the logs of ${cname}` },
      );

    before(async () => {
      h = await makeProvider();
      provider = h.provider;
      provider.onPodChange((uid) => changes.push(uid));
    });
    after(async () => {
      await h?.cleanup();
    });

    it('creates the sandbox once: a second create returns the same one', async () => {
      const pod = makePod([container('app')]);
      const first = await provider.createPod(pod, { podCIDR: h.podCIDR ?? options.podCIDR });
      assert.equal(first.uid, pod.metadata.uid);
      assert.equal(first.name, pod.metadata.name);
      assert.equal(first.namespace, 'default');
      assert.equal(first.sandbox.state, 'ready');
      assert.match(first.sandbox.ip ?? '', /^\d+\.\d+\.\d+\.\d+$/);
      assert.ok(!Number.isNaN(Date.parse(first.sandbox.createdAt)));
      assert.deepEqual(first.containers, []);
      const second = await provider.createPod(pod, { podCIDR: h.podCIDR ?? options.podCIDR });
      assert.equal(second.sandbox.id, first.sandbox.id);
      assert.equal(second.sandbox.ip, first.sandbox.ip);
      assert.deepEqual(await provider.getPod(pod.metadata.uid!), second);
      assert.ok((await provider.listPods()).some((p) => p.uid === pod.metadata.uid));
    });

    it('gives each pod its own IP', async () => {
      const a = await provider.createPod(makePod([container('app')]), { podCIDR: h.podCIDR ?? options.podCIDR });
      const b = await provider.createPod(makePod([container('app')]), { podCIDR: h.podCIDR ?? options.podCIDR });
      assert.notEqual(a.sandbox.ip, b.sandbox.ip);
    });

    it('starts containers, each running with its attempt', async () => {
      const pod = makePod([container('a'), container('b')]);
      await provider.createPod(pod, { podCIDR: h.podCIDR ?? options.podCIDR });
      const ra = await provider.updatePod(pod, { type: 'start', container: 'a', attempt: 0 });
      const rb = await provider.updatePod(pod, { type: 'start', container: 'b', attempt: 0 });
      assert.ok(ra.containerID && rb.containerID && ra.containerID !== rb.containerID);
      const rp = (await provider.getPod(pod.metadata.uid!))!;
      assert.deepEqual(
        rp.containers.map((c) => c.name),
        ['a', 'b'],
      );
      for (const [c, id] of [
        [rp.containers[0], ra.containerID],
        [rp.containers[1], rb.containerID],
      ] as const) {
        assert.equal(c.id, id);
        assert.equal(c.state, 'running');
        assert.equal(c.attempt, 0);
        assert.ok(c.image);
        assert.ok(c.startedAt && !Number.isNaN(Date.parse(c.startedAt)));
        assert.equal(c.finishedAt, undefined);
        assert.equal(c.exitCode, undefined);
        assert.equal(c.previous, undefined);
      }
    });

    it('kills one container gracefully: it is exited (143, Error) and onPodChange fires', async () => {
      const pod = await started(['a', 'b']);
      const t0 = Date.now();
      await provider.updatePod(pod, { type: 'kill', container: 'a', gracePeriodSeconds: 10, reason: 'contract' });
      // The process dies of SIGTERM at once: no wait for the grace period.
      assert.ok(Date.now() - t0 < 8000, `kill took ${Date.now() - t0} ms`);
      const a = (await current(pod, 'a'))!;
      assert.equal(a.state, 'exited');
      assert.equal(a.exitCode, 143);
      assert.equal(a.reason, 'Error');
      assert.ok(a.finishedAt && !Number.isNaN(Date.parse(a.finishedAt)));
      assert.equal((await current(pod, 'b'))!.state, 'running');
      await changed(pod);
    });

    it('starts a fresh instance with attempt 1, keeping the exited one as previous (only one)', async () => {
      const pod = await started(['a']);
      const first = (await current(pod, 'a'))!;
      await provider.updatePod(pod, { type: 'kill', container: 'a', gracePeriodSeconds: 5, reason: 'contract' });
      const r1 = await provider.updatePod(pod, { type: 'start', container: 'a', attempt: 1 });
      const second = (await current(pod, 'a'))!;
      assert.equal(second.id, r1.containerID);
      assert.notEqual(second.id, first.id);
      assert.equal(second.state, 'running');
      assert.equal(second.attempt, 1);
      assert.equal(second.previous?.id, first.id);
      assert.equal(second.previous?.attempt, 0);
      assert.equal(second.previous?.state, 'exited');
      assert.equal(second.previous?.exitCode, 143);
      await provider.updatePod(pod, { type: 'kill', container: 'a', gracePeriodSeconds: 5, reason: 'contract' });
      await provider.updatePod(pod, { type: 'start', container: 'a', attempt: 2 });
      const third = (await current(pod, 'a'))!;
      assert.equal(third.attempt, 2);
      assert.equal(third.previous?.id, second.id);
      assert.equal(third.previous?.attempt, 1);
      assert.equal((third.previous as RuntimeContainer).previous, undefined);
    });

    it('reports a container that exits on its own (Error, Completed) and fires onPodChange', async () => {
      const pod = await started(['a', 'b']);
      await h.exitContainer(refOf(pod), 'a', 3);
      const a = await exited(pod, 'a');
      assert.equal(a.exitCode, 3);
      assert.equal(a.reason, 'Error');
      assert.ok(a.finishedAt);
      await changed(pod);
      await h.exitContainer(refOf(pod), 'b', 0);
      const b = await exited(pod, 'b');
      assert.equal(b.exitCode, 0);
      assert.equal(b.reason, 'Completed');
    });

    it('execs a command: exit code, stdout and stderr', async () => {
      const pod = await started(['a']);
      h.scriptExec?.(refOf(pod), 'a', { exitCode: 4, stdout: 'out\n', stderr: 'err\n' });
      const result = await provider.exec(refOf(pod), 'a', EXEC_COMMAND, { timeoutMs: 10_000 });
      assert.deepEqual(result, { exitCode: 4, stdout: 'out\n', stderr: 'err\n' });
    });

    it('refuses to exec in a container that is not running', async () => {
      const pod = await started(['a']);
      await provider.updatePod(pod, { type: 'kill', container: 'a', gracePeriodSeconds: 5, reason: 'contract' });
      await assert.rejects(provider.exec(refOf(pod), 'a', ['true']), /not running/);
      await assert.rejects(provider.exec(refOf(pod), 'nope', ['true']), /not running/);
    });

    it('returns logs, whole or the last lines, and those of the previous instance', async () => {
      const pod = await started(['a']);
      h.scriptLogs?.(refOf(pod), 'a', CONTRACT_LOG_LINES);
      assert.equal(await fullLogs(pod, 'a'), CONTRACT_LOG_LINES.map((l) => `${l}\n`).join(''));
      assert.equal(await readAll(await provider.logs(refOf(pod), 'a', { tailLines: 2 })), 'line4\nline5\n');
      const stamped = await readAll(await provider.logs(refOf(pod), 'a', { tailLines: 1, timestamps: true }));
      assert.match(stamped, /^\d{4}-\d\d-\d\dT\S+ line5\n$/);
      await assert.rejects(provider.logs(refOf(pod), 'a', { previous: true }), /previous terminated container "a"/);
      await provider.updatePod(pod, { type: 'kill', container: 'a', gracePeriodSeconds: 5, reason: 'contract' });
      await provider.updatePod(pod, { type: 'start', container: 'a', attempt: 1 });
      assert.equal(await fullLogs(pod, 'a', true), CONTRACT_LOG_LINES.map((l) => `${l}\n`).join(''));
    });

    it('reports stats of running containers and runtime info', async () => {
      const pod = await started(['a', 'b']);
      const stats = await provider.stats(refOf(pod));
      assert.deepEqual(stats.map((s) => s.name).sort(), ['a', 'b']);
      for (const s of stats) {
        assert.ok(Number.isFinite(s.cpuCores) && s.cpuCores >= 0);
        assert.ok(Number.isFinite(s.memoryBytes) && s.memoryBytes >= 0);
      }
      const info = await provider.info();
      assert.ok(info.runtimeVersion && info.kernelVersion && info.osImage && info.architecture);
      assert.ok(info.cpuCores > 0 && info.memoryBytes > 0);
    });

    it('deletes a pod: idempotent, and deleting an unknown pod succeeds', async () => {
      const pod = await started(['a', 'b']);
      await provider.deletePod(refOf(pod), { gracePeriodSeconds: 5 });
      assert.equal(await provider.getPod(pod.metadata.uid!), undefined);
      assert.ok(!(await provider.listPods()).some((p) => p.uid === pod.metadata.uid));
      await provider.deletePod(refOf(pod), { gracePeriodSeconds: 5 });
      await provider.deletePod({ uid: randomUUID(), namespace: 'default', name: 'never-was' }, { gracePeriodSeconds: 5 });
      await changed(pod);
    });

    it('is adopted by a second provider over the same backend (a restarted kubelet)', async () => {
      const pod = await started(['a', 'b']);
      await provider.updatePod(pod, { type: 'kill', container: 'b', gracePeriodSeconds: 5, reason: 'contract' });
      await provider.updatePod(pod, { type: 'start', container: 'b', attempt: 1 });
      const before = await provider.getPod(pod.metadata.uid!);
      const again = await h.reopen();
      assert.deepEqual(await again.getPod(pod.metadata.uid!), before);
      assert.deepEqual(
        (await again.listPods()).find((p) => p.uid === pod.metadata.uid),
        before,
      );
      // Adopting touches nothing: the first provider still sees the same containers.
      assert.deepEqual(await provider.getPod(pod.metadata.uid!), before);
    });

    it('fails a start of a missing image with ErrImagePull, and with ErrImageNeverPull under Never', async () => {
      const pod = makePod([
        container('ok'),
        container('pull', { image: options.missingImage }),
        container('never', { image: options.missingImage, imagePullPolicy: 'Never' }),
      ]);
      await provider.createPod(pod, { podCIDR: h.podCIDR ?? options.podCIDR });
      const pull = await provider.updatePod(pod, { type: 'start', container: 'pull', attempt: 0 }).then(
        () => undefined,
        (err: unknown) => err,
      );
      assert.ok(pull instanceof ContainerStartError, `expected a ContainerStartError, got ${String(pull)}`);
      assert.equal(pull.reason, 'ErrImagePull');
      assert.ok(!pull.message.includes('\n'));
      const never = await provider.updatePod(pod, { type: 'start', container: 'never', attempt: 0 }).then(
        () => undefined,
        (err: unknown) => err,
      );
      assert.ok(never instanceof ContainerStartError, `expected a ContainerStartError, got ${String(never)}`);
      assert.equal(never.reason, 'ErrImageNeverPull');
      assert.deepEqual((await provider.getPod(pod.metadata.uid!))!.containers, []);
    });

    it('fails a start of a container the pod does not have, or without a sandbox', async () => {
      const pod = makePod([container('a')]);
      await assert.rejects(
        provider.updatePod(pod, { type: 'start', container: 'a', attempt: 0 }),
        (err: unknown) => err instanceof ContainerStartError && err.reason === 'CreateContainerError',
      );
      await provider.createPod(pod, { podCIDR: h.podCIDR ?? options.podCIDR });
      await assert.rejects(
        provider.updatePod(pod, { type: 'start', container: 'nope', attempt: 0 }),
        (err: unknown) => err instanceof ContainerStartError && err.reason === 'CreateContainerConfigError',
      );
    });

    it('refuses a sandbox whose hostPort is taken, with a clear message', async () => {
      const port = await freePort();
      const ports = [{ containerPort: 80, hostPort: port, protocol: 'TCP' as const }];
      const first = makePod([container('web', { ports })]);
      await provider.createPod(first, { podCIDR: h.podCIDR ?? options.podCIDR });
      const second = makePod([container('web', { ports })]);
      const err = await provider.createPod(second, { podCIDR: h.podCIDR ?? options.podCIDR }).then(
        () => undefined,
        (e: unknown) => e,
      );
      assert.ok(err instanceof ContainerStartError, `expected a ContainerStartError, got ${String(err)}`);
      assert.equal(err.reason, 'RunContainerError');
      assert.match(err.message, new RegExp(`port ${port} is already allocated`));
      assert.equal(await provider.getPod(second.metadata.uid!), undefined);
      await provider.deletePod(refOf(first), { gracePeriodSeconds: 1 });
      await provider.createPod(second, { podCIDR: h.podCIDR ?? options.podCIDR });
    });
  });
}
