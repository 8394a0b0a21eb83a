// Authenticates bound service account tokens: a valid JWT whose service account (and pod or GpuJob, when bound to one) still exist with the uids it names.
import type { KubeObject } from '../../core/api/meta.js';
import { serviceAccountUser } from '../../core/api/serviceaccount.js';
import type { Authenticator, UserInfo } from '../api-server/auth.js';
import { looksLikeJwt, type ServiceAccountTokens, TokenRejected } from './tokens.js';

/** Reads one object; undefined when there is none. The master's lookup asks its informers' caches first. */
export type ObjectLookup = (namespace: string, name: string) => Promise<KubeObject | undefined>;

export interface ServiceAccountAuthenticatorOptions {
  tokens: ServiceAccountTokens;
  serviceAccount: ObjectLookup;
  pod: ObjectLookup;
  /** GpuJobs, for tokens bound to one (a submitter's): without it such tokens are refused. */
  gpuJob?: ObjectLookup;
  /** Where refusals are explained (the client only sees 401); never given the token. */
  log?: (message: string) => void;
}

export class ServiceAccountAuthenticator implements Authenticator {
  readonly #options: ServiceAccountAuthenticatorOptions;

  constructor(options: ServiceAccountAuthenticatorOptions) {
    this.#options = options;
  }

  async authenticate(token: string): Promise<UserInfo | undefined> {
    if (!looksLikeJwt(token)) return undefined;
    try {
      const { claim } = await this.#options.tokens.verify(token);
      const sa = await this.#options.serviceAccount(claim.namespace, claim.serviceaccount.name);
      if (!sa || sa.metadata.uid !== claim.serviceaccount.uid) {
        throw new TokenRejected(`service account ${claim.namespace}/${claim.serviceaccount.name} (uid ${claim.serviceaccount.uid}) no longer exists`);
      }
      if (claim.pod) {
        const pod = await this.#options.pod(claim.namespace, claim.pod.name);
        if (!pod || pod.metadata.uid !== claim.pod.uid) {
          throw new TokenRejected(`pod ${claim.namespace}/${claim.pod.name} (uid ${claim.pod.uid}) the token is bound to no longer exists`);
        }
      }
      if (claim.gpujob) {
        const job = await this.#options.gpuJob?.(claim.namespace, claim.gpujob.name);
        if (!job || job.metadata.uid !== claim.gpujob.uid) {
          throw new TokenRejected(`gpujob ${claim.namespace}/${claim.gpujob.name} (uid ${claim.gpujob.uid}) the token is bound to no longer exists`);
        }
      }
      return serviceAccountUser(claim.namespace, claim.serviceaccount.name);
    } catch (err) {
      if (!(err instanceof TokenRejected)) throw err;
      this.#options.log?.(`service account token refused: ${err.message}`);
      return undefined;
    }
  }
}
