// Unit tests of pip configuration resolution: files in pip's order, the environment over them, --pip-index-url over everything, and the pip.conf the build gets.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isDefaultPip, parsePipConf, pipConfigFiles, readPipSettings, renderPipConf, resolvePipSettings } from './pip-config.js';

describe('parsePipConf', () => {
  it('reads the index keys of [global] with [install] over them, lists across lines, _ as -', () => {
    const text = [
      '# mirror',
      '[global]',
      'index-url = https://global.example/simple',
      'timeout = 60',
      'cert = /etc/ssl/ca.pem',
      '[install]',
      'index_url = https://install.example/simple',
      'extra-index-url =',
      '    https://a.example/simple',
      '    https://b.example/simple',
      '[freeze]',
      'trusted-host = ignored.example',
    ].join('\n');
    const keys = parsePipConf(text);
    assert.equal(keys['index-url'], 'https://install.example/simple');
    assert.deepEqual(keys['extra-index-url']!.split(/\s+/).filter(Boolean), ['https://a.example/simple', 'https://b.example/simple']);
    assert.equal(keys['trusted-host'], undefined);
  });
});

describe('resolvePipSettings', () => {
  const files = [
    { path: '/etc/pip.conf', text: '[global]\nindex-url = https://site.example/simple\ntrusted-host = site.example\n' },
    { path: '/home/u/.pip/pip.conf', text: undefined },
    { path: '/home/u/.config/pip/pip.conf', text: '[global]\nindex-url = http://user:secret@10.0.0.5:3141/simple\n' },
  ];

  it('later files override earlier ones, and a plain-HTTP index host is trusted', () => {
    const s = resolvePipSettings({ env: {}, files });
    assert.equal(s.indexUrl, 'http://user:secret@10.0.0.5:3141/simple');
    assert.deepEqual(s.trustedHosts, ['site.example', '10.0.0.5']);
    assert.deepEqual(s.sources, ['/etc/pip.conf', '/home/u/.config/pip/pip.conf']);
  });

  it('PIP_INDEX_URL, PIP_EXTRA_INDEX_URL and PIP_TRUSTED_HOST override the files', () => {
    const s = resolvePipSettings({
      env: {
        PIP_INDEX_URL: 'https://env.example/simple',
        PIP_EXTRA_INDEX_URL: 'https://x.example/simple http://y.example/simple',
        PIP_TRUSTED_HOST: 'z.example',
      },
      files,
    });
    assert.equal(s.indexUrl, 'https://env.example/simple');
    assert.deepEqual(s.extraIndexUrls, ['https://x.example/simple', 'http://y.example/simple']);
    assert.deepEqual(s.trustedHosts, ['z.example', 'y.example']);
    assert.deepEqual(s.sources.slice(-3), ['PIP_INDEX_URL', 'PIP_EXTRA_INDEX_URL', 'PIP_TRUSTED_HOST']);
  });

  it('--pip-index-url wins over the environment and every file', () => {
    const s = resolvePipSettings({ flagIndexUrl: 'http://127.0.0.1:9000/simple', env: { PIP_INDEX_URL: 'https://env.example/simple' }, files });
    assert.deepEqual(s, { indexUrl: 'http://127.0.0.1:9000/simple', extraIndexUrls: [], trustedHosts: ['127.0.0.1'], sources: ['--pip-index-url'] });
  });

  it("nothing configured is pip's default: no pip.conf for the build", () => {
    const s = resolvePipSettings({ env: {}, files: [{ path: '/etc/pip.conf', text: '[global]\ncert = /etc/ssl/ca.pem\n' }] });
    assert.ok(isDefaultPip(s));
    assert.deepEqual(s.sources, []);
  });
});

describe('readPipSettings', () => {
  it("finds the user's pip.conf under HOME and XDG_CONFIG_HOME; PIP_CONFIG_FILE skips the user files and overrides", async () => {
    const home = mkdtempSync(join(tmpdir(), 'minik8s-pip-'));
    try {
      mkdirSync(join(home, '.pip'));
      writeFileSync(join(home, '.pip', 'pip.conf'), '[global]\nindex-url = https://legacy.example/simple\n');
      const none = { XDG_CONFIG_DIRS: join(home, 'no-such-dir') };
      assert.equal((await readPipSettings({ env: none, home })).indexUrl, 'https://legacy.example/simple');
      mkdirSync(join(home, '.config', 'pip'), { recursive: true });
      writeFileSync(
        join(home, '.config', 'pip', 'pip.conf'),
        '[global]\nindex-url = https://xdg.example/simple\nextra-index-url = https://extra.example/simple\n',
      );
      assert.equal((await readPipSettings({ env: none, home })).indexUrl, 'https://xdg.example/simple');
      const own = join(home, 'own.conf');
      writeFileSync(own, '[install]\nindex-url = https://own.example/simple\n');
      const s = await readPipSettings({ env: { ...none, PIP_CONFIG_FILE: own }, home });
      assert.equal(s.indexUrl, 'https://own.example/simple');
      assert.deepEqual(s.extraIndexUrls, [], 'the user files are not read when PIP_CONFIG_FILE exists');
      assert.ok(isDefaultPip(await readPipSettings({ env: { ...none, PIP_CONFIG_FILE: '/dev/null' }, home })));
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });

  it("lists pip's files in its order: XDG dirs and /etc first, then the user's", () => {
    assert.deepEqual(pipConfigFiles({}, '/h'), { global: ['/etc/xdg/pip/pip.conf', '/etc/pip.conf'], user: ['/h/.pip/pip.conf', '/h/.config/pip/pip.conf'] });
  });
});

describe('renderPipConf', () => {
  it('writes the settings under [global]', () => {
    assert.equal(
      renderPipConf({ indexUrl: 'http://h/simple', extraIndexUrls: ['https://a/simple'], trustedHosts: ['h'], sources: [] }),
      "# Generated by the minik8s image factory from the master's pip configuration.\n[global]\nindex-url = http://h/simple\nextra-index-url = https://a/simple\ntrusted-host = h\n",
    );
  });
});
