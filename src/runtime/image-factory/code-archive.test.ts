// Unit tests of reading a function's code: files, zip and tar.gz archives (written by a zip writer and tar-stream), a folder's top directory stripped, and what is refused.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { gzipSync } from 'node:zlib';
import { pack, type Header } from 'tar-stream';
import { writeZip } from '../../../test/helpers/zip.js';
import { CodeError, codeFiles, MAX_UNPACKED_BYTES, readZip, stripCommonRoot, unpackArchive } from '../../core/api/code-archive.js';

async function tarOf(entries: (Partial<Header> & { name: string; body?: string })[]): Promise<Buffer> {
  const p = pack();
  const chunks: Buffer[] = [];
  p.on('data', (c: unknown) => {
    chunks.push(c as Buffer);
  });
  const ended = new Promise<void>((resolve) => p.on('end', () => resolve()));
  for (const { body, ...header } of entries) p.entry(header, body ?? '');
  p.finalize();
  await ended;
  return Buffer.concat(chunks);
}

const paths = (files: { path: string }[]) => files.map((f) => f.path);

describe('codeFiles', () => {
  it('takes text files as they are, sorted', async () => {
    const files = await codeFiles({ files: { 'lib/util.py': 'X = 1', 'handler.py': 'def handler(e, c): pass' } }, 'handler.handler');
    assert.deepEqual(paths(files), ['handler.py', 'lib/util.py']);
    assert.equal(files[0]!.data.toString(), 'def handler(e, c): pass');
  });

  it('unpacks a zip (stored and deflated members) and keeps executable bits', async () => {
    const zip = writeZip([
      { name: 'handler.py', data: 'def handler(e, c): pass', deflate: true },
      { name: 'bin/tool', data: '#!/bin/sh', mode: 0o755 },
      { name: 'data/', data: '' },
    ]);
    const files = await codeFiles({ archive: zip.toString('base64') }, 'handler.handler');
    assert.deepEqual(paths(files), ['bin/tool', 'handler.py']);
    assert.equal(files.find((f) => f.path === 'bin/tool')!.mode, 0o755);
    assert.equal(files.find((f) => f.path === 'handler.py')!.data.toString(), 'def handler(e, c): pass');
  });

  it('unpacks a .tar.gz and a plain tar', async () => {
    const tar = await tarOf([
      { name: './handler.py', body: 'def handler(e, c): pass' },
      { name: 'pkg/', type: 'directory' },
      { name: 'pkg/__init__.py', body: '' },
    ]);
    for (const archive of [gzipSync(tar), tar]) {
      assert.deepEqual(paths(await codeFiles({ archive: archive.toString('base64') }, 'handler.handler')), ['handler.py', 'pkg/__init__.py']);
    }
  });

  it('strips the one top directory of an archived folder when the handler is inside it', async () => {
    const zip = writeZip([
      { name: 'myfn/handler.py', data: 'x' },
      { name: 'myfn/lib.py', data: 'y' },
    ]);
    assert.deepEqual(paths(await codeFiles({ archive: zip.toString('base64') }, 'handler.handler')), ['handler.py', 'lib.py']);
  });

  it('finds a package module (pkg/__init__.py) for a dotted handler', async () => {
    assert.deepEqual(paths(await codeFiles({ files: { 'app/__init__.py': 'def main(e, c): pass' } }, 'app.main')), ['app/__init__.py']);
  });

  const refused: [string, () => Promise<unknown>, RegExp][] = [
    [
      "code without the handler's module",
      () => codeFiles({ files: { 'main.py': 'x' } }, 'handler.handler'),
      /needs handler\.py or handler\/__init__\.py in the code, which holds main\.py/,
    ],
    [
      'a symbolic link in a tar',
      async () => unpackArchive((await tarOf([{ name: 'handler.py', type: 'symlink', linkname: '/etc/passwd' }])).toString('base64')),
      /only regular files/,
    ],
    ['a path climbing out with ..', () => unpackArchive(writeZip([{ name: '../evil.py', data: 'x' }]).toString('base64')), /not a usable file path/],
    ['an absolute path', () => unpackArchive(writeZip([{ name: '/etc/evil.py', data: 'x' }]).toString('base64')), /not a usable file path/],
    ['something that is no archive', () => unpackArchive(Buffer.from('hello world').toString('base64')), /neither a \.zip nor a \.tar\.gz/],
    [
      'a truncated zip',
      () =>
        unpackArchive(
          writeZip([{ name: 'handler.py', data: 'x' }])
            .subarray(0, 20)
            .toString('base64'),
        ),
      /damaged/,
    ],
  ];
  for (const [name, run, want] of refused) {
    it(`refuses ${name}`, async () => {
      await assert.rejects(run(), (err: unknown) => err instanceof CodeError && want.test(err.message));
    });
  }

  it('refuses a zip that inflates beyond the limit', () => {
    const big = writeZip([{ name: 'zeros', data: Buffer.alloc(MAX_UNPACKED_BYTES + 1), deflate: true }]);
    assert.ok(big.length < 1024 * 1024, 'a small archive');
    assert.throws(
      () => readZip(big),
      (err: unknown) => err instanceof CodeError && /unpacks to more than/.test(err.message),
    );
  });
});

describe('stripCommonRoot', () => {
  const f = (path: string) => ({ path, data: Buffer.alloc(0), mode: 0o644 });
  it('leaves code whose handler is at the top alone', () =>
    assert.deepEqual(paths(stripCommonRoot([f('handler.py'), f('x/y.py')], 'handler.handler')), ['handler.py', 'x/y.py']));
  it('leaves several top directories alone', () =>
    assert.deepEqual(paths(stripCommonRoot([f('a/handler.py'), f('b/y.py')], 'handler.handler')), ['a/handler.py', 'b/y.py']));
});
