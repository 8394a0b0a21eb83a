// Node credentials: issued, replaced and revoked at once in memory, and followed from the store by a watch (as a restarted master would).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MemoryStore } from '../../core/store/memory-store.js';
import { waitFor } from '../../core/wait-for.js';
import { NODE_CREDENTIAL_PREFIX, nodeCredentialKey, NodeCredentials } from './node-credentials.js';

const user = (name: string) => ({ name: `system:node:${name}`, groups: ['system:nodes'] });

describe('NodeCredentials', () => {
  it('authenticates a credential the moment it is issued, stores only its digest, and revokes at once', async () => {
    const store = new MemoryStore();
    const stop = new AbortController();
    const creds = new NodeCredentials({ store });
    const running = creds.start(stop.signal);
    await creds.whenSynced();
    try {
      const token = await creds.issue('n1');
      assert.match(token, /^[0-9a-f]{64}$/);
      assert.deepEqual(await creds.authenticate(token), user('n1'));
      assert.equal(JSON.stringify((await store.list(NODE_CREDENTIAL_PREFIX)).items).includes(token), false);

      const replacement = await creds.issue('n1');
      assert.equal(await creds.authenticate(token), undefined, 'a new join replaces the old credential');
      assert.deepEqual(await creds.authenticate(replacement), user('n1'));

      assert.equal(await creds.revoke('n1'), true);
      assert.equal(await creds.authenticate(replacement), undefined);
      assert.equal(await creds.revoke('n1'), false);
      assert.equal(await creds.authenticate(''), undefined);
      assert.equal(await creds.authenticate('zz'.repeat(32)), undefined);
    } finally {
      stop.abort();
      await running;
    }
  });

  it('loads credentials at start and follows other writers through the watch', async () => {
    const store = new MemoryStore();
    const writer = new NodeCredentials({ store });
    const early = await writer.issue('n1');

    const stop = new AbortController();
    const reader = new NodeCredentials({ store });
    const running = reader.start(stop.signal);
    await reader.whenSynced();
    try {
      assert.deepEqual(await reader.authenticate(early), user('n1'), 'listed at start (a master restart)');
      const later = await writer.issue('n2');
      await waitFor(async () => (await reader.authenticate(later))?.name === 'system:node:n2', { timeoutMs: 2000, description: 'the watch to bring n2' });
      await store.delete(nodeCredentialKey('n1'));
      await waitFor(async () => (await reader.authenticate(early)) === undefined, { timeoutMs: 2000, description: 'the watch to drop n1' });
      const renewed = await writer.issue('n2');
      await waitFor(async () => (await reader.authenticate(later)) === undefined && (await reader.authenticate(renewed)) !== undefined, {
        timeoutMs: 2000,
        description: 'the watch to replace n2',
      });
      assert.deepEqual((await reader.nodeNames()).sort(), ['n2']);
    } finally {
      stop.abort();
      await running;
    }
  });
});
