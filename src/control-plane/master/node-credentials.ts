// Node credentials: one per node, issued at join, stored as a digest, looked up in memory (kept in step with the store by a watch), revoked with the Node.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { abortableDelay } from '../../core/controller/informer.js';
import { AlreadyExistsError, ForbiddenError, GoneError, NotFoundError } from '../../core/errors.js';
import type { Store } from '../../core/store/store.js';
import type { Authenticator, UserInfo } from '../api-server/auth.js';
import { NODES_GROUP, NODE_USER_PREFIX } from '../api-server/authorization.js';

/** One record per node name: a fresh join replaces the credential, deleting the Node removes it. */
export const NODE_CREDENTIAL_PREFIX = '/registry/minik8s.io/nodecredentials/';

export interface NodeCredentialRecord {
  nodeName: string;
  /** Hex SHA-256 of the credential. */
  digest: string;
  issuedAt: string;
  /**
   * Hex SHA-256 of the node password (k3s' node password): a random secret the worker made at its
   * first join and keeps in its data dir. The name stays bound to it until the Node is deleted,
   * so a join token alone cannot take the name over. Absent in records of workers that sent none.
   */
  passwordDigest?: string;
}

export function nodeUser(nodeName: string): UserInfo {
  return { name: `${NODE_USER_PREFIX}${nodeName}`, groups: [NODES_GROUP] };
}

export function nodeCredentialKey(nodeName: string): string {
  return `${NODE_CREDENTIAL_PREFIX}${nodeName}`;
}

