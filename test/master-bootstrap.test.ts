// Integration test of `minik8s --role=master` bootstrap: data dir, managed etcd, admin token, CLI config, clean errors and stops.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { waitFor } from '../src/core/wait-for.js';
import { findExecutable } from '../src/control-plane/supervisor/supervised-process.js';
import { BINARY, freePort } from './helpers/master.js';

const dirs: string[] = [];
const children: ChildProcess[] = [];

function tempDir(prefix: string): string {
  const d = mkdtempSync(join(tmpdir(), prefix));
  dirs.push(d);
  return d;
}

async function etcdPort(): Promise<number> {
  for (;;) {
    const p = await freePort();
    const free = await new Promise<boolean>((resolve) => {
      const s = createServer();
      s.once('error', () => resolve(false));
      s.listen(p + 1, '127.0.0.1', () => s.close(() => resolve(true)));
    });
    if (free) return p;
  }
}

function listen(port: number): Promise<Server> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(port, '127.0.0.1', () => resolve(s));
  });
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return !readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.startsWith('Z');
  } catch {
    return false;
  }
}

interface Run {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

function run(args: string[], home: string): Run {
  let stdout = '';
  let stderr = '';
  const child = spawn(process.execPath, [BINARY, ...args], { env: { ...process.env, HOME: home }, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  child.stdout!.on('data', (d) => {
    stdout += d;
  });
  child.stderr!.on('data', (d) => {
    stderr += d;
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal }));
  });
  return { child, stdout: () => stdout, stderr: () => stderr, exited };
}

/** Runs a command that must end by itself (an error), within a deadline. */
async function runToExit(args: string[], home: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const r = run(args, home);
  const timer = setTimeout(() => r.child.kill('SIGKILL'), 30_000);
  const { code } = await r.exited;
  clearTimeout(timer);
  return { code, stdout: r.stdout(), stderr: r.stderr() };
}

async function ready(url: string, r: Run): Promise<void> {
  await waitFor(
    async () => {
      if (r.child.exitCode !== null || r.child.signalCode !== null) throw new Error(`master exited: ${r.stderr()}`);
      return (await fetch(`${url}/readyz`)).status === 200;
    },
    { timeoutMs: 30_000, description: `${url}/readyz` },
  ).catch((err) => {
    throw new Error(`${(err as Error).message}\nstdout: ${r.stdout()}\nstderr: ${r.stderr()}`);
  });
}

