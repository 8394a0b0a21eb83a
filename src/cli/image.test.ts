// Unit tests of `minik8s image import`'s parts before Docker: names, registry choice, tar reading (on archives tar-stream's pack writes), file and registry errors, progress and error wording.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { pack, type Header } from 'tar-stream';
import { CliError } from './cli-error.js';
import type { CliContext } from './context.js';
import { chooseRegistry, explainPushError, imageIdFromConfigPath, parseImageName, pushProgress, runImageImport, scanTar } from './image.js';

/** A real tar archive, written by tar-stream's pack. */
async function tar(...entries: (Partial<Header> & { name: string; content?: string | Buffer })[]): Promise<Buffer> {
  const p = pack();
  const parts: Buffer[] = [];
  const done = (async () => {
    for await (const chunk of p) parts.push(chunk as Buffer);
  })();
  for (const { content, ...header } of entries) {
    const data = content === undefined ? undefined : Buffer.isBuffer(content) ? content : Buffer.from(content);
    await new Promise<void>((resolve, reject) => {
      const cb = (err?: Error | null) => (err ? reject(err) : resolve());
      if (data === undefined) p.entry({ type: 'directory', ...header }, cb);
      else p.entry(header, data, cb);
    });
  }
  p.finalize();
  await done;
  return Buffer.concat(parts);
}

/** Feeds the archive in awkward chunk sizes, as a file stream would. */
async function* chunks(archive: Buffer, size: number): AsyncGenerator<Buffer> {
  for (let i = 0; i < archive.length; i += size) yield archive.subarray(i, i + size);
}

function scan(archive: Buffer, chunk = 333) {
  return scanTar(chunks(archive, chunk));
}

/** A CliError whose message matches. */
const cliError = (message: RegExp) => (err: unknown) => err instanceof CliError && message.test(err.message);

describe('parseImageName', () => {
  const ok: [string, ReturnType<typeof parseImageName>][] = [
    ['app', { registry: undefined, repository: 'app', tag: 'latest' }],
    ['app:1.0', { registry: undefined, repository: 'app', tag: '1.0' }],
    ['team/app:v2-rc.1', { registry: undefined, repository: 'team/app', tag: 'v2-rc.1' }],
    ['10.0.0.1:5000/app:1', { registry: '10.0.0.1:5000', repository: 'app', tag: '1' }],
    ['localhost/app', { registry: 'localhost', repository: 'app', tag: 'latest' }],
    ['my.registry/a/b_c__d', { registry: 'my.registry', repository: 'a/b_c__d', tag: 'latest' }],
  ];
  for (const [text, want] of ok) it(`${text} parses`, () => assert.deepEqual(parseImageName(text), want));

  const bad: [string, RegExp][] = [
    ['', /needs a NAME/],
    ['App', /must be lowercase/],
    ['app@sha256:abc', /not a digest/],
    ['app:', /the tag ""/],
    ['app:bad tag', /the tag "bad tag"/],
    ['a//b', /use lowercase letters/],
    ['-app', /use lowercase letters/],
  ];
  for (const [text, message] of bad) {
    it(`${JSON.stringify(text)} is refused`, () =>
      assert.throws(
        () => parseImageName(text),
        (err: Error) => err instanceof CliError && message.test(err.message),
      ));
  }
});

describe('chooseRegistry', () => {
  const server = () => 'http://10.1.2.3:6443/';
  const cases: [string, Parameters<typeof chooseRegistry>[0], string][] = [
    ['--registry wins', { flag: '1.2.3.4:5000', env: '9.9.9.9:5000', server }, '1.2.3.4:5000'],
    ['a registry in the name', { fromName: '1.2.3.4:5000', env: '9.9.9.9:5000', server }, '1.2.3.4:5000'],
    ['same in both is fine', { flag: '1.2.3.4:5000', fromName: '1.2.3.4:5000', server }, '1.2.3.4:5000'],
    ['then $MINIK8S_REGISTRY', { env: '9.9.9.9:5000', server }, '9.9.9.9:5000'],
    ['then the API server host, port 5000', { server }, '10.1.2.3:5000'],
    ['then the API server host, with the port the master says its registry has', { server, masterRegistryPort: 5123 }, '10.1.2.3:5123'],
    ['a bare host:port server', { server: () => '127.0.0.1:6443' }, '127.0.0.1:5000'],
    ['an IPv6 server', { server: () => 'http://[::1]:6443' }, '[::1]:5000'],
  ];
  for (const [name, input, want] of cases) it(name, () => assert.equal(chooseRegistry(input), want));

  it('does not read the client config when the registry is given', () => {
    assert.equal(
      chooseRegistry({
        flag: '1.2.3.4:5000',
        server: () => {
          throw new Error('read');
        },
      }),
      '1.2.3.4:5000',
    );
  });
  it('refuses a conflict between the name and --registry', () => {
    assert.throws(() => chooseRegistry({ flag: 'a:5000', fromName: 'b:5000', server }), /names registry b:5000 but --registry says a:5000/);
  });
  it('refuses a URL where HOST:PORT belongs', () => {
    assert.throws(() => chooseRegistry({ flag: 'http://a:5000', server }), /give HOST:PORT/);
  });
});

