// Bearer-token authentication: who a request is. Admin tokens now; node credentials slot in later.
import { createHash, timingSafeEqual } from 'node:crypto';

export interface UserInfo {
  name: string;
  groups: readonly string[];
}

/** Resolves a bearer token to a user, or undefined when the token is unknown. */
export interface Authenticator {
  authenticate(token: string): Promise<UserInfo | undefined>;
}

function digest(token: string): Buffer {
  return createHash('sha256').update(token).digest();
}

/**
 * Tokens held in memory as SHA-256 digests (compared in constant time), so a heap dump
 * does not hand out credentials. The admin token file feeds it at start; node credentials
 * (issued when a worker joins) are added with `add`.
 */
export class TokenAuthenticator implements Authenticator {
  readonly #entries: { digest: Buffer; user: UserInfo }[] = [];

  add(token: string, user: UserInfo): void {
    this.#entries.push({ digest: digest(token), user });
  }

  async authenticate(token: string): Promise<UserInfo | undefined> {
    if (!token) return undefined;
    const d = digest(token);
    return this.#entries.find((e) => timingSafeEqual(e.digest, d))?.user;
  }
}

/** Chains authenticators: the first that knows the token wins. */
export function anyOf(...authenticators: Authenticator[]): Authenticator {
  return {
    async authenticate(token) {
      for (const a of authenticators) {
        const user = await a.authenticate(token);
        if (user) return user;
      }
      return undefined;
    },
  };
}

export const ADMIN_USER: UserInfo = { name: 'admin', groups: ['system:masters'] };

/** CN = user, O = groups of a client certificate the cluster CA verified (Kubernetes' x509 authenticator). */
export { userFromCertificate } from '../../core/pki/peer-user.js';
