// The master's service account machinery in one place: the signing key and token issuer, pod admission, the token authenticator, the TokenRequest and whoami routes, the controller.
import { join } from 'node:path';
import { gpuJobKind } from '../../core/api/gpujob.js';
import type { KindDefinition } from '../../core/api/kind.js';
import { type Pod, podKind } from '../../core/api/pod.js';
import { serviceAccountKind } from '../../core/api/serviceaccount.js';
import type { Client } from '../../core/client/client.js';
import type { InformerFactory } from '../../core/controller/informer-factory.js';
import { NotFoundError } from '../../core/errors.js';
import type { ApiRoutes } from '../api-server/server.js';
import type { ObjectService } from '../api-server/object-service.js';
import { admitPodServiceAccount } from './admission.js';
import { type ObjectLookup, ServiceAccountAuthenticator } from './authenticator.js';
import { ServiceAccountController } from './controller.js';
import { RootCaPublisher } from './root-ca-publisher.js';
import { registerSelfSubjectReviewRoutes } from './self-subject-review-routes.js';
import { registerTokenRequestRoutes } from './token-request-routes.js';
import { type IssuedToken, loadOrCreateSigningKey, ServiceAccountTokens } from './tokens.js';

export interface ServiceAccountsOptions {
  dataDir: string;
  /** Whether admission adds the kube-api-access volume (its kubelets can materialise it); default true. */
  mountTokens?: boolean;
  /** The cluster CA (PEM) published as ConfigMap kube-root-ca.crt in every namespace; none without TLS. */
  caPem?: string;
  log?: (message: string) => void;
}

export class ServiceAccounts {
  readonly tokens: ServiceAccountTokens;
  readonly #options: ServiceAccountsOptions;
  #service: ObjectService | undefined;
  #informers: InformerFactory | undefined;

  constructor(options: ServiceAccountsOptions) {
    this.#options = options;
    this.tokens = new ServiceAccountTokens({ privateKey: loadOrCreateSigningKey(join(options.dataDir, 'pki')) });
  }

  /** Binds the lookups to the API's object service and the master's informers, which exist only after the admission hook was handed out. */
  attach(service: ObjectService, informers: InformerFactory): void {
    this.#service = service;
    this.#informers = informers;
  }

  /**
   * One object, from the shared informer's cache when it has it with a uid (the common case, no
   * store read per request); a miss is read from the store, since a cache can lag a create by a moment.
   */
  lookup(def: KindDefinition): ObjectLookup {
    return async (namespace, name) => {
      const cached = this.#informers?.informer(def).get(`${namespace}/${name}`);
      if (cached) return cached;
      if (!this.#service) return undefined;
      try {
        return await this.#service.get(def, namespace, name);
      } catch (err) {
        if (err instanceof NotFoundError) return undefined;
        throw err;
      }
    };
  }

  /** ObjectServiceOptions.admitPod. */
  readonly admitPod = (pod: Pod): Promise<Pod> =>
    admitPodServiceAccount(pod, { serviceAccount: this.lookup(serviceAccountKind), mountToken: this.#options.mountTokens ?? true });

  authenticator(): ServiceAccountAuthenticator {
    return new ServiceAccountAuthenticator({
      tokens: this.tokens,
      serviceAccount: this.lookup(serviceAccountKind),
      pod: this.lookup(podKind),
      gpuJob: this.lookup(gpuJobKind),
      log: this.#options.log,
    });
  }

  /**
   * A token for a GPU job's submitter pods: its service account's, bound to the GpuJob object (void
   * once that object is gone), for the API's audience, living `expirationSeconds`.
   */
  issueGpuJobToken(input: {
    namespace: string;
    serviceAccount: { name: string; uid: string };
    job: { name: string; uid: string };
    expirationSeconds: number;
  }): Promise<IssuedToken> {
    return this.tokens.issue({
      namespace: input.namespace,
      serviceAccount: input.serviceAccount,
      gpujob: input.job,
      expirationSeconds: input.expirationSeconds,
    });
  }

  routes(): ApiRoutes[] {
    return [(app, { service }) => registerTokenRequestRoutes(app, { service, tokens: this.tokens }), (app) => registerSelfSubjectReviewRoutes(app)];
  }

  controller(client: Client, informers: InformerFactory): ServiceAccountController {
    return new ServiceAccountController({ client, informers, log: this.#options.log });
  }

  /** The kube-root-ca.crt publisher, when there is a CA to publish. */
  rootCaPublisher(client: Client, informers: InformerFactory): RootCaPublisher | undefined {
    const { caPem } = this.#options;
    return caPem ? new RootCaPublisher({ client, informers, caPem, log: this.#options.log }) : undefined;
  }
}