describe('scanTar', () => {
  const manifest = [{ Config: `blobs/sha256/${'a'.repeat(64)}`, RepoTags: ['app:1'], Layers: [`blobs/sha256/${'b'.repeat(64)}`] }];
  const layer = `blobs/sha256/${'b'.repeat(64)}`;

  it('recognises a docker save tarball by its manifest.json', async () => {
    const archive = await tar(
      { name: 'blobs/' },
      { name: layer, content: Buffer.alloc(3000, 1) },
      { name: 'manifest.json', content: JSON.stringify(manifest) },
      { name: 'repositories', content: '{}' },
    );
    for (const chunk of [1, 100, 512, 4096, archive.length]) assert.deepEqual(await scan(archive, chunk), { entries: 4, manifest });
  });
  it('accepts ./manifest.json as written by tar -C DIR .', async () => {
    assert.deepEqual((await scan(await tar({ name: './' }, { name: './manifest.json', content: JSON.stringify(manifest) }))).manifest, manifest);
  });
  it('reads the name from a pax header', async () => {
    const archive = await tar({ name: './manifest.json', pax: { comment: 'written with a pax header' }, content: JSON.stringify(manifest) });
    assert.ok(archive.includes('PaxHeader'), 'the archive holds a pax header');
    assert.deepEqual(await scan(archive), { entries: 1, manifest });
  });
  it('treats a tar without manifest.json as a root filesystem', async () => {
    const archive = await tar(
      { name: 'bin/' },
      { name: 'bin/sh', content: 'ELF' },
      { name: 'bin/ash', type: 'symlink', linkname: 'sh' },
      { name: 'etc/passwd', content: 'root:x:0:0::/root:/bin/sh\n' },
    );
    assert.deepEqual(await scan(archive), { entries: 4 });
  });
  it('ignores a manifest.json that is not at the top, not a file, or too big to be a manifest', async () => {
    assert.deepEqual(await scan(await tar({ name: 'app/manifest.json', content: '{"name": "web app"}' })), { entries: 1 });
    assert.deepEqual(await scan(await tar({ name: 'manifest.json', type: 'symlink', linkname: 'etc/x' })), { entries: 1 });
    assert.deepEqual(await scan(await tar({ name: 'manifest.json', content: Buffer.alloc(5 * 1024 * 1024, 0x20) })), { entries: 1 });
  });
  it('drains big entries fed in small chunks', async () => {
    const archive = await tar({ name: 'big', content: Buffer.alloc(8 * 1024 * 1024, 7) }, { name: 'manifest.json', content: JSON.stringify(manifest) });
    assert.deepEqual(await scan(archive, 1000), { entries: 2, manifest });
  });
  it('refuses what is not a tar', async () => {
    await assert.rejects(scan(Buffer.from('hello, this is a text file\n')), cliError(/^not a tar archive$/));
    await assert.rejects(scan(Buffer.from('x'.repeat(2048))), cliError(/^not a tar archive$/));
    await assert.rejects(scan(Buffer.from(`PK\x03\x04${'z'.repeat(600)}`)), cliError(/^not a tar archive$/));
    await assert.rejects(scan(Buffer.alloc(0)), cliError(/^an empty file, not a tar archive$/));
  });
  it('refuses a truncated archive', async () => {
    const archive = await tar({ name: 'bin/sh', content: Buffer.alloc(2000, 1) }, { name: 'etc/passwd', content: 'root\n' });
    await assert.rejects(scan(archive.subarray(0, 1000)), cliError(/^a truncated tar archive$/), 'cut inside a file');
    await assert.rejects(scan(archive.subarray(0, 512 + 2048 + 100)), cliError(/^a truncated tar archive$/), 'cut inside a header');
  });
  it('refuses a corrupt archive, saying where', async () => {
    const first = await tar({ name: 'a', content: 'x' });
    const corrupt = Buffer.concat([first.subarray(0, 1024), Buffer.from('y'.repeat(512))]);
    await assert.rejects(scan(corrupt), cliError(/^a corrupt tar archive \(bad header at byte 1024\)$/));
  });
  it('refuses a manifest.json that is not a docker save manifest', async () => {
    await assert.rejects(scan(await tar({ name: 'manifest.json', content: 'not json' })), cliError(/not JSON \(not a docker save tarball\)/));
    await assert.rejects(scan(await tar({ name: 'manifest.json', content: '{"Config": 1}' })), cliError(/not a docker save manifest/));
    await assert.rejects(scan(await tar({ name: 'manifest.json', content: '[{"Layers": []}]' })), cliError(/not a docker save manifest/));
  });
  it('says when the file cannot be read', async () => {
    async function* failing(): AsyncGenerator<Buffer> {
      yield Buffer.alloc(512);
      throw new Error('EIO: i/o error, read');
    }
    await assert.rejects(scanTar(failing()), cliError(/^cannot read it: EIO: i\/o error, read$/));
  });
});

