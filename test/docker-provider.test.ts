// The Docker provider against the real engine: the provider contract, plus what only real containers show (shared namespaces, limits, OOM, ports, signals).
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Docker from 'dockerode';
import type { Container, Pod } from '../src/core/api/pod.js';
import { waitFor } from '../src/core/wait-for.js';
import { DockerProvider } from '../src/runtime/docker-provider.js';
import { CONTRACT_EXIT_FILE, runProviderContract } from '../src/runtime/provider-contract.js';
import { LABELS, type PodRef, type RuntimeContainer } from '../src/runtime/provider.js';

const docker = new Docker();
const REGISTRY = '127.0.0.1:5000';
const BUSYBOX = `${REGISTRY}/busybox:1.35`;
const PAUSE = `${REGISTRY}/minik8s/pause:1.0`;

/** The images must be local (no public registry here); scripts/build-images.sh makes them. */
async function requireImages(): Promise<void> {
  const missing: string[] = [];
  for (const image of [BUSYBOX, PAUSE]) {
    try {
      await docker.getImage(image).inspect();
    } catch {
      missing.push(image);
    }
  }
  if (missing.length > 0) throw new Error(`missing local images ${missing.join(', ')}: run scripts/build-images.sh first`);
}

/** Everything one provider made: its containers (by node label), its network, its root dir. */
interface Made {
  nodeName: string;
  bridgeName?: string;
  rootDir: string;
}

async function removeMade(made: Made): Promise<void> {
  const list = await docker.listContainers({ all: true, filters: { label: [`${LABELS.node}=${made.nodeName}`] } });
  await Promise.all(
    list.map((c) =>
      docker
        .getContainer(c.Id)
        .remove({ force: true, v: true })
        .catch(() => {}),
    ),
  );
  if (made.bridgeName)
    await docker
      .getNetwork(made.bridgeName)
      .remove()
      .catch(() => {});
  rmSync(made.rootDir, { recursive: true, force: true });
}

function newMade(bridge: boolean): Made {
  const id = randomUUID().slice(0, 8);
  return {
    nodeName: `dp-test-${id}`,
    ...(bridge ? { bridgeName: `mk8t${id.slice(0, 6)}` } : {}),
    rootDir: mkdtempSync(join(tmpdir(), 'minik8s-docker-provider-')),
  };
}

function providerFor(made: Made, podCIDR?: string): DockerProvider {
  return new DockerProvider({
    nodeName: made.nodeName,
    rootDir: made.rootDir,
    imageRegistry: REGISTRY,
    ...(made.bridgeName ? { bridgeName: made.bridgeName } : {}),
    ...(podCIDR ? { podCIDR } : {}),
  });
}

