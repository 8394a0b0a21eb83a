// End-to-end tests of the CLI commands through runCli against an in-memory API server.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { after, before, beforeEach, describe, it, mock } from 'node:test';
import { commandName } from './commands/command.js';
import { COMMAND_MODULES, COMMANDS, fastVersionArgs, runCli, scanCommand } from './main.js';
import { startTestApiServer, type TestApiServer } from './test-api-server.js';
import { LAST_APPLIED_ANNOTATION } from './three-way-patch.js';

const NOW = new Date('2024-05-01T12:00:00Z');

interface Run {
  code: number;
  out: string;
  err: string;
}

describe('minik8s CLI', () => {
  let api: TestApiServer;
  let dir: string;
  const cli = async (args: string[], stdin = ''): Promise<Run> => {
    let out = '';
    let err = '';
    const code = await runCli([...args, '--server', api.url, '--token', 't0k'], {
      stdout: (s) => {
        out += s;
      },
      stderr: (s) => {
        err += s;
      },
      stdin: Readable.from([Buffer.from(stdin)]),
      env: {},
      now: () => NOW,
    });
    return { code, out, err };
  };
  const manifest = (name: string, text: string) => {
    const path = join(dir, name);
    writeFileSync(path, text);
    return path;
  };
  before(async () => {
    api = await startTestApiServer({ token: 't0k', now: () => new Date(NOW.getTime() - 90_000) });
    dir = mkdtempSync(join(tmpdir(), 'minik8s-cli-'));
  });
  after(async () => {
    await api.close();
    rmSync(dir, { recursive: true, force: true });
  });
  beforeEach(() => {
    api.objects.clear();
    api.requests.length = 0;
  });

  const POD = 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\n  labels: {app: web, tier: fe}\nspec:\n  containers:\n  - name: c\n    image: nginx:1\n';

  it('apply creates, then reports unchanged, then configures and prunes', async () => {
    const path = manifest('pod.yaml', POD);
    assert.deepEqual(await cli(['apply', '-f', path]), { code: 0, out: 'pod/web created\n', err: '' });
    const stored = api.objects.get('/api/v1/namespaces/default/pods/web')!;
    assert.equal((stored.metadata as { namespace: string }).namespace, 'default');
    assert.ok((stored.metadata as { annotations: Record<string, string> }).annotations[LAST_APPLIED_ANNOTATION]);

    assert.deepEqual(await cli(['apply', '-f', path]), { code: 0, out: 'pod/web unchanged\n', err: '' });

    // A controller adds a label of its own; the user drops `tier` and bumps the image.
    const live = api.objects.get('/api/v1/namespaces/default/pods/web')!;
    (live.metadata as { labels: Record<string, string> }).labels.owner = 'ctrl';
    manifest('pod.yaml', POD.replace('tier: fe', '').replace('{app: web, }', '{app: web}').replace('nginx:1', 'nginx:2'));
    assert.deepEqual(await cli(['apply', '-f', path]), { code: 0, out: 'pod/web configured\n', err: '' });
    const patch = JSON.parse(api.requests.at(-1)!.body) as { metadata: { labels: Record<string, unknown> }; spec: unknown };
    assert.equal(api.requests.at(-1)!.method, 'PATCH');
    assert.deepEqual(patch.metadata.labels, { tier: null });
    const after = api.objects.get('/api/v1/namespaces/default/pods/web')!;
    assert.deepEqual((after.metadata as { labels: unknown }).labels, { app: 'web', owner: 'ctrl' });
  });

  it('apply reads stdin and reports per-object server errors, going on with the rest', async () => {
    const two = `${POD}---\napiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: other}\nspec: {}\n`;
    const run = await cli(['apply', '-f', '-'], two);
    assert.equal(run.err, '');
    assert.equal(run.code, 0);
    assert.equal(run.out, 'pod/web created\nservice/web created\n');
    assert.ok(api.objects.has('/api/v1/namespaces/other/services/web'));
  });

  it("create refuses an existing object with the server's message", async () => {
    const path = manifest('pod.yaml', POD);
    assert.equal((await cli(['create', '-f', path])).out, 'pod/web created\n');
    const again = await cli(['create', '-f', path]);
    assert.deepEqual(again, { code: 1, out: '', err: 'Error from server (AlreadyExists): pods "web" already exists\n' });
  });

  it("get prints tables, names, json and kubectl's empty message", async () => {
    assert.deepEqual(await cli(['get', 'pods']), { code: 0, out: '', err: 'No resources found in default namespace.\n' });
    assert.deepEqual(await cli(['get', 'pods', '-A']), { code: 0, out: '', err: 'No resources found\n' });
    await cli(['apply', '-f', manifest('pod.yaml', POD)]);
    const table = await cli(['get', 'po']);
    assert.equal(table.code, 0);
    assert.match(table.out, /^NAME\s+.*AGE\nweb\s+.*90s\n$/);
    assert.match((await cli(['get', 'po', '--no-headers'])).out, /^web\s+.*90s\n$/);
    assert.equal((await cli(['get', 'pods', '-o', 'name'])).out, 'pod/web\n');
    assert.match((await cli(['get', 'pod/web'])).out, /^NAME\s[^\n]*\npod\/web\s/);
    const one = JSON.parse((await cli(['get', 'pod', 'web', '-o', 'json'])).out) as { kind: string; metadata: { name: string } };
    assert.equal(one.kind, 'Pod');
    const list = JSON.parse((await cli(['get', 'pods', '-o', 'json'])).out) as { kind: string; items: unknown[] };
    assert.equal(list.kind, 'List');
    assert.equal(list.items.length, 1);
    assert.match((await cli(['get', 'pods', 'web', '-o', 'yaml'])).out, /^apiVersion: v1\nkind: Pod\n/);
    assert.equal((await cli(['get', 'pods', '-l', 'app=other', '-o', 'name'])).err, 'No resources found in default namespace.\n');
    assert.match((await cli(['get', 'pods', '-A'])).out, /^NAMESPACE\s+NAME\s/);
  });

  it('get -w prints the list, then a row per event, until aborted', async () => {
    await cli(['apply', '-f', manifest('pod.yaml', POD)]);
    const pod = (name: string, rv: string) => ({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, namespace: 'default', resourceVersion: rv, creationTimestamp: NOW.toISOString() },
    });
    api.watchEvents = [
      { type: 'ADDED', object: pod('a-much-longer-name', '10') },
      { type: 'BOOKMARK', object: { kind: 'Pod', apiVersion: 'v1', metadata: { resourceVersion: '11' } } },
      { type: 'DELETED', object: pod('web', '12') },
    ];
    const controller = new AbortController();
    let out = '';
    const code = await runCli(['get', 'pods', '-w', '--server', api.url, '--token', 't0k'], {
      stdout: (s) => {
        out += s;
        if (out.split('\n').length > 4) controller.abort();
      },
      stderr: (s) => assert.fail(s),
      env: {},
      now: () => NOW,
      signal: controller.signal,
    });
    api.watchEvents = [];
    assert.equal(code, 0);
    const lines = out.split('\n').filter(Boolean);
    assert.equal(lines.length, 4);
    assert.match(lines[0]!, /^NAME {3}/);
    assert.match(lines[1]!, /^web {4}/);
    // Rows wider than the first table push on rather than break the columns after them.
    assert.match(lines[2]!, /^a-much-longer-name {3}\S/);
    assert.match(lines[3]!, /^web {4}/);
    assert.match(api.requests.at(-1)!.url, /watch=1&resourceVersion=\d+/);
  });

  it('get reports missing objects and unknown types like kubectl', async () => {
    assert.deepEqual(await cli(['get', 'pods', 'x']), { code: 1, out: '', err: 'Error from server (NotFound): pods "x" not found\n' });
    assert.deepEqual(await cli(['get', 'foo']), { code: 1, out: '', err: 'error: the server doesn\'t have a resource type "foo"\n' });
    assert.deepEqual(await cli(['get', 'pods', '-o', 'xml']), {
      code: 1,
      out: '',
      err: 'error: unable to match a printer suitable for the output format "xml", allowed formats are: json,name,wide,yaml\n',
    });
  });

  it('delete by name, by manifest, with a cascade policy', async () => {
    const path = manifest('pod.yaml', POD);
    await cli(['apply', '-f', path]);
    assert.deepEqual(await cli(['delete', 'pod', 'web', '--cascade=foreground']), { code: 0, out: 'pod "web" deleted\n', err: '' });
    assert.match(api.requests.filter((r) => r.method === 'DELETE').at(-1)!.url, /propagationPolicy=Foreground/);
    assert.deepEqual(await cli(['delete', 'pod', 'web']), { code: 1, out: '', err: 'Error from server (NotFound): pods "web" not found\n' });
    await cli(['apply', '-f', path]);
    assert.deepEqual(await cli(['delete', '-f', path]), { code: 0, out: 'pod "web" deleted\n', err: '' });
    assert.equal((await cli(['delete', 'pods'])).err, 'error: resource(s) were provided, but no name was specified\n');
    assert.match((await cli(['delete', 'pod', 'x', '--cascade=sideways'])).err, /invalid cascade value \(sideways\)/);
  });

  it('describe renders a pod and its (absent) events', async () => {
    await cli(['apply', '-f', manifest('pod.yaml', POD)]);
    const run = await cli(['describe', 'pod', 'web']);
    assert.equal(run.code, 0, run.err);
    assert.match(run.out, /^Name: {9}web\nNamespace: {4}default\nLabels: {7}app=web\n {14}tier=fe\nAnnotations: {2}<none>\n/);
    assert.match(run.out, /\nContainers:\n {2}c:\n {4}Container ID: {3}<none>\n {4}Image: {10}nginx:1\n/);
    assert.match(run.out, /\nEvents: {2}<none>\n$/);
  });

  it('version prints both versions; api-resources lists kinds', async () => {
    assert.deepEqual(await cli(['version']), { code: 0, out: 'Client Version: v0.1.0\nServer Version: v0.1.0-test\n', err: '' });
    const res = await cli(['api-resources']);
    assert.match(res.out, /^NAME\s+SHORTNAMES\s+APIVERSION\s+NAMESPACED\s+KIND\n/);
    assert.match(res.out, /\ndeployments\s+deploy\s+apps\/v1\s+true\s+Deployment\n/);
  });

  it('usage errors and unknown commands exit 1 with kubectl-style messages', async () => {
    assert.deepEqual(await cli(['gte', 'pods']), { code: 1, out: '', err: 'error: unknown command "gte" for "minik8s"\n\nDid you mean this?\n\tget\n' });
    const bad = await cli(['get', 'pods', '--bogus']);
    assert.equal(bad.code, 1);
    assert.match(bad.err, /^error: Unknown argument: bogus\nSee 'minik8s --help' for usage.\n$/);
    assert.equal((await cli(['apply'])).err, 'error: must specify one of -f and -k\n');
  });

  it('a wrong token is reported as kubectl reports it', async () => {
    let err = '';
    const code = await runCli(['get', 'pods', '--server', api.url, '--token', 'wrong'], {
      stdout: () => {},
      stderr: (s) => {
        err += s;
      },
      env: {},
    });
    assert.equal(code, 1);
    assert.equal(err, 'error: You must be logged in to the server (Unauthorized)\n');
  });
});

