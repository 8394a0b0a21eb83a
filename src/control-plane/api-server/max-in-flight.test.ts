// Max requests in flight at small limits: the excess gets 429 with Retry-After at once, mutating and not counted apart, long-running requests not at all.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Hono } from 'hono';
import { isLongRunning, maxInFlightMiddleware } from './max-in-flight.js';

/** An app whose handlers wait until released, so that requests stay in flight. */
function blockingApp() {
  const limiter = maxInFlightMiddleware({ maxRequestsInFlight: 2, maxMutatingRequestsInFlight: 1 });
  const app = new Hono();
  const held: (() => void)[] = [];
  app.use('*', limiter);
  app.all('*', async (c) => {
    await new Promise<void>((resolve) => held.push(resolve));
    return c.text('done');
  });
  const releaseAll = () => {
    for (const r of held.splice(0)) r();
  };
  return { app, limiter, held, releaseAll };
}

const until = async (check: () => boolean) => {
  // The requests reach their handlers within a few turns of the event loop.
  for (let i = 0; i < 100 && !check(); i++) await new Promise((resolve) => setImmediate(resolve));
  assert.ok(check());
};

describe('maxInFlightMiddleware', () => {
  it('answers the request over the limit at once with 429 TooManyRequests and Retry-After: 1', async () => {
    const { app, limiter, held, releaseAll } = blockingApp();
    const first = [app.request('/api/v1/namespaces/default/pods'), app.request('/api/v1/namespaces/default/pods/a')];
    await until(() => held.length === 2);
    const res = await app.request('/api/v1/nodes');
    assert.equal(res.status, 429);
    assert.equal(res.headers.get('retry-after'), '1');
    const status = (await res.json()) as Record<string, unknown>;
    assert.equal(status.kind, 'Status');
    assert.equal(status.reason, 'TooManyRequests');
    assert.equal(status.message, 'Too many requests, please try again later.');
    assert.deepEqual(status.details, { retryAfterSeconds: 1 });
    assert.equal(status.code, 429);
    assert.equal(limiter.counts.rejected, 1);
    // Mutating requests have their own limit: one POST still gets in, a second does not.
    const post = app.request('/api/v1/namespaces/default/pods', { method: 'POST', body: '{}' });
    await until(() => held.length === 3);
    assert.equal((await app.request('/api/v1/namespaces/default/pods/a', { method: 'DELETE' })).status, 429);
    releaseAll();
    for (const r of await Promise.all([...first, post])) assert.equal(r.status, 200);
    assert.deepEqual(limiter.counts, { readOnly: 0, mutating: 0, rejected: 2 });
    // Places are given back: the next requests are served.
    const again = app.request('/api/v1/nodes');
    await until(() => held.length === 1);
    releaseAll();
    assert.equal((await again).status, 200);
  });

  it('does not count watches, logs or exec', async () => {
    const { app, limiter, held, releaseAll } = blockingApp();
    const long = [
      app.request('/api/v1/namespaces/default/pods?watch=true'),
      app.request('/api/v1/pods?watch=1'),
      app.request('/api/v1/namespaces/default/pods/a/log?follow=true'),
      app.request('/api/v1/namespaces/default/pods/a/exec', { method: 'POST', body: '{}' }),
    ];
    await until(() => held.length === 4);
    assert.deepEqual(limiter.counts, { readOnly: 0, mutating: 0, rejected: 0 });
    // Two ordinary gets still fit beside them.
    const gets = [app.request('/api/v1/nodes'), app.request('/api/v1/namespaces')];
    await until(() => held.length === 6);
    releaseAll();
    for (const r of await Promise.all([...long, ...gets])) assert.equal(r.status, 200);
  });

  it('has no limit at 0', async () => {
    const limiter = maxInFlightMiddleware({ maxRequestsInFlight: 0, maxMutatingRequestsInFlight: 0 });
    const app = new Hono();
    app.use('*', limiter);
    const held: (() => void)[] = [];
    app.all('*', async (c) => {
      await new Promise<void>((resolve) => held.push(resolve));
      return c.text('done');
    });
    const all = Array.from({ length: 50 }, () => app.request('/api/v1/nodes'));
    await until(() => held.length === 50);
    for (const r of held.splice(0)) r();
    for (const r of await Promise.all(all)) assert.equal(r.status, 200);
  });
});

describe('isLongRunning', () => {
  it('is true for watches and the log, exec, attach, portforward and proxy subresources only', () => {
    const app = new Hono();
    const seen: Record<string, boolean> = {};
    app.all('*', (c) => {
      seen[`${c.req.method} ${c.req.url.replace('http://localhost', '')}`] = isLongRunning(c);
      return c.text('');
    });
    const paths: [string, string, boolean][] = [
      ['GET', '/api/v1/pods?watch=true', true],
      ['GET', '/apis/apps/v1/namespaces/x/deployments?watch=1', true],
      ['GET', '/api/v1/namespaces/x/pods/a/log', true],
      ['POST', '/api/v1/namespaces/x/pods/a/exec', true],
      ['GET', '/api/v1/pods?watch=false', false],
      ['GET', '/api/v1/namespaces/x/pods/a', false],
      ['PUT', '/api/v1/namespaces/x/pods/a/status', false],
      ['GET', '/metrics', false],
    ];
    return Promise.all(paths.map(([m, p]) => app.request(p, { method: m }))).then(() => {
      for (const [m, p, want] of paths) assert.equal(seen[`${m} ${p}`], want, `${m} ${p}`);
    });
  });
});
