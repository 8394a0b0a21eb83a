// Parsing /proc/stat and /proc/meminfo, and CPU use between two samples.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cpuCoresBetween, parseMemInfo, parseProcStat, procNodeStats } from './node-stats.js';

describe('node stats', () => {
  it('parses the aggregate cpu line', () => {
    const text = 'cpu  100 5 50 800 40 3 2 0 0 0\ncpu0 50 2 25 400 20 1 1 0 0 0\nintr 1\n';
    assert.deepEqual(parseProcStat(text), { busy: 160, total: 1000 });
    assert.throws(() => parseProcStat('intr 1\n'), /no aggregate cpu line/);
  });

  it('parses meminfo as total minus available, with a fallback for old kernels', () => {
    assert.equal(parseMemInfo('MemTotal:  1000 kB\nMemFree: 100 kB\nMemAvailable:  400 kB\n'), 600 * 1024);
    assert.equal(parseMemInfo('MemTotal: 1000 kB\nMemFree: 100 kB\nBuffers: 50 kB\nCached: 250 kB\n'), 600 * 1024);
    assert.throws(() => parseMemInfo('MemFree: 1 kB\n'), /no MemTotal/);
  });

  it('computes cores used between samples', () => {
    const cases: [number, number, number, number, number, number][] = [
      // busy0 total0 busy1 total1 cores expected
      [0, 0, 50, 100, 2, 1],
      [100, 1000, 100, 1100, 4, 0],
      [100, 1000, 200, 1000, 4, 0],
      [100, 1000, 125, 1100, 4, 1],
    ];
    for (const [b0, t0, b1, t1, cores, expected] of cases) {
      assert.equal(cpuCoresBetween({ busy: b0, total: t0 }, { busy: b1, total: t1 }, cores), expected);
    }
  });

  it('samples a proc tree', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'node-stats-'));
    try {
      await writeFile(join(dir, 'stat'), 'cpu  100 0 0 900 0 0 0 0\n');
      await writeFile(join(dir, 'meminfo'), 'MemTotal: 2048 kB\nMemAvailable: 1024 kB\n');
      const sample = procNodeStats({ cores: 2, procRoot: dir });
      await writeFile(join(dir, 'stat'), 'cpu  150 0 0 950 0 0 0 0\n');
      // The sampler's baseline read races this write, so the first figure may be 0 or 1 core.
      const first = await sample();
      assert.equal(first.memoryBytes, 1024 * 1024);
      assert.ok(first.cpuCores >= 0 && first.cpuCores <= 2);
      await writeFile(join(dir, 'stat'), 'cpu  250 0 0 1050 0 0 0 0\n');
      assert.equal((await sample()).cpuCores, 1);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
