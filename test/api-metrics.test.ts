// GET /metrics on a real master: the admin's HTTP writes and the in-process controllers' writes counted by client (apiserver_request_total).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { waitFor } from '../src/core/wait-for.js';
import { parseRequestMetrics, type RequestCount } from '../src/control-plane/api-server/request-metrics.js';
import { startMaster, type MasterProcess } from './helpers/master.js';

describe('API request metrics (real master)', () => {
  let master: MasterProcess;

  const call = async (method: string, path: string, body?: unknown, token = master.token) => {
    const res = await fetch(`${master.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, text: await res.text() };
  };
  const metrics = async () => {
    const res = await call('GET', '/metrics');
    assert.equal(res.status, 200, res.text);
    return parseRequestMetrics(res.text);
  };
  const value = (counts: RequestCount[], want: Partial<RequestCount>) =>
    counts.filter((c) => Object.entries(want).every(([k, v]) => c[k as keyof RequestCount] === v)).reduce((n, c) => n + c.value, 0);

  before(async () => {
    master = await startMaster({ registry: false });
  });
  after(async () => {
    await master?.stop();
  });

  it("shows the admin's create and the ReplicaSet controller's pod creates and status writes, each under its client", async () => {
    const rs = {
      apiVersion: 'apps/v1',
      kind: 'ReplicaSet',
      metadata: { name: 'metrics-rs' },
      spec: {
        replicas: 3,
        selector: { matchLabels: { app: 'metrics-rs' } },
        template: { metadata: { labels: { app: 'metrics-rs' } }, spec: { containers: [{ name: 'app', image: 'nothing/pulls:this' }] } },
      },
    };
    const created = await call('POST', '/apis/apps/v1/namespaces/default/replicasets', rs);
    assert.equal(created.status, 201, created.text);

    const counts = await waitFor(
      async () => {
        const m = await metrics();
        return value(m, { verb: 'create', resource: 'pods', subresource: '', client: 'replicaset-controller' }) === 3 &&
          value(m, { verb: 'patch', resource: 'replicasets', subresource: 'status', client: 'replicaset-controller' }) >= 1
          ? m
          : undefined;
      },
      { timeoutMs: 30_000, description: "the ReplicaSet controller's 3 pod creates and a status write in /metrics" },
    );
    assert.equal(value(counts, { verb: 'create', group: 'apps', resource: 'replicasets', client: 'admin' }), 1);
    // The controllers' informers are the shared ones: pods listed and watched once per scope (every
    // namespace, and the gateway's kube-system), none by the controller itself, the scheduler's included.
    assert.equal(value(counts, { verb: 'list', resource: 'pods', client: 'replicaset-controller' }), 0);
    assert.equal(value(counts, { verb: 'watch', resource: 'pods', client: 'replicaset-controller' }), 0);
    assert.equal(value(counts, { verb: 'list', resource: 'pods', client: 'shared-informers' }), 2);
    assert.equal(value(counts, { verb: 'watch', resource: 'pods', client: 'shared-informers' }), 2);
    assert.equal(value(counts, { verb: 'watch', resource: 'pods', client: 'scheduler' }), 0);

    const text = (await call('GET', '/metrics')).text;
    assert.match(text, /^# TYPE apiserver_request_total counter$/m);
    assert.match(text, /^apiserver_request_total\{verb="create",group="",resource="pods",subresource="",client="replicaset-controller",code="201"\} 3$/m);
  });

  it('answers 401 without a token', async () => {
    const res = await call('GET', '/metrics', undefined, '');
    assert.equal(res.status, 401);
  });
});
