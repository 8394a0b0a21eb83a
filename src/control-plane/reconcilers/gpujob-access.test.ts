// The lifetime of a GPU job's token from its Slurm time limit, and the Role that names its job alone.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { GpuJob } from '../../core/api/gpujob.js';
import { gpuJobReporterRules, gpuJobTokenSeconds, MAX_JOB_TOKEN_SECONDS, QUEUE_ALLOWANCE_SECONDS, slurmTimeSeconds } from './gpujob-access.js';

describe('GPU job access', () => {
  const cases: [string | undefined, number | undefined][] = [
    ['10', 600],
    ['30:00', 1800],
    ['2:00:00', 7200],
    ['1-12', 36 * 3600],
    ['1-12:30', 36 * 3600 + 1800],
    ['1-00:00:05', 24 * 3600 + 5],
    ['UNLIMITED', undefined],
    [undefined, undefined],
  ];
  for (const [time, want] of cases) it(`reads Slurm's --time ${time}`, () => assert.equal(slurmTimeSeconds(time), want));

  it('gives the token the time limit and a day, at most a week', () => {
    assert.equal(gpuJobTokenSeconds('2:00:00'), 7200 + QUEUE_ALLOWANCE_SECONDS);
    assert.equal(gpuJobTokenSeconds('30-00'), MAX_JOB_TOKEN_SECONDS);
    assert.equal(gpuJobTokenSeconds(undefined), MAX_JOB_TOKEN_SECONDS);
  });

  it('names the job in every rule, and grants no write but status and outputs', () => {
    const rules = gpuJobReporterRules({ metadata: { name: 'mm', namespace: 'gpu', uid: 'u' } } as GpuJob);
    assert.ok(rules.every((r) => r.resourceNames?.join() === 'mm'));
    const writes = rules.filter((r) => r.verbs.some((v) => v !== 'get')).flatMap((r) => r.resources);
    assert.deepEqual(writes, ['gpujobs/status', 'gpujobs/output/result.out', 'gpujobs/output/error.err']);
  });
});
