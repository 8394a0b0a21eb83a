// `minik8s events`: kubectl events' columns and order, --for, --types and -A, and the empty answer.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Event } from '../core/api/event.js';
import { runCliAgainst } from './cli-test-run.js';
import { runCli } from './main.js';
import { eventInterval, formatEvents, parseTypes } from './events.js';
import { startTestApiServer, type TestApiServer } from './test-api-server.js';

const now = new Date('2026-11-26T08:00:00Z');

function event(ns: string, name: string, fields: Partial<Event>): Record<string, unknown> {
  return {
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { name, namespace: ns },
    type: 'Normal',
    involvedObject: { kind: 'Pod', name: 'web-1', namespace: ns },
    ...fields,
  };
}

describe('events', () => {
  let api: TestApiServer;
  before(async () => {
    api = await startTestApiServer();
    const put = (ns: string, name: string, fields: Partial<Event>) => api.objects.set(`/api/v1/namespaces/${ns}/events/${name}`, event(ns, name, fields));
    put('default', 'b', { reason: 'Pulled', message: 'Pulled image "nginx"', lastTimestamp: '2026-11-26T07:59:00Z', firstTimestamp: '2026-11-26T07:59:00Z' });
    put('default', 'a', {
      reason: 'Scheduled',
      message: 'Successfully assigned default/web-1 to node-1 ',
      lastTimestamp: '2026-11-26T07:55:00Z',
      firstTimestamp: '2026-11-26T07:55:00Z',
    });
    put('default', 'c', {
      type: 'Warning',
      reason: 'BackOff',
      message: 'Back-off restarting failed container',
      involvedObject: { kind: 'Pod', name: 'db-0', namespace: 'default' },
      count: 4,
      firstTimestamp: '2026-11-26T07:50:00Z',
      lastTimestamp: '2026-11-26T07:59:30Z',
    });
    put('other', 'd', { reason: 'Killing', message: 'Stopping container', lastTimestamp: '2026-11-26T07:58:00Z', firstTimestamp: '2026-11-26T07:58:00Z' });
  });
  after(() => api.close());

  it('lists the namespace oldest first in kubectl events columns', async () => {
    const run = await runCliAgainst(api.url, ['events'], { now });
    assert.equal(run.code, 0, run.err);
    assert.equal(
      run.out,
      [
        'LAST SEEN           TYPE      REASON      OBJECT      MESSAGE',
        '5m                  Normal    Scheduled   Pod/web-1   Successfully assigned default/web-1 to node-1',
        '60s                 Normal    Pulled      Pod/web-1   Pulled image "nginx"',
        '30s (x4 over 10m)   Warning   BackOff     Pod/db-0    Back-off restarting failed container',
        '',
      ].join('\n'),
    );
  });

  it('puts NAMESPACE first under -A', async () => {
    const run = await runCliAgainst(api.url, ['events', '-A'], { now });
    assert.equal(run.code, 0, run.err);
    const lines = run.out.trimEnd().split('\n');
    assert.match(lines[0]!, /^NAMESPACE\s+LAST SEEN\s+TYPE\s+REASON\s+OBJECT\s+MESSAGE$/);
    assert.equal(lines.length, 5);
    assert.match(lines[2]!, /^other\s+2m\s+Normal\s+Killing\s+Pod\/web-1\s+Stopping container$/);
  });

  it('narrows to one object with --for and to types with --types', async () => {
    const forPod = await runCliAgainst(api.url, ['events', '--for', 'pod/db-0'], { now });
    assert.deepEqual(
      forPod.out
        .trimEnd()
        .split('\n')
        .map((l) => l.split(/\s{2,}/)[2]),
      ['REASON', 'BackOff'],
    );
    const warnings = await runCliAgainst(api.url, ['events', '--types', 'Warning'], { now });
    assert.equal(warnings.out.trimEnd().split('\n').length, 2);
    assert.match(warnings.out, /BackOff/);
    const bad = await runCliAgainst(api.url, ['events', '--types', 'Error'], { now });
    assert.equal(bad.code, 1);
    assert.equal(bad.err, 'error: valid --types are Normal or Warning\n');
  });

  it('says so when there are none', async () => {
    const run = await runCliAgainst(api.url, ['events', '-n', 'empty'], { now });
    assert.equal(run.code, 0);
    assert.equal(run.out, '');
    assert.equal(run.err, 'No events found in empty namespace.\n');
  });

  it('prints a List with -o yaml', async () => {
    const run = await runCliAgainst(api.url, ['events', '-o', 'yaml', '--for', 'pod/db-0'], { now });
    assert.equal(run.code, 0, run.err);
    assert.match(run.out, /^apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n {2}kind: Event\n/);
    assert.match(run.out, /\n {2}reason: BackOff\n/);
    assert.doesNotMatch(run.out, /Pulled/);
  });

  it('-w prints the current events, then each added or changed one, skipping deletions and other types, until interrupted', async () => {
    api.watchEvents = [
      {
        type: 'ADDED',
        object: event('default', 'e', {
          reason: 'Started',
          message: 'Started container web',
          firstTimestamp: '2026-11-26T07:59:50Z',
          lastTimestamp: '2026-11-26T07:59:50Z',
        }),
      },
      {
        type: 'ADDED',
        object: event('default', 'f', { type: 'Warning', reason: 'Unhealthy', message: 'Readiness probe failed', lastTimestamp: '2026-11-26T07:59:55Z' }),
      },
      { type: 'DELETED', object: event('default', 'b', { reason: 'Pulled', message: 'gone', lastTimestamp: '2026-11-26T07:59:00Z' }) },
      {
        type: 'MODIFIED',
        object: event('default', 'e', {
          reason: 'Started',
          message: 'Started container web',
          count: 2,
          firstTimestamp: '2026-11-26T07:59:00Z',
          lastTimestamp: '2026-11-26T08:00:00Z',
        }),
      },
    ];
    const controller = new AbortController();
    let out = '';
    const code = await runCli(['events', '-w', '--types', 'Normal', '--server', api.url], {
      stdout: (s) => {
        out += s;
        if (out.split('\n').length > 5) controller.abort();
      },
      stderr: (s) => assert.fail(s),
      env: {},
      now: () => now,
      signal: controller.signal,
    });
    api.watchEvents = [];
    assert.equal(code, 0);
    assert.deepEqual(out.split('\n').slice(0, 5), [
      'LAST SEEN   TYPE     REASON      OBJECT      MESSAGE',
      '5m          Normal   Scheduled   Pod/web-1   Successfully assigned default/web-1 to node-1',
      '60s         Normal   Pulled      Pod/web-1   Pulled image "nginx"',
      '10s         Normal   Started     Pod/web-1   Started container web',
      '0s (x2 over 60s)   Normal   Started     Pod/web-1   Started container web',
    ]);
    assert.match(api.requests.at(-1)!.url, /^\/api\/v1\/namespaces\/default\/events\?.*watch=1/);
  });

  it('formats intervals and types as kubectl events does', () => {
    const series = event('x', 'y', { eventTime: '2026-11-26T07:40:00Z', series: { count: 3, lastObservedTime: '2026-11-26T07:59:00Z' } }) as Event;
    assert.equal(eventInterval(series, now), '60s (x3 over 20m)');
    assert.deepEqual(parseTypes(['warning,Normal']), ['warning', 'normal']);
    assert.equal(formatEvents([], { now, noHeaders: true }), '');
  });
});
