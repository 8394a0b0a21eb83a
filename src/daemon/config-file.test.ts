import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { configFileArg, readConfigFile } from './config-file.js';
import { parseDaemonArgs } from './daemon.js';
import type { DaemonConfig } from './daemon-config.js';

const dir = mkdtempSync(join(tmpdir(), 'minik8s-config-file-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function file(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

describe('--config FILE', () => {
  it('finds the file in argv, in both spellings, and not after --', () => {
    assert.equal(configFileArg(['--config', '/etc/a.yaml']), '/etc/a.yaml');
    assert.equal(configFileArg(['worker', '--config=/etc/b.yaml']), '/etc/b.yaml');
    assert.equal(configFileArg(['--role=worker']), undefined);
    assert.equal(configFileArg(['--', '--config', 'x']), undefined);
    assert.throws(() => configFileArg(['--config']), /--config needs a file/);
  });

  it('reads values as the flags would take them: numbers as text, lists joined, maps as k=v', () => {
    const path = file(
      'values.yaml',
      'kubelet-port: 10260\nlabels: {zone: a, disk: ssd}\ntaints: [gpu=yes:NoSchedule]\ntls-san: [a.example, 10.0.0.9]\nregistry: false\n',
    );
    assert.deepEqual(readConfigFile(path), {
      'kubelet-port': '10260',
      labels: 'zone=a,disk=ssd',
      taints: 'gpu=yes:NoSchedule',
      'tls-san': ['a.example', '10.0.0.9'],
      registry: false,
    });
  });

  it('says what is wrong with a file it cannot use', () => {
    assert.throws(() => readConfigFile(join(dir, 'absent.yaml')), /--config: cannot read .*absent\.yaml: no such file/);
    assert.throws(() => readConfigFile(file('list.yaml', '- a\n- b\n')), /must be a mapping of flag names to values/);
    assert.throws(() => readConfigFile(file('bad.yaml', 'a: [\n')), /is not YAML/);
    assert.throws(() => readConfigFile(file('nested.yaml', 'config: other.yaml\n')), /names another config file/);
    assert.deepEqual(readConfigFile(file('empty.yaml', '')), {});
  });

  it('joins a worker from the file alone, and a flag on the command line wins over the file', async () => {
    const tokenFile = file('join-token', 'abcdef.0123456789abcdef\n');
    const path = file(
      'worker.yaml',
      `role: worker\nserver: https://10.0.0.1:6443\ntoken-file: ${tokenFile}\nname: edge-1\nlabels: {zone: a}\nkubelet-port: 10260\ndata-dir: ${dir}\n`,
    );
    const fromFile = (await parseDaemonArgs(['--config', path])) as DaemonConfig;
    assert.deepEqual(fromFile.roles, ['worker']);
    assert.equal(fromFile.worker.server, 'https://10.0.0.1:6443');
    assert.equal(fromFile.worker.joinToken, 'abcdef.0123456789abcdef');
    assert.equal(fromFile.worker.name, 'edge-1');
    assert.deepEqual(fromFile.worker.labels, { zone: 'a' });
    assert.equal(fromFile.worker.kubeletPort, 10260);
    const overridden = (await parseDaemonArgs(['--config', path, '--name', 'edge-2', '--kubelet-port=10270'])) as DaemonConfig;
    assert.equal(overridden.worker.name, 'edge-2');
    assert.equal(overridden.worker.kubeletPort, 10270);
    assert.equal(overridden.worker.server, 'https://10.0.0.1:6443');
  });

  it('refuses a key that is no flag, as it refuses an unknown flag', async () => {
    const path = file('typo.yaml', 'role: worker\nsevrer: https://10.0.0.1:6443\n');
    const original = process.stderr.write;
    let printed = '';
    process.stderr.write = ((chunk: string) => {
      printed += chunk;
      return true;
    }) as typeof process.stderr.write;
    try {
      assert.equal(await parseDaemonArgs(['--config', path]), 2);
    } finally {
      process.stderr.write = original;
    }
    assert.match(printed, /Unknown argument.*sevrer/);
  });
});
