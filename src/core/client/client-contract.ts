// The one contract suite every Client must pass: the in-process client and the HTTP client run it against the same API.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Client } from './client.js';
import { AlreadyExistsError, BadRequestError, ConflictError, NotFoundError } from '../errors.js';
import { namespaceKind } from '../api/namespace.js';
import { podKind, type Pod } from '../api/pod.js';
import { secretKind } from '../api/secret.js';
import { takeEvents as take } from '../take-events.js';

export interface OpenedClient {
  client: Client;
  cleanup(): Promise<void>;
}

function podBody(name: string, labels: Record<string, string> = {}): Record<string, unknown> {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name, labels }, spec: { containers: [{ name: 'c', image: 'busybox' }] } };
}

export function runClientContract(name: string, open: () => Promise<OpenedClient>): void {
  describe(`Client contract: ${name}`, () => {
    let opened: OpenedClient;
    let client: Client;
    let n = 0;
    /** A fresh namespace per test, so tests never see each other's objects. */
    const fresh = async (): Promise<string> => {
      const ns = `contract-${process.pid}-${n++}`;
      await client.create(namespaceKind, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
      return ns;
    };

    before(async () => {
      opened = await open();
      client = opened.client;
    });
    after(async () => {
      await opened.cleanup();
    });

    it('creates in the namespace asked for, or the object’s own, and gets it back', async () => {
      const ns = await fresh();
      const a = await client.create(podKind, podBody('a'), { namespace: ns });
      assert.equal(a.metadata.namespace, ns);
      assert.ok(a.metadata.uid && a.metadata.resourceVersion && a.metadata.creationTimestamp);
      const b = await client.create(podKind, { ...podBody('b'), metadata: { name: 'b', namespace: ns } });
      assert.equal(b.metadata.namespace, ns);
      const got = await client.get(podKind, { namespace: ns, name: 'a' });
      assert.equal(got.metadata.uid, a.metadata.uid);
      await assert.rejects(client.create(podKind, podBody('a'), { namespace: ns }), AlreadyExistsError);
      await assert.rejects(client.get(podKind, { namespace: ns, name: 'nope' }), NotFoundError);
    });

    it('lists one namespace or all, with label and field selectors, and the revision to watch from', async () => {
      const ns = await fresh();
      const other = await fresh();
      await client.create(podKind, podBody('web-1', { app: 'web' }), { namespace: ns });
      await client.create(podKind, podBody('db-1', { app: 'db' }), { namespace: ns });
      await client.create(podKind, podBody('web-2', { app: 'web' }), { namespace: other });
      const mine = await client.list(podKind, { namespace: ns });
      assert.deepEqual(mine.items.map((p) => p.metadata.name).sort(), ['db-1', 'web-1']);
      assert.match(mine.metadata.resourceVersion ?? '', /^\d+$/);
      const web = await client.list(podKind, { labelSelector: 'app=web' });
      const webNames = web.items
        .filter((p) => [ns, other].includes(p.metadata.namespace!))
        .map((p) => `${p.metadata.namespace}/${p.metadata.name}`)
        .sort();
      assert.deepEqual(webNames, [`${ns}/web-1`, `${other}/web-2`]);
      const byName = await client.list(podKind, { namespace: ns, fieldSelector: 'metadata.name=db-1' });
      assert.deepEqual(
        byName.items.map((p) => p.metadata.name),
        ['db-1'],
      );
      await assert.rejects(client.list(podKind, { namespace: ns, labelSelector: 'app in (' }), BadRequestError);
    });

    it('replaces with compare-and-swap on resourceVersion', async () => {
      const ns = await fresh();
      const pod = await client.create(podKind, podBody('p'), { namespace: ns });
      const changed = await client.replace(podKind, { namespace: ns, name: 'p' }, { ...pod, metadata: { ...pod.metadata, labels: { v: '2' } } });
      assert.equal(changed.metadata.labels?.v, '2');
      assert.notEqual(changed.metadata.resourceVersion, pod.metadata.resourceVersion);
      await assert.rejects(client.replace(podKind, { namespace: ns, name: 'p' }, { ...pod, metadata: { ...pod.metadata, labels: { v: '3' } } }), ConflictError);
    });

    it('merge-patches the object, or its status subresource only', async () => {
      const ns = await fresh();
      await client.create(podKind, podBody('p', { a: '1', b: '2' }), { namespace: ns });
      const patched = await client.patch(podKind, { namespace: ns, name: 'p' }, { metadata: { labels: { b: null, c: '3' } } });
      assert.deepEqual(patched.metadata.labels, { a: '1', c: '3' });
      const status = (await client.patch(
        podKind,
        { namespace: ns, name: 'p' },
        { status: { phase: 'Running' }, metadata: { labels: { d: '4' } } },
        { subresource: 'status' },
      )) as Pod;
      assert.equal(status.status?.phase, 'Running');
      assert.equal(status.metadata.labels?.d, undefined, 'a status write leaves the rest of the object alone');
      const spec = (await client.patch(podKind, { namespace: ns, name: 'p' }, { status: { phase: 'Failed' } })) as Pod;
      assert.equal(spec.status?.phase, 'Running', 'an object write leaves its status alone');
      await assert.rejects(client.patch(podKind, { namespace: ns, name: 'p' }, { metadata: { resourceVersion: '1', labels: { e: '5' } } }), ConflictError);
      await assert.rejects(client.patch(podKind, { namespace: ns, name: 'gone' }, { metadata: { labels: { x: 'y' } } }), NotFoundError);
    });

    it('deletes, honouring a uid precondition', async () => {
      const ns = await fresh();
      const pod = await client.create(podKind, podBody('p'), { namespace: ns });
      await assert.rejects(
        client.delete(podKind, { namespace: ns, name: 'p' }, { preconditions: { uid: 'another-uid' }, gracePeriodSeconds: 0 }),
        ConflictError,
      );
      await client.delete(podKind, { namespace: ns, name: 'p' }, { preconditions: { uid: pod.metadata.uid }, gracePeriodSeconds: 0 });
      await assert.rejects(client.get(podKind, { namespace: ns, name: 'p' }), NotFoundError);
      await assert.rejects(client.delete(podKind, { namespace: ns, name: 'p' }), NotFoundError);
    });

    it('serves cluster-scoped kinds and other groups alike', async () => {
      const ns = await fresh();
      const got = await client.get(namespaceKind, { name: ns });
      assert.equal(got.metadata.name, ns);
      const cm = await client.create(secretKind, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's' }, data: { k: 'dg==' } }, { namespace: ns });
      assert.equal(cm.metadata.namespace, ns);
    });

    it('watches from a revision: ordered events of the namespace, then stops with its signal', async () => {
      const ns = await fresh();
      const start = await client.list(podKind, { namespace: ns });
      const stop = new AbortController();
      const events = client.watch(podKind, { namespace: ns, resourceVersion: start.metadata.resourceVersion, signal: stop.signal });
      const collected = take(events, 3);
      await client.create(podKind, podBody('w', { step: '1' }), { namespace: ns });
      await client.patch(podKind, { namespace: ns, name: 'w' }, { metadata: { labels: { step: '2' } } });
      await client.delete(podKind, { namespace: ns, name: 'w' }, { gracePeriodSeconds: 0 });
      const got = (await collected).filter((e) => e.type !== 'BOOKMARK');
      stop.abort();
      assert.deepEqual(
        got.map((e) => [e.type, e.object.metadata.name, e.object.metadata.labels?.step]),
        [
          ['ADDED', 'w', '1'],
          ['MODIFIED', 'w', '2'],
          ['DELETED', 'w', '2'],
        ],
      );
    });

    it('watches with a label selector: objects leaving the selection are DELETED for the watcher', async () => {
      const ns = await fresh();
      const start = await client.list(podKind, { namespace: ns });
      const stop = new AbortController();
      const events = client.watch(podKind, { namespace: ns, labelSelector: 'app=web', resourceVersion: start.metadata.resourceVersion, signal: stop.signal });
      const collected = take(events, 2);
      await client.create(podKind, podBody('x', { app: 'db' }), { namespace: ns });
      await client.create(podKind, podBody('y', { app: 'web' }), { namespace: ns });
      await client.patch(podKind, { namespace: ns, name: 'y' }, { metadata: { labels: { app: 'db' } } });
      const got = (await collected).filter((e) => e.type !== 'BOOKMARK');
      stop.abort();
      assert.deepEqual(
        got.map((e) => [e.type, e.object.metadata.name]),
        [
          ['ADDED', 'y'],
          ['DELETED', 'y'],
        ],
      );
    });
  });
}