function digestHex(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

interface IndexEntry {
  digest: string;
  /** The store revision this entry reflects: older news never overwrites newer. */
  revision: number;
}

export interface NodeCredentialsOptions {
  store: Store;
  now?: () => Date;
  log?: (message: string) => void;
  /** Pause before watching again after a failure (default 500 ms). */
  retryDelayMs?: number;
}

/**
 * Authenticates node credentials from memory: every API request of every kubelet passes here,
 * so a store read per request would double the master's etcd traffic. The map follows the store
 * through a watch; issue() and revoke() also update it at once, so a credential works the moment
 * the join answers and stops the moment it is revoked here.
 */
export class NodeCredentials implements Authenticator {
  readonly #store: Store;
  readonly #now: () => Date;
  readonly #log: (message: string) => void;
  readonly #retryDelayMs: number;
  readonly #byNode = new Map<string, IndexEntry>();
  readonly #byDigest = new Map<string, string>();
  /** Revisions of removals, so a late ADDED from a relist cannot resurrect a revoked credential. */
  readonly #removedAt = new Map<string, number>();
  #synced = false;
  #syncWaiters: (() => void)[] = [];

  constructor(options: NodeCredentialsOptions) {
    this.#store = options.store;
    this.#now = options.now ?? (() => new Date());
    this.#log = options.log ?? (() => {});
    this.#retryDelayMs = options.retryDelayMs ?? 500;
  }

  /** Lists, then watches the records until `signal` aborts (relisting after Gone, retrying after failures). */
  async start(signal: AbortSignal): Promise<void> {
    let after: number | undefined;
    while (!signal.aborted) {
      try {
        if (after === undefined) after = await this.#relist();
        for await (const event of this.#store.watch<NodeCredentialRecord>(NODE_CREDENTIAL_PREFIX, { afterRevision: after, signal })) {
          const nodeName = event.key.slice(NODE_CREDENTIAL_PREFIX.length);
          if (event.type === 'DELETED') this.#forget(nodeName, event.revision);
          else this.#remember(nodeName, event.value.digest, event.revision);
          after = event.revision;
        }
      } catch (err) {
        if (signal.aborted) break;
        if (err instanceof GoneError) {
          after = undefined;
          continue;
        }
        this.#log(`node credentials: watch failed (${err instanceof Error ? err.message : String(err)}); retrying`);
        await abortableDelay(this.#retryDelayMs, signal);
      }
    }
  }

  /** Resolves once the first list is in memory. */
  whenSynced(): Promise<void> {
    if (this.#synced) return Promise.resolve();
    return new Promise((resolve) => this.#syncWaiters.push(resolve));
  }

  /**
   * Refuses (403) a join for a name that is bound to another node password, or to one when the
   * join brings none. Joins run one at a time (NodeRegistrar), so nothing binds the name between
   * this check and issue().
   */
  async checkPassword(nodeName: string, password: string | undefined): Promise<void> {
    let bound: string | undefined;
    try {
      bound = (await this.#store.get<NodeCredentialRecord>(nodeCredentialKey(nodeName))).value.passwordDigest;
    } catch (err) {
      if (err instanceof NotFoundError) return;
      throw err;
    }
    if (bound === undefined) return;
    const given = password === undefined ? undefined : Buffer.from(digestHex(password), 'hex');
    const want = Buffer.from(bound, 'hex');
    if (given && given.length === want.length && timingSafeEqual(given, want)) return;
    throw new ForbiddenError(
      `node "${nodeName}" has already joined with another node password: a join token cannot take over an existing node's name. ` +
        `Join with another --name, or delete the Node (minik8s delete node ${nodeName}) to free the name`,
      { kind: 'nodes', name: nodeName },
    );
  }

  /** A new credential for `nodeName` (32 random bytes, hex), replacing any earlier one; binds the name to `password` when one is given. */
  async issue(nodeName: string, password?: string): Promise<string> {
    const token = randomBytes(32).toString('hex');
    const record: NodeCredentialRecord = { nodeName, digest: digestHex(token), issuedAt: this.#now().toISOString() };
    if (password !== undefined) record.passwordDigest = digestHex(password);
    const key = nodeCredentialKey(nodeName);
    for (;;) {
      try {
        const current = await this.#store.get<NodeCredentialRecord>(key);
        // A join without a password keeps the binding an earlier one made (checkPassword has let it through only when there is none).
        if (record.passwordDigest === undefined && current.value.passwordDigest !== undefined) record.passwordDigest = current.value.passwordDigest;
        this.#remember(nodeName, record.digest, await this.#store.update(key, record, current.revision));
        return token;
      } catch (err) {
        if (!(err instanceof NotFoundError)) throw err;
      }
      try {
        this.#remember(nodeName, record.digest, await this.#store.create(key, record));
        return token;
      } catch (err) {
        if (!(err instanceof AlreadyExistsError)) throw err;
      }
    }
  }

  /** Removes the node's credential; false when it had none. */
  async revoke(nodeName: string): Promise<boolean> {
    try {
      const removed = await this.#store.delete(nodeCredentialKey(nodeName));
      this.#forget(nodeName, removed.revision);
      return true;
    } catch (err) {
      if (err instanceof NotFoundError) return false;
      throw err;
    }
  }

  /** Names of the nodes that hold a credential, read from the store. */
  async nodeNames(): Promise<string[]> {
    return (await this.#store.list<NodeCredentialRecord>(NODE_CREDENTIAL_PREFIX)).items.map((e) => e.value.nodeName);
  }

  async authenticate(token: string): Promise<UserInfo | undefined> {
    // Credentials are 64 hex characters; a map keyed by their digest leaks nothing through timing.
    if (!/^[0-9a-f]{64}$/.test(token)) return undefined;
    const nodeName = this.#byDigest.get(digestHex(token));
    return nodeName === undefined ? undefined : nodeUser(nodeName);
  }

  async #relist(): Promise<number> {
    const list = await this.#store.list<NodeCredentialRecord>(NODE_CREDENTIAL_PREFIX);
    const listed = new Set<string>();
    for (const entry of list.items) {
      const nodeName = entry.key.slice(NODE_CREDENTIAL_PREFIX.length);
      listed.add(nodeName);
      this.#remember(nodeName, entry.value.digest, entry.revision);
    }
    for (const [nodeName, entry] of [...this.#byNode]) {
      if (!listed.has(nodeName) && entry.revision <= list.revision) this.#forget(nodeName, list.revision);
    }
    if (!this.#synced) {
      this.#synced = true;
      for (const resolve of this.#syncWaiters.splice(0)) resolve();
    }
    return list.revision;
  }

  #remember(nodeName: string, digest: string, revision: number): void {
    const current = this.#byNode.get(nodeName);
    if (current && current.revision >= revision) return;
    if ((this.#removedAt.get(nodeName) ?? 0) >= revision) return;
    if (current) this.#byDigest.delete(current.digest);
    this.#byNode.set(nodeName, { digest, revision });
    this.#byDigest.set(digest, nodeName);
    this.#removedAt.delete(nodeName);
  }

  #forget(nodeName: string, revision: number): void {
    const current = this.#byNode.get(nodeName);
    if (current && current.revision > revision) return;
    if (current) this.#byDigest.delete(current.digest);
    this.#byNode.delete(nodeName);
    this.#removedAt.set(nodeName, Math.max(revision, this.#removedAt.get(nodeName) ?? 0));
  }
}