describe('argument pre-scan', () => {
  it('finds the command after global flags, and bails on anything else', () => {
    assert.deepEqual(scanCommand(['--server', 'http://x', '-n=prod', 'get', 'pods']), {
      flags: { server: 'http://x', namespace: 'prod' },
      command: 'get',
      rest: ['pods'],
    });
    assert.equal(scanCommand(['--help']), undefined);
    assert.equal(scanCommand([]), undefined);
  });

  it('takes the yargs-free path only for plain version invocations', () => {
    const flags = {};
    assert.deepEqual(fastVersionArgs(['--client', '--server=http://y'], flags), { client: true });
    assert.deepEqual(flags, { server: 'http://y' });
    assert.deepEqual(fastVersionArgs(['-o', 'json'], {}), { client: false, output: 'json' });
    assert.equal(fastVersionArgs(['--help'], {}), undefined);
  });
});

describe('command table', () => {
  it('holds each verb once, and --help lists them in its order', async () => {
    const names = COMMAND_MODULES.map(commandName);
    assert.equal(new Set(names).size, names.length);
    assert.deepEqual(COMMANDS, [...names].sort());
    // yargs prints help with console.log, not through the CLI's stdout.
    const log = mock.method(console, 'log', () => {});
    try {
      assert.equal(await runCli(['--help'], { stdout: () => {}, stderr: () => {}, env: {} }), 0);
    } finally {
      log.mock.restore();
    }
    const help = log.mock.calls.map((c) => String(c.arguments[0])).join('\n');
    const listed = [...help.matchAll(/^ {2}minik8s ([a-z-]+)/gm)].map((m) => m[1]);
    assert.deepEqual(listed, names);
  });
});
