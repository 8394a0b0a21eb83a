// resolveContainerEnv: configMapKeyRef, secretKeyRef, envFrom (prefix, optional) and status.hostIP as a table, and the start errors Kubernetes words.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Pod } from '../../core/api/pod.js';
import { ContainerStartError } from '../../runtime/provider.js';
import { type ConfigReader, resolveContainerEnv } from './env-resolve.js';

const b64 = (s: string) => Buffer.from(s).toString('base64');

const reader = (configMaps: Record<string, Record<string, string>>, secrets: Record<string, Record<string, string>> = {}) => {
  const reads: string[] = [];
  const r: ConfigReader = {
    readConfigMap: async (ns, name) => {
      reads.push(`cm ${ns}/${name}`);
      const data = configMaps[name];
      return data ? { data, binaryData: { bin: b64('bytes') } } : undefined;
    },
    readSecret: async (ns, name) => {
      reads.push(`secret ${ns}/${name}`);
      const data = secrets[name];
      return data ? Object.fromEntries(Object.entries(data).map(([k, v]) => [k, b64(v)])) : undefined;
    },
  };
  return { r, reads };
};

const podWith = (container: object): Pod =>
  ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'p', namespace: 'ns', uid: 'u1' },
    spec: { containers: [{ name: 'c', image: 'busybox', ...container }] },
  }) as unknown as Pod;

const envOf = async (container: object, cms: Record<string, Record<string, string>>, secrets: Record<string, Record<string, string>> = {}) =>
  (await resolveContainerEnv(podWith(container), 'c', reader(cms, secrets).r, { hostIP: '10.0.0.5' })).spec.containers[0]!;

describe('resolveContainerEnv', () => {
  const cases: [string, object, Record<string, Record<string, string>>, Record<string, Record<string, string>>, { name: string; value?: string }[]][] = [
    [
      'a configMapKeyRef and a secretKeyRef become values',
      {
        env: [
          { name: 'A', valueFrom: { configMapKeyRef: { name: 'cfg', key: 'mode' } } },
          { name: 'B', valueFrom: { secretKeyRef: { name: 's', key: 'pw' } } },
        ],
      },
      { cfg: { mode: 'fast' } },
      { s: { pw: 'hunter2' } },
      [
        { name: 'A', value: 'fast' },
        { name: 'B', value: 'hunter2' },
      ],
    ],
    [
      'an optional key or object that is absent is left out',
      {
        env: [
          { name: 'A', valueFrom: { configMapKeyRef: { name: 'cfg', key: 'none', optional: true } } },
          { name: 'B', valueFrom: { configMapKeyRef: { name: 'gone', key: 'k', optional: true } } },
          { name: 'C', value: 'kept' },
        ],
      },
      { cfg: {} },
      {},
      [{ name: 'C', value: 'kept' }],
    ],
    [
      'envFrom with a prefix, env winning, invalid names skipped, a missing optional source ignored',
      {
        envFrom: [{ configMapRef: { name: 'cfg' }, prefix: 'APP_' }, { secretRef: { name: 's' } }, { configMapRef: { name: 'gone', optional: true } }],
        env: [{ name: 'APP_mode', value: 'override' }],
      },
      { cfg: { mode: 'fast', 'bad key': 'x' } },
      { s: { USER: 'u' } },
      [
        { name: 'APP_mode', value: 'fast' },
        { name: 'USER', value: 'u' },
        { name: 'APP_mode', value: 'override' },
      ],
    ],
    [
      '$ in a value read from an object is kept literally, status.hostIP is the node',
      {
        env: [
          { name: 'A', valueFrom: { configMapKeyRef: { name: 'cfg', key: 'k' } } },
          { name: 'H', valueFrom: { fieldRef: { fieldPath: 'status.hostIP' } } },
        ],
      },
      { cfg: { k: 'cost $(HOME) $5' } },
      {},
      [
        { name: 'A', value: 'cost $$(HOME) $$5' },
        { name: 'H', value: '10.0.0.5' },
      ],
    ],
    [
      'fieldRef and resourceFieldRef stay for the runtime',
      { env: [{ name: 'N', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } }], envFrom: [{ configMapRef: { name: 'cfg' } }] },
      { cfg: { X: '1' } },
      {},
      [{ name: 'X', value: '1' }, { name: 'N', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } } as never],
    ],
  ];
  for (const [what, container, cms, secrets, want] of cases) {
    it(what, async () => {
      const c = await envOf(container, cms, secrets);
      assert.deepEqual(c.env, want);
      assert.equal(c.envFrom, undefined, 'envFrom is folded into env');
    });
  }

  it('reads each object once, and leaves a container with nothing to resolve as it is', async () => {
    const { r, reads } = reader({ cfg: { a: '1', b: '2' } });
    const pod = podWith({
      env: [
        { name: 'A', valueFrom: { configMapKeyRef: { name: 'cfg', key: 'a' } } },
        { name: 'B', valueFrom: { configMapKeyRef: { name: 'cfg', key: 'b' } } },
      ],
    });
    await resolveContainerEnv(pod, 'c', r);
    assert.deepEqual(reads, ['cm ns/cfg']);
    const plain = podWith({ env: [{ name: 'A', value: '1' }] });
    assert.equal(await resolveContainerEnv(plain, 'c', r), plain);
  });

  it('reports envFrom keys skipped as invalid names', async () => {
    const messages: string[] = [];
    await resolveContainerEnv(podWith({ envFrom: [{ configMapRef: { name: 'cfg' } }] }), 'c', reader({ cfg: { '1x': 'a', ok: 'b' } }).r, {
      onSkippedKeys: (m) => messages.push(m),
    });
    assert.deepEqual(messages, ['Keys [1x] from the EnvFrom configMap ns/cfg were skipped since they are considered invalid environment variable names.']);
  });

  const failures: [string, object, Record<string, Record<string, string>>, string][] = [
    ['a missing ConfigMap', { env: [{ name: 'A', valueFrom: { configMapKeyRef: { name: 'x', key: 'k' } } }] }, {}, 'configmap "x" not found'],
    ['a missing key', { env: [{ name: 'A', valueFrom: { configMapKeyRef: { name: 'x', key: 'k' } } }] }, { x: {} }, "couldn't find key k in ConfigMap ns/x"],
    [
      'a binaryData key, which is not env',
      { env: [{ name: 'A', valueFrom: { configMapKeyRef: { name: 'x', key: 'bin' } } }] },
      { x: {} },
      "couldn't find key bin in ConfigMap ns/x",
    ],
    ['a missing envFrom ConfigMap', { envFrom: [{ configMapRef: { name: 'x' } }] }, {}, 'configmap "x" not found'],
    ['a missing envFrom Secret', { envFrom: [{ secretRef: { name: 's' } }] }, {}, 'secret "s" not found'],
    ['a missing Secret key', { env: [{ name: 'A', valueFrom: { secretKeyRef: { name: 's', key: 'k' } } }] }, {}, 'secret "s" not found'],
  ];
  for (const [what, container, cms, message] of failures) {
    it(`fails the start with CreateContainerConfigError for ${what}`, async () => {
      await assert.rejects(
        envOf(container, cms),
        (err: unknown) => err instanceof ContainerStartError && err.reason === 'CreateContainerConfigError' && err.message === message,
      );
    });
  }
});