describe('runImageImport before Docker', () => {
  const dirs: string[] = [];
  after(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });
  const file = (name: string, content: Buffer | string) => {
    const dir = mkdtempSync(join(tmpdir(), 'minik8s-image-unit-'));
    dirs.push(dir);
    const path = join(dir, name);
    writeFileSync(path, content);
    return path;
  };
  const ctx = (): CliContext => ({
    namespace: 'default',
    namespaceExplicit: false,
    client: () => {
      throw new Error('no API server in this test');
    },
    out: () => {},
    err: () => {},
    stdin: process.stdin,
    now: () => new Date(),
  });
  /** A loopback port nothing listens on. */
  const closedPort = () =>
    new Promise<number>((resolve) => {
      const s = createServer().listen(0, '127.0.0.1', () => {
        const { port } = s.address() as AddressInfo;
        s.close(() => resolve(port));
      });
    });

  it('refuses a file that is not a tar, naming it', async () => {
    const path = file('notes.txt', 'just some notes\n');
    await assert.rejects(
      runImageImport(ctx(), { file: path, name: 'app:1', registry: '127.0.0.1:1' }),
      cliError(new RegExp(`^${path}: not a tar archive \\(expected a docker save tarball or a root filesystem tar\\)$`)),
    );
  });
  it('reads through gzip, and refuses a gzip file that holds no tar', async () => {
    await assert.rejects(
      runImageImport(ctx(), { file: file('x.tar.gz', gzipSync('not a tar at all')), name: 'app', registry: '127.0.0.1:1' }),
      cliError(/: not a tar archive/),
    );
    await assert.rejects(
      runImageImport(ctx(), {
        file: file('cut.tar.gz', gzipSync(await tar({ name: 'a', content: 'x' })).subarray(0, 20)),
        name: 'app',
        registry: '127.0.0.1:1',
      }),
      cliError(/: cannot read it: unexpected end of file/),
    );
  });
  it('refuses a missing file and a directory', async () => {
    await assert.rejects(
      runImageImport(ctx(), { file: '/nonexistent/image.tar', name: 'app', registry: '127.0.0.1:1' }),
      cliError(/^\/nonexistent\/image.tar: no such file$/),
    );
    const dir = dirname(file('x', ''));
    await assert.rejects(runImageImport(ctx(), { file: dir, name: 'app', registry: '127.0.0.1:1' }), cliError(/is a directory; make a tar of it first/));
  });
  it('says when the registry cannot be reached, after reading a good (gzipped) tar', async () => {
    const port = await closedPort();
    const path = file('rootfs.tar.gz', gzipSync(await tar({ name: 'bin/' }, { name: 'bin/true', content: 'ELF' })));
    await assert.rejects(
      runImageImport(ctx(), { file: path, name: 'app:1', registry: `127.0.0.1:${port}` }),
      cliError(new RegExp(`^cannot reach the image registry at https://127.0.0.1:${port}/v2/ \\(ECONNREFUSED\\)`)),
    );
  });
});

describe('imageIdFromConfigPath', () => {
  it('reads both layouts', () => {
    assert.equal(imageIdFromConfigPath(`blobs/sha256/${'c'.repeat(64)}`), `sha256:${'c'.repeat(64)}`);
    assert.equal(imageIdFromConfigPath(`${'d'.repeat(64)}.json`), `sha256:${'d'.repeat(64)}`);
    assert.equal(imageIdFromConfigPath('config.json'), undefined);
  });
});

describe('pushProgress', () => {
  it('prints final layer states and the digest', () => {
    assert.deepEqual(pushProgress({ id: 'abc', status: 'Pushing', progress: '[==> ]' }), {});
    assert.deepEqual(pushProgress({ id: 'abc', status: 'Pushed' }), { line: '  layer abc: pushed' });
    assert.deepEqual(pushProgress({ id: 'abc', status: 'Layer already exists' }), { line: '  layer abc: layer already exists' });
    assert.deepEqual(pushProgress({ aux: { Tag: '1', Digest: 'sha256:f', Size: 527 } }), { line: 'digest sha256:f (manifest 527 bytes)', digest: 'sha256:f' });
  });
  it('throws on an error event', () => {
    assert.throws(() => pushProgress({ error: 'x', errorDetail: { message: 'denied' } }), /denied/);
  });
});

describe('explainPushError', () => {
  it('names the dockerd flag for a plain-HTTP registry', () => {
    assert.match(
      explainPushError('Get "https://10.0.0.1:5000/v2/": http: server gave HTTP response to HTTPS client', '10.0.0.1:5000'),
      /--insecure-registry 10.0.0.1:5000/,
    );
  });
  it('says when the registry cannot be reached', () => {
    assert.match(explainPushError('dial tcp 10.0.0.1:5000: connect: connection refused', '10.0.0.1:5000'), /cannot reach the registry at 10.0.0.1:5000/);
  });
});
