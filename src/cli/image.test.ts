// Unit tests of `minik8s image import`'s pure parts: names, registry choice, tar reading, progress and error wording.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { CliError } from './cli-error.js';
import {
  chooseRegistry, explainPushError, imageIdFromConfigPath, parseImageName, parseTarHeader, paxPath, pushProgress, TarScanner,
} from './image.js';

/** One ustar header block with a correct checksum. */
function header(name: string, size: number, type = '0'): Buffer {
  const b = Buffer.alloc(512);
  b.write(name, 0, 100, 'utf8');
  b.write('0000644\0', 100, 'latin1');
  b.write('0000000\0', 108, 'latin1');
  b.write('0000000\0', 116, 'latin1');
  b.write(`${size.toString(8).padStart(11, '0')}\0`, 124, 'latin1');
  b.write('00000000000\0', 136, 'latin1');
  b.write(type, 156, 'latin1');
  b.write('ustar\0', 257, 'latin1');
  b.write('00', 263, 'latin1');
  b.fill(0x20, 148, 156);
  let sum = 0;
  for (const byte of b) sum += byte;
  b.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 'latin1');
  return b;
}

function entry(name: string, content: string | Buffer, type = '0'): Buffer {
  const data = Buffer.isBuffer(content) ? content : Buffer.from(content);
  const pad = Buffer.alloc((512 - (data.length % 512)) % 512);
  return Buffer.concat([header(name, data.length, type), data, pad]);
}

/** A pax record: its length prefix counts itself. */
function paxRecord(key: string, value: string): string {
  const body = ` ${key}=${value}\n`;
  let n = body.length + 1;
  while (String(n).length + body.length !== n) n = String(n).length + body.length;
  return `${n}${body}`;
}

function tar(...entries: Buffer[]): Buffer {
  return Buffer.concat([...entries, Buffer.alloc(1024)]);
}

/** Feeds the archive in awkward chunk sizes, as a stream would. */
function scan(archive: Buffer, chunk = 333) {
  const scanner = new TarScanner();
  for (let i = 0; i < archive.length; i += chunk) scanner.push(archive.subarray(i, i + chunk));
  return scanner.finish();
}

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
    it(`${JSON.stringify(text)} is refused`, () => assert.throws(() => parseImageName(text), (err: Error) => err instanceof CliError && message.test(err.message)));
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
    ['a bare host:port server', { server: () => '127.0.0.1:6443' }, '127.0.0.1:5000'],
    ['an IPv6 server', { server: () => 'http://[::1]:6443' }, '[::1]:5000'],
  ];
  for (const [name, input, want] of cases) it(name, () => assert.equal(chooseRegistry(input), want));

  it('does not read the client config when the registry is given', () => {
    assert.equal(chooseRegistry({ flag: '1.2.3.4:5000', server: () => { throw new Error('read'); } }), '1.2.3.4:5000');
  });
  it('refuses a conflict between the name and --registry', () => {
    assert.throws(() => chooseRegistry({ flag: 'a:5000', fromName: 'b:5000', server }), /names registry b:5000 but --registry says a:5000/);
  });
  it('refuses a URL where HOST:PORT belongs', () => {
    assert.throws(() => chooseRegistry({ flag: 'http://a:5000', server }), /give HOST:PORT/);
  });
});

describe('parseTarHeader', () => {
  it('reads name, size and type', () => {
    assert.deepEqual(parseTarHeader(header('bin/sh', 1234)), { name: 'bin/sh', size: 1234, type: '0' });
    assert.deepEqual(parseTarHeader(header('etc/', 0, '5')), { name: 'etc/', size: 0, type: '5' });
  });
  it('says end for a zero block and invalid for a bad checksum or short block', () => {
    assert.equal(parseTarHeader(Buffer.alloc(512)), 'end');
    const broken = header('x', 1);
    broken[0] = 0x79;
    assert.equal(parseTarHeader(broken), 'invalid');
    assert.equal(parseTarHeader(Buffer.from('PK\x03\x04 a zip file'.padEnd(512, 'z'))), 'invalid');
    assert.equal(parseTarHeader(Buffer.alloc(100)), 'invalid');
  });
});