after(() => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const noStack = (stderr: string) => assert.equal(stderr.includes('    at '), false, `no stack trace expected:\n${stderr}`);

describe('master bootstrap', { skip: findExecutable('etcd') ? false : 'etcd is not installed' }, () => {
  it('starts, writes its token and the CLI config, stops on SIGTERM with its etcd, and reuses the token', async () => {
    const dataDir = join(tempDir('minik8s-boot-'), 'state', 'data');
    const home = tempDir('minik8s-boot-home-');
    const port = await freePort();
    const ePort = await etcdPort();
    const url = `http://127.0.0.1:${port}`;
    const registryPort = await freePort();
    const args = [
      '--role=master',
      '--insecure-http',
      '--data-dir',
      dataDir,
      '--address',
      '127.0.0.1',
      '--port',
      String(port),
      '--etcd-port',
      String(ePort),
      '--activator-port',
      String(await freePort()),
      '--registry-port',
      String(registryPort),
      '--cluster-cidr',
      '10.250.0.0/16',
    ];

    const first = run(args, home);
    await ready(url, first);
    await waitFor(() => first.stdout().includes('minik8s master ready'), { timeoutMs: 5_000, description: 'the ready banner' });
    await waitFor(() => first.stdout().includes('join a worker'), { timeoutMs: 5_000, description: 'the join command' });
    const joinToken = readFileSync(join(dataDir, 'join-token'), 'utf8').trim();
    assert.match(joinToken, /^[a-z0-9]{6}\.[a-z0-9]{16}$/);
    assert.equal(statSync(join(dataDir, 'join-token')).mode & 0o777, 0o600);
    assert.equal(
      first.stdout().trim(),
      [
        `minik8s master ready: API ${url}, registry 127.0.0.1:${registryPort}, data ${dataDir}, admin token in ${join(dataDir, 'admin-token')}, join token in ${join(dataDir, 'join-token')}`,
        `join a worker: run the command in ${join(dataDir, 'join-command')} there (it holds the join token: copy it only to the worker)`,
      ].join('\n'),
    );
    // The token is in the 0600 file, not in the banner (which ends up in logs).
    assert.equal(first.stdout().includes(joinToken), false);
    assert.equal(readFileSync(join(dataDir, 'join-command'), 'utf8'), `MINIK8S_JOIN_TOKEN=${joinToken} minik8s --role=worker --server ${url}\n`);
    assert.equal(statSync(join(dataDir, 'join-command')).mode & 0o777, 0o600);
    assert.equal(first.stdout().includes('etcdmain'), false, 'etcd output goes to its log, not stdout');

    assert.equal(statSync(dataDir).mode & 0o777, 0o700);
    const tokenFile = join(dataDir, 'admin-token');
    assert.equal(statSync(tokenFile).mode & 0o777, 0o600);
    const token = readFileSync(tokenFile, 'utf8').trim();
    assert.match(token, /^[0-9a-f]{64}$/);

    const configFile = join(home, '.minik8s', 'config');
    assert.equal(statSync(configFile).mode & 0o777, 0o600);
    assert.equal(readFileSync(configFile, 'utf8'), `server: ${url}\ntoken: ${token}\n`);

    assert.equal((await fetch(`${url}/api/v1/namespaces`)).status, 401);
    const res = await fetch(`${url}/api/v1/namespaces`, { headers: { authorization: `Bearer ${token}` } });
    assert.equal(res.status, 200);
    const names = ((await res.json()) as { items: { metadata: { name: string } }[] }).items.map((i) => i.metadata.name);
    assert.ok(names.includes('default') && names.includes('kube-system'), names.join());

    const etcdPid = Number(readFileSync(join(dataDir, 'etcd.pid'), 'utf8'));
    assert.ok(alive(etcdPid));
    assert.ok(existsSync(join(dataDir, 'etcd.log')));
    const registryPid = Number(readFileSync(join(dataDir, 'registry.pid'), 'utf8'));
    assert.ok(alive(registryPid));

    first.child.kill('SIGTERM');
    const exit = await first.exited;
    assert.equal(exit.code, 0, first.stderr());
    noStack(first.stderr());
    assert.equal(alive(etcdPid), false, 'etcd stopped with the master');
    assert.equal(alive(registryPid), false, 'the registry stopped with the master');

    const second = run([...args], home);
    await ready(url, second);
    assert.equal(readFileSync(tokenFile, 'utf8').trim(), token, 'the token is reused');
    assert.equal(readFileSync(join(dataDir, 'join-token'), 'utf8').trim(), joinToken, 'the join token is reused while valid');
    const again = await fetch(`${url}/api/v1/namespaces/default`, { headers: { authorization: `Bearer ${token}` } });
    assert.equal(again.status, 200);
    second.child.kill('SIGTERM');
    assert.equal((await second.exited).code, 0, second.stderr());
  });

  it('does not leave etcd behind when the master is killed with SIGKILL', async () => {
    const dataDir = tempDir('minik8s-boot-');
    const home = tempDir('minik8s-boot-home-');
    const port = await freePort();
    const args = [
      '--role=master',
      '--insecure-http',
      '--no-registry',
      '--data-dir',
      dataDir,
      '--address',
      '127.0.0.1',
      '--port',
      String(port),
      '--etcd-port',
      String(await etcdPort()),
      '--activator-port',
      String(await freePort()),
    ];
    const r = run(args, home);
    await ready(`http://127.0.0.1:${port}`, r);
    const etcdPid = Number(readFileSync(join(dataDir, 'etcd.pid'), 'utf8'));
    r.child.kill('SIGKILL');
    await r.exited;
    await waitFor(() => !alive(etcdPid), { timeoutMs: 15_000, description: `etcd ${etcdPid} to exit after its master died` });
  });

  it('skips the CLI config with --no-write-config', async () => {
    const dataDir = tempDir('minik8s-boot-');
    const home = tempDir('minik8s-boot-home-');
    const port = await freePort();
    const r = run(
      [
        'master',
        '--insecure-http',
        '--no-write-config',
        '--no-registry',
        '--data-dir',
        dataDir,
        '--address',
        '127.0.0.1',
        '--port',
        String(port),
        '--etcd-port',
        String(await etcdPort()),
        '--activator-port',
        String(await freePort()),
      ],
      home,
    );
    await ready(`http://127.0.0.1:${port}`, r);
    assert.equal(existsSync(join(home, '.minik8s', 'config')), false);
    r.child.kill('SIGTERM');
    assert.equal((await r.exited).code, 0, r.stderr());
  });

  it('explains a data dir that cannot be created', async () => {
    const base = tempDir('minik8s-boot-');
    writeFileSync(join(base, 'a-file'), 'x');
    const dataDir = join(base, 'a-file', 'data');
    const r = await runToExit(
      [
        '--role=master',
        '--insecure-http',
        '--data-dir',
        dataDir,
        '--address',
        '127.0.0.1',
        '--port',
        String(await freePort()),
        '--etcd-port',
        String(await etcdPort()),
        '--activator-port',
        String(await freePort()),
      ],
      tempDir('minik8s-boot-home-'),
    );
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, new RegExp(`^error: cannot create data directory ${dataDir}: .*ENOTDIR`));
    noStack(r.stderr);
  });

  it('explains an API port in use, and stops the etcd it started', async () => {
    const dataDir = tempDir('minik8s-boot-');
    const port = await freePort();
    const blocker = await listen(port);
    try {
      const r = await runToExit(
        [
          '--role=master',
          '--insecure-http',
          '--no-registry',
          '--data-dir',
          dataDir,
          '--address',
          '127.0.0.1',
          '--port',
          String(port),
          '--etcd-port',
          String(await etcdPort()),
          '--activator-port',
          String(await freePort()),
        ],
        tempDir('minik8s-boot-home-'),
      );
      assert.equal(r.code, 1, r.stderr);
      assert.equal(r.stderr, `error: port ${port} is already in use (API server); stop what uses it or pass --port\n`);
      assert.equal(existsSync(join(dataDir, 'etcd.pid')), false, 'etcd was stopped and its pidfile removed');
    } finally {
      blocker.close();
    }
  });

  it('explains an etcd port in use', async () => {
    const ePort = await etcdPort();
    const blocker = await listen(ePort);
    try {
      const r = await runToExit(
        [
          '--role=master',
          '--insecure-http',
          '--data-dir',
          tempDir('minik8s-boot-'),
          '--address',
          '127.0.0.1',
          '--port',
          String(await freePort()),
          '--etcd-port',
          String(ePort),
          '--activator-port',
          String(await freePort()),
        ],
        tempDir('minik8s-boot-home-'),
      );
      assert.equal(r.code, 1, r.stderr);
      assert.equal(r.stderr, `error: port ${ePort} is already in use (etcd client port); stop what uses it or pass --etcd-port\n`);
    } finally {
      blocker.close();
    }
  });

  it('rejects bad flags with exit code 2, a worker without a master included', async () => {
    const home = tempDir('minik8s-boot-home-');
    for (const [args, pattern] of [
      [['--role=master', '--insecure-http', '--port', 'abc'], /^error: --port must be a port number from 1 to 65535, not "abc"/],
      [['--role=master', '--insecure-http', '--port', '70000'], /--port must be a port number/],
      [['--role=master', '--insecure-http', '--etcd-port', '65535'], /--etcd-port must be a port number from 1 to 65534/],
      [['--role=master', '--insecure-http', '--address', 'here'], /--address must be an IP address/],
      [['--role=master', '--insecure-http', '--etcd-endpoints', 'nope'], /--etcd-endpoints: "nope" is not a URL/],
      [['--role=master', '--insecure-http', '--bogus'], /^error: Unknown argument: bogus/],
      [['--role=chef'], /unknown role "chef"/],
      [['master', '--role=worker'], /disagree/],
    ] as const) {
      const r = await runToExit([...args], home);
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, pattern, args.join(' '));
      noStack(r.stderr);
    }
    const worker = await runToExit(['--role=worker'], home);
    assert.equal(worker.code, 2);
    assert.match(worker.stderr, /^error: --role=worker needs --server URL/);
    // MINIK8S_TOKEN is the CLI's token (often the admin's), never a join token: a worker ignores it.
    const withCliToken = spawnSync(process.execPath, [BINARY, '--role=worker', '--server', 'https://127.0.0.1:1', '--data-dir', home], {
      env: { ...process.env, HOME: home, MINIK8S_TOKEN: 'the-admin-token', MINIK8S_JOIN_TOKEN: '' },
      encoding: 'utf8',
      timeout: 30_000,
    });
    assert.equal(withCliToken.status, 2, withCliToken.stderr);
    assert.match(withCliToken.stderr, /needs a join token for its first start: --token-file FILE or the MINIK8S_JOIN_TOKEN environment variable/);
    noStack(withCliToken.stderr);
  });
});
