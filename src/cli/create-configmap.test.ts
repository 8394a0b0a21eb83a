// configMapData: --from-literal and --from-file into data and binaryData, with kubectl's errors.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { configMapData } from './create-configmap.js';

describe('configMapData', () => {
  const dir = mkdtempSync(join(tmpdir(), 'create-cm-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'app.conf'), 'a=1\n');
  writeFileSync(join(dir, 'blob'), Buffer.from([0xff, 0x00, 0xfe]));
  mkdirSync(join(dir, 'many'));
  writeFileSync(join(dir, 'many', 'x'), 'X');
  writeFileSync(join(dir, 'many', 'y'), 'Y');

  it('puts literals and text files in data, other bytes in binaryData, directories key by file name', async () => {
    const got = await configMapData('c', ['k=v=w'], [join(dir, 'app.conf'), `renamed=${join(dir, 'blob')}`, join(dir, 'many')]);
    assert.deepEqual(got, {
      data: { k: 'v=w', 'app.conf': 'a=1\n', x: 'X', y: 'Y' },
      binaryData: { renamed: Buffer.from([0xff, 0x00, 0xfe]).toString('base64') },
    });
  });

  const bad: [string, string[], string[], RegExp][] = [
    ['a duplicate key', ['k=1', 'k=2'], [], /cannot add key k, another key by that name already exists in Data for ConfigMap "c"/],
    ['a literal without =', ['k'], [], /invalid literal source k, expected key=value/],
    ['a bad key', ['a/b=1'], [], /"a\/b" is not a valid key name for a ConfigMap/],
    ['a missing file', [], [join(dir, 'none')], /error reading .*none: no such file or directory/],
  ];
  for (const [what, literals, fromFiles, message] of bad) it(`refuses ${what}`, () => assert.rejects(configMapData('c', literals, fromFiles), message));
});
