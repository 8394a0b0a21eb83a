// Tests for reading -f manifests: files, directories, stdin, and kubectl's error messages.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { MAX_DOCUMENT_BYTES, manifestNamespace, parseManifestText, readManifests } from './manifests.js';

const POD = 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\nspec:\n  containers:\n  - name: c\n    image: nginx\n';

describe('readManifests', () => {
  let dir: string;
  const file = (name: string, text: string) => {
    const path = join(dir, name);
    writeFileSync(path, text);
    return path;
  };
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'minik8s-manifests-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('reads multi-document YAML, skipping empty documents', async () => {
    const path = file('multi.yaml', `---\n${POD}---\n# just a comment\n---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\n---\n`);
    const got = await readManifests([path]);
    assert.deepEqual(
      got.map((m) => [m.def.kind, m.object.metadata.name, m.source]),
      [
        ['Pod', 'web', path],
        ['Deployment', 'd', path],
      ],
    );
  });

  it("reads a directory's .yaml/.yml/.json files in name order, optionally recursively", async () => {
    const d = join(dir, 'tree');
    mkdirSync(join(d, 'sub'), { recursive: true });
    writeFileSync(join(d, 'b.yml'), 'apiVersion: v1\nkind: Service\nmetadata: {name: b}\n');
    writeFileSync(join(d, 'a.json'), JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'a' } }));
    writeFileSync(join(d, 'notes.txt'), 'not a manifest');
    writeFileSync(join(d, 'sub', 'c.yaml'), 'apiVersion: v1\nkind: Pod\nmetadata: {name: c}\n');
    assert.deepEqual(
      (await readManifests([d])).map((m) => m.object.metadata.name),
      ['a', 'b'],
    );
    assert.deepEqual(
      (await readManifests([d], { recursive: true })).map((m) => m.object.metadata.name),
      ['a', 'b', 'c'],
    );
  });

  it('reads stdin for -', async () => {
    const got = await readManifests(['-'], { stdin: Readable.from([Buffer.from(POD)]) });
    assert.equal(got[0]!.source, 'STDIN');
    assert.equal(got[0]!.object.metadata.name, 'web');
  });

  it('expands a v1 List', async () => {
    const path = file(
      'list.yaml',
      'apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: Pod, metadata: {name: a}}\n- {apiVersion: v1, kind: Pod, metadata: {name: b}}\n',
    );
    assert.deepEqual(
      (await readManifests([path])).map((m) => m.object.metadata.name),
      ['a', 'b'],
    );
  });

  const errors: { name: string; text?: string; path?: string; want: RegExp | string }[] = [
    { name: 'missing path', path: 'nope.yaml', want: 'the path "nope.yaml" does not exist' },
    { name: 'YAML syntax', text: 'apiVersion: v1\nkind: Pod\nmetadata: [a,\n  b: : c\n', want: /^error parsing .*bad\.yaml: yaml: line 4, column 6: / },
    {
      name: 'not an object',
      text: '- a\n- b\n',
      want: /^error validating ".*bad\.yaml": error validating data: document 1 is not an object \(found a list\)$/,
    },
    {
      name: 'missing apiVersion and kind',
      text: 'metadata:\n  name: x\n',
      want: /^error validating ".*bad\.yaml": error validating data: \[apiVersion not set, kind not set\]$/,
    },
    { name: 'missing kind only', text: 'apiVersion: v1\nmetadata: {name: x}\n', want: /error validating data: \[kind not set\]$/ },
    {
      name: 'unknown kind',
      text: 'apiVersion: v1\nkind: Foo\nmetadata: {name: x}\n',
      want: /^resource mapping not found for name: "x" namespace: "" from ".*bad\.yaml": no matches for kind "Foo" in version "v1"\nensure CRDs are installed first$/,
    },
    {
      name: 'alias bomb',
      text: 'a: &a [x,x,x,x,x,x,x,x,x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: [*d,*d,*d,*d,*d,*d,*d,*d,*d]\n',
      want: /document 1: Excessive alias count/,
    },
    {
      name: 'oversized document',
      text: `apiVersion: v1\nkind: Pod\nmetadata: {name: x}\ndata: "${'x'.repeat(MAX_DOCUMENT_BYTES)}"\n`,
      want: /document 1 is larger than 2 MiB/,
    },
    { name: 'nothing in the file', text: '# empty\n', want: 'no objects passed to apply' },
  ];
  for (const c of errors) {
    it(`error: ${c.name}`, async () => {
      const path = c.path ?? file('bad.yaml', c.text!);
      await assert.rejects(readManifests([path]), (err: Error) => {
        assert.equal(err.name, 'CliError');
        if (typeof c.want === 'string') assert.equal(err.message, c.want);
        else assert.match(err.message, c.want);
        return true;
      });
    });
  }
});

describe('manifestNamespace', () => {
  const [obj] = parseManifestText('apiVersion: v1\nkind: Pod\nmetadata: {name: a, namespace: prod}\n', 'f.yaml');
  const manifest = { object: obj!, def: { namespaced: true } as never, source: 'f.yaml' };

  it("uses the manifest's namespace, else the context's", () => {
    assert.equal(manifestNamespace(manifest, { namespace: 'default', namespaceExplicit: false }), 'prod');
    assert.equal(manifestNamespace({ ...manifest, object: { ...obj!, metadata: { name: 'a' } } }, { namespace: 'dev', namespaceExplicit: true }), 'dev');
  });

  it('refuses a clash with an explicit -n', () => {
    assert.throws(
      () => manifestNamespace(manifest, { namespace: 'dev', namespaceExplicit: true }),
      /the namespace from the provided object "prod" does not match the namespace "dev". You must pass '--namespace=prod'/,
    );
  });
});
