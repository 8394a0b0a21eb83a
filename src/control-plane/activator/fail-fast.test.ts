// Unit tests of the fail-fast decision: a failed build with nothing serving, pods that all failed or exited, and the messages they give.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod } from '../../core/api/pod.js';
import { buildFailure, podCrash, startFailure, tracebackWhere } from './fail-fast.js';

const PIP = [
  'requirements could not be installed: pip failed (exit code 1): ERROR: Could not find a version that satisfies the requirement pilow (from versions: none)',
  '  ERROR: Could not find a version that satisfies the requirement pilow (from versions: none)',
  '  ERROR: No matching distribution found for pilow',
].join('\n');

describe('buildFailure', () => {
  it("answers 503 naming the version and the build's failing line when nothing serves", () => {
    const f = buildFailure('hello', { build: { version: 1, phase: 'Failed', message: PIP } });
    assert.deepEqual(f, {
      code: 503,
      reason: 'BuildFailed',
      version: 1,
      message:
        'function hello version 1 failed to build: requirements could not be installed: pip failed (exit code 1): ERROR: Could not find a version that satisfies the requirement pilow (from versions: none)',
      detail: PIP,
    });
  });

  const cases: [string, Parameters<typeof buildFailure>[1]][] = [
    ['an earlier version serves', { version: 1, build: { version: 2, phase: 'Failed', message: 'x' } }],
    ['the build is still running (e.g. asked for again)', { build: { version: 1, phase: 'Building' } }],
    ['the build succeeded', { version: 1, build: { version: 1, phase: 'Succeeded' } }],
    ['no status yet', undefined],
  ];
  for (const [what, status] of cases) {
    it(`waits (no answer of its own) when ${what}`, () => assert.equal(buildFailure('hello', status), undefined));
  }

  it('has no detail for a one-line message', () => {
    const f = buildFailure('hello', { build: { version: 3, phase: 'Failed', message: 'the master runs no image registry' } });
    assert.equal(f?.message, 'function hello version 3 failed to build: the master runs no image registry');
    assert.equal(f?.detail, undefined);
  });
});

describe('startFailure', () => {
  it('fails only when every pod of the version has failed', () => {
    assert.equal(startFailure('f', 2, []), undefined);
    assert.equal(startFailure('f', 2, ['boom', undefined]), undefined);
    assert.deepEqual(startFailure('f', 2, ['boom', 'boom']), {
      code: 502,
      reason: 'FunctionFailed',
      version: 2,
      message: 'function f version 2 cannot start: boom',
    });
  });
});

function pod(status: Record<string, unknown>, o: { deleting?: boolean } = {}): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'f-v1-a', namespace: 'ns', labels: { 'minik8s.io/function': 'f' }, ...(o.deleting ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}) },
    spec: { containers: [{ name: 'function', image: 'x' }] },
    status: { phase: 'Running', containerStatuses: [{ name: 'function', ready: false, image: 'x', ...status }] },
  } as unknown as Pod;
}

describe('podCrash', () => {
  it('reads an exit in CrashLoopBackOff from the last state, quoting the termination message', () => {
    const p = pod({
      restartCount: 3,
      state: { waiting: { reason: 'CrashLoopBackOff' } },
      lastState: { terminated: { exitCode: 1, reason: 'Error', message: 'ModuleNotFoundError: No module named pilow' } },
    });
    assert.equal(podCrash(p), 'the runtime exited with code 1 (Error, restarted 3 times): ModuleNotFoundError: No module named pilow');
  });

  it('points at the logs when there is no termination message', () => {
    assert.equal(
      podCrash(pod({ restartCount: 0, state: { terminated: { exitCode: 137, reason: 'OOMKilled' } } })),
      'the runtime exited with code 137 (OOMKilled); its output: minik8s function logs f',
    );
  });

  it('says nothing while the runtime runs, before it ever ran, or when the pod is going', () => {
    const exited = { exitCode: 1, reason: 'Error' };
    assert.equal(podCrash(pod({ restartCount: 1, state: { running: {} }, lastState: { terminated: exited } })), undefined);
    assert.equal(podCrash(pod({ restartCount: 0, state: { waiting: { reason: 'ContainerCreating' } } })), undefined);
    assert.equal(podCrash(pod({ restartCount: 0, state: { terminated: exited } }, { deleting: true })), undefined);
  });
});

describe('tracebackWhere', () => {
  it("names the innermost frame, the function's files relative to its directory", () => {
    const tb = [
      'Traceback (most recent call last):',
      '  File "/app/runtime/server.py", line 92, in _load_handler',
      '    module = importlib.import_module(module_name)',
      '  File "<frozen importlib._bootstrap>", line 1204, in _gcd_import',
      '  File "/app/function/handler.py", line 2, in <module>',
      '    raise RuntimeError("no model file")',
      'RuntimeError: no model file',
    ].join('\n');
    assert.equal(tracebackWhere(tb), 'handler.py line 2');
    assert.equal(tracebackWhere('SyntaxError without frames'), undefined);
    assert.equal(tracebackWhere(undefined), undefined);
  });
});
