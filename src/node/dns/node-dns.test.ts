// NodeDns's zone follows its informers' first lists, whatever order they arrive in.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../../core/api/meta.js';
import type { ListWatcher } from '../../core/controller/informer.js';
import { InformerFactory } from '../../core/controller/informer-factory.js';
import { waitFor } from '../../core/wait-for.js';
import { scriptedClient } from '../../../test/helpers/scripted-client.js';
import { NodeDns } from './node-dns.js';

/** A source whose list answers when the test says so, and whose watch waits until aborted. */
function heldSource<T extends KubeObject>(items: T[]): ListWatcher<T> & { release(): void } {
  let release!: () => void;
  const released = new Promise<void>((r) => {
    release = r;
  });
  return {
    release,
    async list() {
      await released;
      return { items, resourceVersion: '1' };
    },
    async *watch(_rv: string, signal: AbortSignal) {
      await new Promise<void>((r) => signal.addEventListener('abort', () => r(), { once: true }));
    },
  };
}

describe('NodeDns zone', () => {
  it('is synced once the last first list arrives, even when it brings no object and the zone was read before', async () => {
    const web = {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'web', namespace: 'default', resourceVersion: '1' },
      spec: { clusterIP: '10.96.0.20', ports: [{ port: 80 }] },
    };
    const services = heldSource([web as never]);
    const endpoints = heldSource([]);
    const dnses = heldSource([]);
    const informers = new InformerFactory({ client: scriptedClient({ services, endpoints, dnses }) });
    const dns = new NodeDns({ informers, address: '127.0.0.1', port: 0, upstreams: [] });
    const stop = new AbortController();
    const running = informers.start(stop.signal);
    try {
      services.release();
      await dns.services.whenSynced();
      assert.equal(dns.zone().synced, false, 'DNS objects not listed yet');
      endpoints.release();
      dnses.release();
      await dns.dnses.whenSynced();
      await waitFor(() => dns.zone().synced, { timeoutMs: 2000, description: 'the zone to be synced' });
      assert.ok(dns.zone().names.size > 0);
    } finally {
      stop.abort();
      await running;
    }
  });
});
