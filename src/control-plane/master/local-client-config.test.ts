// The master's write of ~/.minik8s/config: its own cluster's file is refreshed, another cluster's is left alone.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { writeLocalClientConfig } from './local-client-config.js';

test('a CLI config that points at another cluster is not overwritten', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'minik8s-cfg-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const path = join(dir, 'config');
  const theirs = 'server: https://10.9.9.9:6443\ntoken: their-token\n';
  writeFileSync(path, theirs);
  const result = writeLocalClientConfig({ address: '127.0.0.1', port: 7443, token: 'ours', path, scheme: 'https', kubeconfigPath: '/d/admin.kubeconfig' });
  assert.equal(readFileSync(path, 'utf8'), theirs);
  assert.match(result.warning ?? '', /points at another cluster \(https:\/\/10\.9\.9\.9:6443\); left as it is: use KUBECONFIG=\/d\/admin\.kubeconfig/);
});

test('this cluster’s own config is rewritten (a new port, the CA), and a missing one is made', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'minik8s-cfg-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const path = join(dir, 'config');
  assert.equal(writeLocalClientConfig({ address: '0.0.0.0', port: 6443, token: 'ours', path }).warning, undefined);
  const again = writeLocalClientConfig({ address: '0.0.0.0', port: 7443, token: 'ours', path, scheme: 'https', caPath: '/d/pki/ca.crt' });
  assert.equal(again.warning, undefined);
  assert.equal(readFileSync(path, 'utf8'), 'server: https://127.0.0.1:7443\ntoken: ours\ncertificate-authority: /d/pki/ca.crt\n');
});
