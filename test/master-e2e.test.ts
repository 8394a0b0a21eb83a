// End to end: a real master with its managed etcd; apply examples/ with the CLI, list, watch, SIGKILL, restart, nothing lost.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { ObjectList } from '../src/core/client/client.js';
import { waitFor } from '../src/core/wait-for.js';
import { BINARY, startMaster, type MasterProcess } from './helpers/master.js';

const EXAMPLES = join(process.cwd(), 'examples');

interface Snapshot {
  [key: string]: { uid: string; resourceVersion: string; body: string };
}

describe('master end to end', () => {
  let master: MasterProcess;
  const cli = (...args: string[]) => spawnSync(process.execPath, [BINARY, ...args], { env: master.env, encoding: 'utf8', timeout: 60_000 });
  /** A list (every path read here names one). */
  const api = async (path: string) => {
    const res = await fetch(`${master.url}${path}`, { headers: { authorization: `Bearer ${master.token}` } });
    assert.equal(res.status, 200, `${path}: ${res.status}`);
    return res.json() as Promise<ObjectList>;
  };
  /** Every object of every kind the examples use, keyed by kind/namespace/name. */
  const snapshot = async (): Promise<Snapshot> => {
    const out: Snapshot = {};
    const paths = [
      '/api/v1/namespaces',
      '/api/v1/pods',
      '/api/v1/services',
      '/apis/apps/v1/deployments',
      '/apis/apps/v1/replicasets',
      '/apis/autoscaling/v2/horizontalpodautoscalers',
    ];
    for (const path of paths) {
      const list = await api(path);
      for (const item of list.items) {
        out[`${item.kind ?? path}/${item.metadata.namespace ?? ''}/${item.metadata.name}`] = {
          uid: item.metadata.uid!,
          resourceVersion: item.metadata.resourceVersion!,
          body: JSON.stringify(item),
        };
      }
    }
    return out;
  };

  before(async () => {
    master = await startMaster();
  });
  after(async () => {
    await master?.stop();
  });

  it('writes the admin token (0600) and the CLI config', () => {
    const token = join(master.dataDir, 'admin-token');
    assert.ok(existsSync(token));
    assert.equal(statSync(token).mode & 0o777, 0o600);
    const config = readFileSync(join(master.home, '.minik8s', 'config'), 'utf8');
    assert.match(config, new RegExp(`^server: ${master.url}$`, 'm'));
    assert.match(config, new RegExp(`token: ${master.token}`));
    // An https server comes with the CA to check it by.
    assert.match(config, new RegExp(`^certificate-authority: ${join(master.dataDir, 'pki', 'ca.crt')}$`, 'm'));
  });

  it('applies every example with the CLI, and a second apply changes nothing', () => {
    const first = cli('apply', '-f', EXAMPLES);
    assert.equal(first.status, 0, first.stderr);
    assert.match(first.stdout, /created/);
    const second = cli('apply', '-f', EXAMPLES);
    assert.equal(second.status, 0, second.stderr);
    assert.doesNotMatch(second.stdout, /created|configured/, second.stdout);
    assert.match(second.stdout, /unchanged/);
  });

  it('lists them with get (tables, -o json, -o name) and reports missing ones like kubectl', () => {
    const table = cli('get', 'pods', '-A');
    assert.equal(table.status, 0, table.stderr);
    assert.match(table.stdout.split('\n')[0]!, /^NAMESPACE\s+NAME\s+READY\s+STATUS\s+RESTARTS\s+AGE/);
    const json = cli('get', 'deploy', '-o', 'json');
    assert.equal(json.status, 0, json.stderr);
    assert.ok(JSON.parse(json.stdout).items.length >= 1);
    const names = cli('get', 'ns', '-o', 'name');
    assert.match(names.stdout, /namespace\/default/);
    const missing = cli('get', 'pod', 'no-such-pod');
    assert.equal(missing.status, 1);
    assert.match(missing.stderr, /Error from server \(NotFound\): pods "no-such-pod" not found/);
  });

  it('watches: a change made by the CLI arrives on a watch stream', async () => {
    const list = await api('/api/v1/namespaces/default/pods');
    const controller = new AbortController();
    const res = await fetch(`${master.url}/api/v1/namespaces/default/pods?watch=1&resourceVersion=${list.metadata.resourceVersion}`, {
      headers: { authorization: `Bearer ${master.token}` },
      signal: controller.signal,
    });
    const reader = res.body!.getReader();
    const child = spawn(process.execPath, [BINARY, 'apply', '-f', '-'], { env: master.env, stdio: ['pipe', 'pipe', 'pipe'] });
    child.stdin.end('apiVersion: v1\nkind: Pod\nmetadata:\n  name: watched\nspec:\n  containers:\n  - name: c\n    image: busybox\n');
    let text = '';
    await waitFor(
      async () => {
        const { value, done } = await reader.read();
        if (value) text += new TextDecoder().decode(value);
        return done || /"name":"watched"/.test(text);
      },
      { timeoutMs: 15_000, description: 'the watched pod to arrive' },
    );
    controller.abort();
    const event = JSON.parse(text.split('\n').find((l) => l.includes('"watched"'))!);
    assert.equal(event.type, 'ADDED');
    await new Promise((r) => child.once('exit', r));
  });

  it('loses nothing when the master is killed with SIGKILL and started again', async () => {
    const before = await snapshot();
    assert.ok(Object.keys(before).length >= 5, `examples should have made objects: ${Object.keys(before).join(', ')}`);
    await master.kill();
    await master.restart();
    const afterRestart = await snapshot();
    assert.deepEqual(Object.keys(afterRestart).sort(), Object.keys(before).sort());
    for (const [key, was] of Object.entries(before)) {
      const now = afterRestart[key]!;
      assert.equal(now.uid, was.uid, `${key} uid`);
      assert.equal(now.resourceVersion, was.resourceVersion, `${key} resourceVersion`);
      assert.equal(now.body, was.body, `${key} body`);
    }
    const get = cli('get', 'pod', 'watched', '-o', 'json');
    assert.equal(get.status, 0, get.stderr);
  });

  it('deleting a namespace deletes what is in it', async () => {
    const ns = spawnSync(process.execPath, [BINARY, 'apply', '-f', '-'], {
      env: master.env,
      encoding: 'utf8',
      input:
        'apiVersion: v1\nkind: Namespace\nmetadata: {name: scratch}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: tmp, namespace: scratch}\nspec: {containers: [{name: c, image: busybox}]}\n',
    });
    assert.equal(ns.status, 0, ns.stderr);
    const del = cli('delete', 'namespace', 'scratch');
    assert.equal(del.status, 0, del.stderr);
    await waitFor(
      async () => {
        const res = await fetch(`${master.url}/api/v1/namespaces/scratch`, { headers: { authorization: `Bearer ${master.token}` } });
        return res.status === 404;
      },
      { timeoutMs: 15_000, description: 'namespace scratch to be removed' },
    );
    const pods = await api('/api/v1/namespaces/scratch/pods');
    assert.equal(pods.items.length, 0);
  });
});