/** A /24 of 10.244.200-249 no Docker network on this engine uses yet (several runs may share one engine). */
async function freePodCIDR(): Promise<string> {
  const used = new Set((await docker.listNetworks()).flatMap((n) => (n.IPAM?.Config ?? []).map((c) => c.Subnet)));
  for (let i = 200; i < 250; i++) {
    const cidr = `10.244.${i}.0/24`;
    if (!used.has(cidr)) return cidr;
  }
  throw new Error('no free 10.244.200-249.0/24 subnet for the test network');
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

// ---- The contract -------------------------------------------------------------------------------

runProviderContract(
  'docker',
  async () => {
    await requireImages();
    const m = newMade(true);
    const podCIDR = await freePodCIDR();
    const providers = [providerFor(m, podCIDR)];
    return {
      provider: providers[0],
      podCIDR,
      reopen: async () => {
        const p = providerFor(m, podCIDR);
        providers.push(p);
        return p;
      },
      exitContainer: async (ref, container, exitCode) => {
        const result = await providers[0].exec(ref, container, ['sh', '-c', `echo ${exitCode} > ${CONTRACT_EXIT_FILE}`]);
        assert.equal(result.exitCode, 0, result.stderr);
      },
      cleanup: async () => {
        await Promise.all(providers.map((p) => p.close()));
        await removeMade(m);
      },
    };
  },
  { image: 'busybox:1.35', missingImage: 'minik8s-contract/missing:never' },
);

// ---- Docker-only behaviour --------------------------------------------------------------------------

describe('DockerProvider on a real engine', () => {
  let made: Made;
  let provider: DockerProvider;
  let podCIDR: string;
  let n = 0;

  before(async () => {
    await requireImages();
    made = newMade(true);
    podCIDR = await freePodCIDR();
    provider = providerFor(made, podCIDR);
  });
  after(async () => {
    await provider?.close();
    if (made) await removeMade(made);
  });

  const sh = (name: string, script: string, extra: Partial<Container> = {}): Container =>
    ({ name, image: 'busybox:1.35', imagePullPolicy: 'IfNotPresent', command: ['sh', '-c', script], ...extra }) as Container;
  const makePod = (containers: Container[], spec: Partial<Pod['spec']> = {}): Pod =>
    ({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: `dp-${n++}`, namespace: 'default', uid: randomUUID() },
      spec: { containers, restartPolicy: 'Always', terminationGracePeriodSeconds: 5, dnsPolicy: 'ClusterFirst', schedulerName: 'default-scheduler', ...spec },
      status: {},
    }) as Pod;
  const refOf = (pod: Pod): PodRef => ({ uid: pod.metadata.uid!, namespace: 'default', name: pod.metadata.name! });
  const startAll = async (pod: Pod) => {
    await provider.createPod(pod, {});
    for (const c of pod.spec.containers) await provider.updatePod(pod, { type: 'start', container: c.name, attempt: 0 });
  };
  const current = async (pod: Pod, name: string): Promise<RuntimeContainer | undefined> =>
    (await provider.getPod(pod.metadata.uid!))?.containers.find((c) => c.name === name);
  const execOk = async (pod: Pod, container: string, script: string) => {
    const r = await provider.exec(refOf(pod), container, ['sh', '-c', script], { timeoutMs: 10_000 });
    assert.equal(r.exitCode, 0, `${script}: ${r.stdout}${r.stderr}`);
    return r.stdout;
  };

  it('names containers as the kubelet does, labels them, and gives the pod an IP in podCIDR and its name as hostname', async () => {
    const pod = makePod([sh('app', 'sleep 3600')]);
    await startAll(pod);
    const rp = (await provider.getPod(pod.metadata.uid!))!;
    const prefix = podCIDR.split('.').slice(0, 3).join('.');
    assert.ok(rp.sandbox.ip?.startsWith(`${prefix}.`), `pod IP ${rp.sandbox.ip} not in ${podCIDR}`);
    const sandbox = await docker.getContainer(rp.sandbox.id).inspect();
    assert.equal(sandbox.Name, `/k8s_POD_${pod.metadata.name}_default_${pod.metadata.uid}_0`);
    assert.equal(sandbox.HostConfig.IpcMode, 'shareable');
    const app = await docker.getContainer(rp.containers[0].id).inspect();
    assert.equal(app.Name, `/k8s_app_${pod.metadata.name}_default_${pod.metadata.uid}_0`);
    assert.equal(app.Config.Labels[LABELS.attempt], '0');
    assert.equal(app.Config.Labels[LABELS.node], made.nodeName);
    assert.equal(app.HostConfig.NetworkMode, `container:${rp.sandbox.id}`);
    assert.equal((await execOk(pod, 'app', 'hostname')).trim(), pod.metadata.name);
  });

  it("lets two containers of a pod talk over localhost, share an emptyDir, and see each other's processes", async () => {
    const volumeMounts = [{ name: 'shared', mountPath: '/shared' }];
    const pod = makePod(
      [
        sh('server', 'mkdir -p /www && echo hello-from-server > /www/index.html && exec httpd -f -p 8080 -h /www', { volumeMounts }),
        sh('client', 'echo written-by-client > /shared/note && exec sleep 3600', { volumeMounts }),
      ],
      { volumes: [{ name: 'shared', emptyDir: {} }] },
    );
    await startAll(pod);
    const answer = await waitFor(
      async () => {
        const out = await provider.exec(refOf(pod), 'client', ['sh', '-c', 'printf "GET / HTTP/1.0\\r\\n\\r\\n" | nc 127.0.0.1 8080'], { timeoutMs: 5000 });
        return out.stdout.includes('hello-from-server') ? out.stdout : undefined;
      },
      { timeoutMs: 15_000, description: 'the server answering on localhost:8080' },
    );
    assert.match(answer, /200 OK/);
    assert.equal(
      (await waitFor(() => execOk(pod, 'server', 'cat /shared/note 2>/dev/null || true'), { description: 'the shared note' })).trim(),
      'written-by-client',
    );
    assert.ok(existsSync(join(made.rootDir, 'pods', pod.metadata.uid!, 'volumes', 'shared', 'note')));
    assert.match(await execOk(pod, 'client', 'ps'), /httpd -f -p 8080/);
    await provider.deletePod(refOf(pod), { gracePeriodSeconds: 2 });
    assert.ok(!existsSync(join(made.rootDir, 'pods', pod.metadata.uid!)), 'the pod dir is removed with the pod');
  });

  it('mounts hostPath volumes (DirectoryOrCreate, FileOrCreate) and read-only mounts', async () => {
    const hostDir = join(made.rootDir, 'host', 'made-dir');
    const hostFile = join(made.rootDir, 'host', 'made', 'file.txt');
    const pod = makePod(
      [
        sh('app', 'sleep 3600', {
          volumeMounts: [
            { name: 'dir', mountPath: '/dir' },
            { name: 'file', mountPath: '/file.txt' },
            { name: 'ro', mountPath: '/ro', readOnly: true },
          ],
        }),
      ],
      {
        volumes: [
          { name: 'dir', hostPath: { path: hostDir, type: 'DirectoryOrCreate' } },
          { name: 'file', hostPath: { path: hostFile, type: 'FileOrCreate' } },
          { name: 'ro', emptyDir: {} },
        ],
      },
    );
    await startAll(pod);
    await execOk(pod, 'app', 'echo in-dir > /dir/x && echo in-file > /file.txt');
    assert.equal(readFileSync(join(hostDir, 'x'), 'utf8'), 'in-dir\n');
    assert.equal(readFileSync(hostFile, 'utf8'), 'in-file\n');
    const ro = await provider.exec(refOf(pod), 'app', ['sh', '-c', 'echo x > /ro/y'], { timeoutMs: 5000 });
    assert.notEqual(ro.exitCode, 0);
    assert.match(ro.stderr, /Read-only file system/);
    await provider.deletePod(refOf(pod), { gracePeriodSeconds: 2 });
    assert.ok(existsSync(hostFile), 'hostPath contents outlive the pod');
  });

  it('fails a start whose hostPath must exist but does not, as a config error', async () => {
    const pod = makePod([sh('app', 'sleep 3600', { volumeMounts: [{ name: 'd', mountPath: '/d' }] })], {
      volumes: [{ name: 'd', hostPath: { path: join(made.rootDir, 'nothing-here'), type: 'Directory' } }],
    });
    await provider.createPod(pod, {});
    await assert.rejects(
      provider.updatePod(pod, { type: 'start', container: 'app', attempt: 0 }),
      (err: Error & { reason?: string }) => err.reason === 'CreateContainerConfigError' && /does not exist/.test(err.message),
    );
  });

  it('applies command/args, env (values and fieldRefs) and workingDir', async () => {
    const pod = makePod([
      {
        name: 'app',
        image: 'busybox:1.35',
        imagePullPolicy: 'IfNotPresent',
        command: ['sh', '-c'],
        args: ['echo "$GREETING $POD_NAME $POD_NS $POD_IP $(pwd)"; exec sleep 3600'],
        workingDir: '/tmp',
        env: [
          { name: 'WHO', value: 'world' },
          { name: 'GREETING', value: 'hello-$(WHO)' },
          { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
          { name: 'POD_NS', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
          { name: 'POD_IP', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } },
        ],
      } as Container,
    ]);
    await startAll(pod);
    const ip = (await provider.getPod(pod.metadata.uid!))!.sandbox.ip;
    const logs = await waitFor(
      async () => {
        let text = '';
        for await (const chunk of await provider.logs(refOf(pod), 'app', {})) text += String(chunk);
        return text || undefined;
      },
      { description: 'the first log line' },
    );
    assert.equal(logs, `hello-world ${pod.metadata.name} default ${ip} /tmp\n`);
  });

  it('makes the memory limit visible in the cgroup and reports an OOM kill as OOMKilled', async () => {
    const pod = makePod([
      sh('limited', 'exec sleep 3600', { resources: { limits: { memory: '32Mi', cpu: '500m' } } }),
      // Fills a tmpfs-free buffer in the shell's own memory until the limit kills it.
      sh('hog', 'x=aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa; while true; do x="$x$x"; done', {
        resources: { limits: { memory: '16Mi' } },
      }),
    ]);
    await startAll(pod);
    assert.equal((await execOk(pod, 'limited', 'cat /sys/fs/cgroup/memory/memory.limit_in_bytes')).trim(), String(32 * 1024 * 1024));
    const limited = await docker.getContainer((await current(pod, 'limited'))!.id).inspect();
    assert.equal(limited.HostConfig.NanoCpus, 500_000_000);
    assert.equal(limited.HostConfig.MemorySwap, 32 * 1024 * 1024);
    const hog = await waitFor(
      async () => {
        const c = await current(pod, 'hog');
        return c?.state === 'exited' ? c : undefined;
      },
      { timeoutMs: 30_000, description: 'the hog to be OOM-killed' },
    );
    assert.equal(hog.reason, 'OOMKilled');
    assert.equal(hog.exitCode, 137);
  });

  it('publishes hostPorts on the node', async () => {
    const port = await freePort();
    const pod = makePod([
      sh('web', 'mkdir -p /www && echo via-host-port > /www/index.html && exec httpd -f -p 8080 -h /www', {
        ports: [{ containerPort: 8080, hostPort: port, protocol: 'TCP' }],
      }),
    ]);
    await startAll(pod);
    const body = await waitFor(
      () =>
        new Promise<string | undefined>((resolve) => {
          const socket = connect(port, '127.0.0.1');
          let text = '';
          socket.setTimeout(2000, () => socket.destroy());
          socket.on('connect', () => socket.write('GET / HTTP/1.0\r\n\r\n'));
          socket.on('data', (d) => {
            text += String(d);
          });
          socket.on('close', () => resolve(text.includes('via-host-port') ? text : undefined));
          socket.on('error', () => resolve(undefined));
        }),
      { timeoutMs: 15_000, description: `an answer on 127.0.0.1:${port}` },
    );
    assert.match(body, /200 OK/);
  });

  it('kills gracefully: a container that handles TERM exits at once, one that ignores it is killed after the grace period', async () => {
    const pod = makePod([sh('polite', 'trap "exit 0" TERM; while true; do sleep 0.1; done'), sh('stubborn', 'trap "" TERM; while true; do sleep 0.1; done')]);
    await startAll(pod);
    let t0 = Date.now();
    await provider.updatePod(pod, { type: 'kill', container: 'polite', gracePeriodSeconds: 10, reason: 'test' });
    const politeMs = Date.now() - t0;
    assert.ok(politeMs < 3000, `polite container took ${politeMs} ms`);
    const polite = (await current(pod, 'polite'))!;
    assert.equal(polite.exitCode, 0);
    assert.equal(polite.reason, 'Completed');
    t0 = Date.now();
    await provider.updatePod(pod, { type: 'kill', container: 'stubborn', gracePeriodSeconds: 2, reason: 'test' });
    const stubbornMs = Date.now() - t0;
    assert.ok(stubbornMs >= 1900 && stubbornMs < 8000, `stubborn container took ${stubbornMs} ms`);
    assert.equal((await current(pod, 'stubborn'))!.exitCode, 137);
  });

  it('feeds stdin to exec and times out a command that runs too long', async () => {
    const pod = makePod([sh('app', 'exec sleep 3600')]);
    await startAll(pod);
    const r = await provider.exec(refOf(pod), 'app', ['cat'], { stdin: Buffer.from('piped\n'), timeoutMs: 10_000 });
    assert.deepEqual(r, { exitCode: 0, stdout: 'piped\n', stderr: '' });
    await assert.rejects(provider.exec(refOf(pod), 'app', ['sleep', '30'], { timeoutMs: 300 }), /timed out after 300 ms/);
  });

  it('follows logs until aborted, and reports cpu and memory use', async () => {
    const pod = makePod([sh('app', 'i=0; while true; do i=$((i+1)); echo tick$i; done | while read l; do echo $l; sleep 0.05; done')]);
    await startAll(pod);
    const abort = new AbortController();
    const stream = await provider.logs(refOf(pod), 'app', { follow: true, signal: abort.signal });
    let text = '';
    stream.on('data', (d) => {
      text += String(d);
    });
    await waitFor(() => text.includes('tick5'), { description: 'followed log lines' });
    abort.abort();
    await waitFor(() => stream.readableEnded || stream.destroyed, { description: 'the follow stream to end' });
    await provider.stats(refOf(pod));
    const [s] = await provider.stats(refOf(pod));
    assert.equal(s.name, 'app');
    assert.ok(s.memoryBytes > 0, `memory ${s.memoryBytes}`);
    assert.ok(s.cpuCores >= 0 && s.cpuCores < 4, `cpu ${s.cpuCores}`);
  });

  it('reports a missing executable as RunContainerError with the reason in one line', async () => {
    const pod = makePod([{ name: 'app', image: 'busybox:1.35', imagePullPolicy: 'IfNotPresent', command: ['/no/such/binary'] } as Container]);
    await provider.createPod(pod, {});
    await assert.rejects(
      provider.updatePod(pod, { type: 'start', container: 'app', attempt: 0 }),
      (err: Error & { reason?: string }) => err.reason === 'RunContainerError' && /no\/such\/binary/.test(err.message) && !err.message.includes('\n'),
    );
    assert.deepEqual((await provider.getPod(pod.metadata.uid!))!.containers, []);
  });

  it("uses Docker's default bridge when the node has no podCIDR", async () => {
    const m = newMade(false);
    const p = providerFor(m);
    try {
      const pod = makePod([sh('app', 'sleep 3600')]);
      const rp = await p.createPod(pod, {});
      assert.match(rp.sandbox.ip ?? '', /^\d+\.\d+\.\d+\.\d+$/);
      const sandbox = await docker.getContainer(rp.sandbox.id).inspect();
      assert.equal(sandbox.HostConfig.NetworkMode, 'bridge');
    } finally {
      await p.close();
      await removeMade(m);
    }
  });

  it('refuses a network name that exists with another subnet, with a clear message', async () => {
    const pod = makePod([sh('app', 'sleep 3600')]);
    const other = providerFor(made, '10.244.251.0/24');
    const err = await other.createPod(pod, {}).then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    assert.match(err?.message ?? '', new RegExp(`Docker network ${made.bridgeName} has subnet ${podCIDR.replace(/\./g, '\\.')}`));
  });

  it("makes the network without Docker's masquerading for the overlay, and makes an unused one from an earlier start again", async () => {
    const m = newMade(true);
    const cidr = await freePodCIDR();
    const masq = async () => (await docker.getNetwork(m.bridgeName!).inspect()).Options?.['com.docker.network.bridge.enable_ip_masquerade'];
    const open = (ipMasquerade: boolean) =>
      new DockerProvider({ nodeName: m.nodeName, rootDir: m.rootDir, imageRegistry: REGISTRY, bridgeName: m.bridgeName, podCIDR: cidr, ipMasquerade });
    // Each provider checks the network once, at its first pod: a new one stands for a restarted worker.
    const [first, second, third, fourth] = [open(true), open(false), open(false), open(true)];
    try {
      const a = makePod([sh('app', 'sleep 3600')]);
      await first.createPod(a, {});
      assert.equal(await masq(), 'true');
      // In use: kept as it is (pods keep running), however the next start wants it.
      await second.createPod(makePod([sh('app', 'sleep 3600')]), {});
      assert.equal(await masq(), 'true');
      await Promise.all(
        (await docker.listContainers({ all: true, filters: { label: [`${LABELS.node}=${m.nodeName}`] } })).map((c) =>
          docker.getContainer(c.Id).remove({ force: true }),
        ),
      );
      // Unused: made again with the setting wanted.
      const b = makePod([sh('app', 'sleep 3600')]);
      const rb = await third.createPod(b, {});
      assert.equal(await masq(), 'false');
      assert.ok(rb.sandbox.ip?.startsWith(`${cidr.split('.').slice(0, 3).join('.')}.`), `${rb.sandbox.ip} in ${cidr}`);
      await Promise.all(
        (await docker.listContainers({ all: true, filters: { label: [`${LABELS.node}=${m.nodeName}`] } })).map((c) =>
          docker.getContainer(c.Id).remove({ force: true }),
        ),
      );
      await fourth.createPod(makePod([sh('app', 'sleep 3600')]), {});
      assert.equal(await masq(), 'true');
    } finally {
      await Promise.all([first, second, third, fourth].map((p) => p.close()));
      await removeMade(m);
    }
  });

  it('is told of containers that die on their own through Docker events', async () => {
    const seen: string[] = [];
    provider.onPodChange((uid) => seen.push(uid));
    const pod = makePod([sh('app', 'sleep 0.5; exit 7')]);
    await startAll(pod);
    await waitFor(() => seen.includes(pod.metadata.uid!), { timeoutMs: 15_000, description: 'a die event for the pod' });
    assert.equal((await current(pod, 'app'))!.exitCode, 7);
  });
});
