// The kube-api-access volume on the node: files behind an atomic ..data link, the token refreshed at 80% of its life, the volume run as an emptyDir, the API's env.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import type { Pod } from '../../core/api/pod.js';
import { ServiceAccountVolumes } from './service-account-volume.js';

const root = mkdtempSync(join(tmpdir(), 'sa-volume-'));
after(() => rmSync(root, { recursive: true, force: true }));

const pod = {
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'web', namespace: 'team', uid: 'u1' },
  spec: {
    serviceAccountName: 'default',
    containers: [{ name: 'app', image: 'busybox', env: [{ name: 'KUBERNETES_SERVICE_PORT', value: 'mine' }] }],
    volumes: [
      {
        name: 'kube-api-access-bbbbb',
        projected: {
          sources: [
            { serviceAccountToken: { expirationSeconds: 3607, path: 'token' } },
            { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
            { downwardAPI: { items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }] } },
          ],
        },
      },
    ],
  },
} as unknown as Pod;

describe('ServiceAccountVolumes', () => {
  it('writes token, ca.crt and namespace, refreshes the token after 80% of its life, and runs the volume as an emptyDir', async () => {
    let now = Date.parse('2026-01-01T00:00:00Z');
    let issued = 0;
    const volumes = new ServiceAccountVolumes({
      caPem: 'CA PEM',
      dir: (p, name) => join(root, p.metadata.uid!, name),
      now: () => now,
      requestToken: async () => ({ token: `token-${++issued}`, expirationTimestamp: new Date(now + 1000_000).toISOString() }),
      apiService: async () => ({ host: '10.96.0.1', port: 443 }),
    });
    const dir = join(root, 'u1', 'kube-api-access-bbbbb');
    const ran = await volumes.prepare(pod);
    assert.equal(readFileSync(join(dir, 'token'), 'utf8'), 'token-1');
    assert.equal(readFileSync(join(dir, 'ca.crt'), 'utf8'), 'CA PEM');
    assert.equal(readFileSync(join(dir, 'namespace'), 'utf8'), 'team');
    assert.equal(readlinkSync(join(dir, 'token')), join('..data', 'token'));
    assert.deepEqual(ran.spec.volumes, [{ name: 'kube-api-access-bbbbb', emptyDir: {} }]);
    assert.deepEqual(ran.spec.containers[0]!.env, [
      { name: 'KUBERNETES_SERVICE_HOST', value: '10.96.0.1' },
      { name: 'KUBERNETES_SERVICE_PORT_HTTPS', value: '443' },
      { name: 'KUBERNETES_SERVICE_PORT', value: 'mine' },
    ]);
    now += 700_000;
    await volumes.prepare(pod);
    assert.equal(issued, 1, 'not refreshed before 80% of its life');
    now += 200_000;
    await volumes.prepare(pod);
    assert.equal(readFileSync(join(dir, 'token'), 'utf8'), 'token-2');
  });
});

describe('ServiceAccountVolumes ca.crt', () => {
  const run = async (published: Record<string, string> | undefined) => {
    const asked: string[] = [];
    const volumes = new ServiceAccountVolumes({
      caPem: 'KUBELET CA',
      configMap: async (namespace, name) => {
        asked.push(`${namespace}/${name}`);
        return published;
      },
      dir: (p, name) => join(root, `ca-${published ? 'cm' : 'none'}`, p.metadata.uid!, name),
      requestToken: async () => ({ token: 't', expirationTimestamp: new Date(Date.now() + 3600_000).toISOString() }),
    });
    await volumes.prepare(pod);
    return { asked, ca: readFileSync(join(root, `ca-${published ? 'cm' : 'none'}`, 'u1', 'kube-api-access-bbbbb', 'ca.crt'), 'utf8') };
  };

  it("comes from the namespace's kube-root-ca.crt ConfigMap", async () => {
    assert.deepEqual(await run({ 'ca.crt': 'PUBLISHED CA' }), { asked: ['team/kube-root-ca.crt'], ca: 'PUBLISHED CA' });
  });

  it("is the kubelet's CA while the ConfigMap is not published yet", async () => {
    assert.equal((await run(undefined)).ca, 'KUBELET CA');
  });
});
