// Job tokens for GPU job submitter pods: minted by the GpuJob controller, an HMAC over the job's namespace, name and uid, so they need no store and die with the job object.
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Authenticator, UserInfo } from './auth.js';
import { GPUJOBS_GROUP, GPUJOB_USER_PREFIX } from './authorization.js';

const PREFIX = 'gj1';
/** Domain separation: the key is derived from the master's secret for this use only. */
const KEY_LABEL = 'minik8s.io gpujob tokens v1';

export interface GpuJobRef {
  namespace: string;
  name: string;
  uid: string;
}

export function gpuJobUser(job: GpuJobRef): UserInfo {
  return { name: `${GPUJOB_USER_PREFIX}${job.namespace}:${job.name}:${job.uid}`, groups: [GPUJOBS_GROUP] };
}

/**
 * `gj1.<job>.<mac>`: the job (namespace, name, uid) in base64url and an HMAC-SHA256 of it. Why
 * not a stored credential like a node's: a job token must work from the moment its pod starts and
 * stop when the job ends, and the authorizer already reads the job on every such request (its uid
 * and phase decide), so the job object itself is the record; nothing to store, revoke or sweep.
 * The key comes from the admin token: rotating that (delete the file, restart) voids every job token too.
 */
export class GpuJobTokens implements Authenticator {
  readonly #key: Buffer;

  constructor(options: { secret: string }) {
    this.#key = createHmac('sha256', options.secret).update(KEY_LABEL).digest();
  }

  mint(job: GpuJobRef): string {
    const payload = Buffer.from(`${job.namespace}\n${job.name}\n${job.uid}`).toString('base64url');
    return `${PREFIX}.${payload}.${this.#mac(payload).toString('base64url')}`;
  }

  async authenticate(token: string): Promise<UserInfo | undefined> {
    const parts = token.split('.');
    if (parts.length !== 3 || parts[0] !== PREFIX || !parts[1] || !parts[2]) return undefined;
    const given = Buffer.from(parts[2], 'base64url');
    const expected = this.#mac(parts[1]);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
    const [namespace, name, uid, ...rest] = Buffer.from(parts[1], 'base64url').toString('utf8').split('\n');
    if (!namespace || !name || !uid || rest.length) return undefined;
    return gpuJobUser({ namespace, name, uid });
  }

  #mac(payload: string): Buffer {
    return createHmac('sha256', this.#key).update(payload).digest();
  }
}