describe('paxPath', () => {
  it('finds the path record', () => {
    assert.equal(paxRecord('path', './manifest.json'), '24 path=./manifest.json\n');
    assert.equal(paxPath(Buffer.from(paxRecord('mtime', '1.5') + paxRecord('path', 'a/very/long/name'))), 'a/very/long/name');
    assert.equal(paxPath(Buffer.from(paxRecord('mtime', '1.5'))), undefined);
  });
});

describe('TarScanner', () => {
  const manifest = [{ Config: `blobs/sha256/${'a'.repeat(64)}`, RepoTags: ['app:1'], Layers: [`blobs/sha256/${'b'.repeat(64)}`] }];

  it('recognises a docker save tarball by its manifest.json', () => {
    const archive = tar(entry('blobs/', '', '5'), entry(`blobs/sha256/${'b'.repeat(64)}`, Buffer.alloc(3000, 1)), entry('manifest.json', JSON.stringify(manifest)), entry('repositories', '{}'));
    for (const chunk of [1, 100, 512, 4096]) assert.deepEqual(scan(archive, chunk), { entries: 4, manifest });
  });
  it('accepts ./manifest.json as written by tar -C DIR .', () => {
    assert.deepEqual(scan(tar(entry('./', '', '5'), entry('./manifest.json', JSON.stringify(manifest)))).manifest, manifest);
  });
  it('treats a tar without manifest.json as a root filesystem', () => {
    assert.deepEqual(scan(tar(entry('bin/', '', '5'), entry('bin/sh', 'ELF'), entry('etc/passwd', 'root:x:0:0::/root:/bin/sh\n'))), { entries: 3 });
  });
  it('ignores a manifest.json that is not at the top', () => {
    assert.deepEqual(scan(tar(entry('app/manifest.json', '{"name": "web app"}'))), { entries: 1 });
  });
  it('follows pax and GNU long names', () => {
    const pax = entry('PaxHeaders/x', paxRecord('path', './manifest.json'), 'x');
    assert.deepEqual(scan(tar(pax, entry('short-name', JSON.stringify(manifest)))), { entries: 1, manifest });
    const long = entry('././@LongLink', 'manifest.json\0', 'L');
    assert.deepEqual(scan(tar(long, entry('trunc', JSON.stringify(manifest)))), { entries: 1, manifest });
  });
  it('refuses what is not a tar', () => {
    assert.throws(() => scan(Buffer.from('hello, this is a text file\n')), /not a tar archive/);
    assert.throws(() => scan(Buffer.from('x'.repeat(2048))), /not a tar archive/);
    assert.throws(() => scan(Buffer.alloc(0)), /an empty file/);
  });
  it('refuses a truncated or corrupt archive', () => {
    const archive = tar(entry('bin/sh', Buffer.alloc(2000, 1)));
    assert.throws(() => scan(archive.subarray(0, 1000)), /truncated/);
    const corrupt = Buffer.concat([entry('a', 'x'), Buffer.from('y'.repeat(512))]);
    assert.throws(() => scan(corrupt), /corrupt tar archive \(bad header at byte 1024\)/);
  });
  it('refuses a manifest.json that is not a docker save manifest', () => {
    assert.throws(() => scan(tar(entry('manifest.json', 'not json'))), /not JSON/);
    assert.throws(() => scan(tar(entry('manifest.json', '{"Config": 1}'))), /not a docker save manifest/);
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
    assert.match(explainPushError('Get "https://10.0.0.1:5000/v2/": http: server gave HTTP response to HTTPS client', '10.0.0.1:5000'), /--insecure-registry 10.0.0.1:5000/);
  });
  it('says when the registry cannot be reached', () => {
    assert.match(explainPushError('dial tcp 10.0.0.1:5000: connect: connection refused', '10.0.0.1:5000'), /cannot reach the registry at 10.0.0.1:5000/);
  });
});
