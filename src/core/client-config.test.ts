// Table tests for where the CLI finds its server and token: flags, environment, $MINIK8S_CONFIG, ~/.minik8s/config.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadClientConfig, parseClientConfig } from './client-config.js';

describe('loadClientConfig', () => {
  const dir = mkdtempSync(join(tmpdir(), 'minik8s-client-config-'));
  const fileA = join(dir, 'a');
  const fileB = join(dir, 'b');
  writeFileSync(fileA, 'server: http://a:1\ntoken: ta\n');
  writeFileSync(fileB, 'server: "http://b:2"\ntoken: tb\n');
  const missing = join(dir, 'missing');
  after(() => rmSync(dir, { recursive: true, force: true }));

  const cases: [string, Parameters<typeof loadClientConfig>[0], ReturnType<typeof loadClientConfig>][] = [
    ['the given path', { path: fileA, env: {} }, { server: 'http://a:1', token: 'ta' }],
    ['$MINIK8S_CONFIG', { path: undefined, env: { MINIK8S_CONFIG: fileB } }, { server: 'http://b:2', token: 'tb' }],
    ['the given path over $MINIK8S_CONFIG', { path: fileA, env: { MINIK8S_CONFIG: fileB } }, { server: 'http://a:1', token: 'ta' }],
    ['the environment over the file', { env: { MINIK8S_CONFIG: fileB, MINIK8S_SERVER: 'http://e:3' } }, { server: 'http://e:3', token: 'tb' }],
    [
      'flags over everything',
      { server: 'http://f:4', token: 'tf', env: { MINIK8S_CONFIG: fileB, MINIK8S_TOKEN: 'te' } },
      { server: 'http://f:4', token: 'tf' },
    ],
    ['nothing from a missing default file', { path: missing, env: {} }, { server: undefined, token: undefined }],
  ];
  for (const [what, options, want] of cases) {
    it(`reads ${what}`, () => assert.deepEqual(loadClientConfig(options), want));
  }

  it('refuses a $MINIK8S_CONFIG it cannot read rather than fall back to the default server', () => {
    assert.throws(() => loadClientConfig({ env: { MINIK8S_CONFIG: missing } }), /cannot read the config file \$MINIK8S_CONFIG names \(.*missing\): ENOENT/);
  });

  it('parses server and token lines, quoted or not', () => {
    assert.deepEqual(parseClientConfig('# c\nserver: "http://x:1"\n  token:  abc  \nother: 1\n'), { server: 'http://x:1', token: 'abc' });
  });
});
