// The kube-apiserver-client signer: issues a client certificate from the cluster CA into status.certificate for each approved CertificateSigningRequest it may sign, and marks the others Failed with why.
import {
  type CertificateSigningRequest,
  certificateSigningRequestKind,
  csrRequestPem,
  KUBE_APISERVER_CLIENT_SIGNER,
} from '../../core/api/certificate-signing-request.js';
import type { Condition } from '../../core/api/meta.js';
import type { Client } from '../../core/client/client.js';
import { type ReconcileResult, runController } from '../../core/controller/controller.js';
import type { Informer } from '../../core/controller/informer.js';
import type { InformerFactory } from '../../core/controller/informer-factory.js';
import { WorkQueue } from '../../core/controller/work-queue.js';
import { NotFoundError } from '../../core/errors.js';
import { type CertProfile, type ClusterCa, LEAF_VALID_DAYS, readCsr, signCsr } from '../../core/pki/pki.js';
import { MASTERS_GROUP } from '../api-server/authorization.js';

/** What a client certificate may be used for (Kubernetes' kube-apiserver-client signer): client auth, with these two at most beside it. */
const ALLOWED_USAGES = new Set(['client auth', 'digital signature', 'key encipherment']);

export type SignDecision = { type: 'none' } | { type: 'sign'; profile: CertProfile } | { type: 'fail'; message: string };

function isTrue(csr: CertificateSigningRequest, type: string): boolean {
  return (csr.status?.conditions ?? []).some((c) => c.type === type && c.status === 'True');
}

/**
 * Pure: what the signer does with one request, given what its PEM says. Only approved, undecided
 * requests for our signer; the subject is the CSR's own (CN the user, O the groups), but a group
 * of cluster admins only for a requester who is one, as nobody may hand out more than they hold.
 */
export function planSigning(
  csr: CertificateSigningRequest,
  request: { commonName: string; organizations: string[]; signatureValid: boolean } | { error: string },
): SignDecision {
  if (csr.spec.signerName !== KUBE_APISERVER_CLIENT_SIGNER) return { type: 'none' };
  if (!isTrue(csr, 'Approved') || isTrue(csr, 'Denied') || isTrue(csr, 'Failed') || csr.status?.certificate) return { type: 'none' };
  if ('error' in request) return { type: 'fail', message: `unable to parse csr: ${request.error}` };
  if (!request.signatureValid) return { type: 'fail', message: 'the CSR signature does not match its public key' };
  if (!request.commonName) return { type: 'fail', message: 'subject common name (the user name) must not be empty' };
  const usages = csr.spec.usages ?? [];
  if (!usages.includes('client auth')) return { type: 'fail', message: 'usages must include "client auth"' };
  const extra = usages.filter((u) => !ALLOWED_USAGES.has(u));
  if (extra.length) return { type: 'fail', message: `usages ${JSON.stringify(extra)} are not allowed for signer "${KUBE_APISERVER_CLIENT_SIGNER}"` };
  if (request.organizations.includes(MASTERS_GROUP) && !(csr.spec.groups ?? []).includes(MASTERS_GROUP)) {
    return { type: 'fail', message: `only members of group "${MASTERS_GROUP}" may request a certificate in that group (subject O)` };
  }
  const longest = LEAF_VALID_DAYS * 24 * 3600;
  return {
    type: 'sign',
    profile: {
      commonName: request.commonName,
      organizations: request.organizations,
      usages: ['client'],
      validSeconds: Math.min(csr.spec.expirationSeconds ?? longest, longest),
    },
  };
}

export interface CsrSignerOptions {
  client: Client;
  informers: InformerFactory;
  ca: ClusterCa;
  log?: (message: string) => void;
  now?: () => Date;
}

export class CsrSigner {
  readonly requests: Informer<CertificateSigningRequest>;
  readonly queue = new WorkQueue({ baseDelayMs: 500, maxDelayMs: 30_000 });
  readonly #options: CsrSignerOptions;

  constructor(options: CsrSignerOptions) {
    this.#options = options;
    this.requests = options.informers.informer<CertificateSigningRequest>(certificateSigningRequestKind);
    const enqueue = (csr: CertificateSigningRequest) => this.queue.add(csr.metadata.name!);
    this.requests.addHandlers({ onAdd: enqueue, onUpdate: (_o, csr) => enqueue(csr) });
  }

  start(signal: AbortSignal): Promise<void> {
    return runController(
      { name: 'csr-signer', queue: this.queue, informers: [this.requests], reconcile: (key) => this.reconcile(key), log: this.#options.log },
      signal,
    );
  }

  async reconcile(name: string): Promise<ReconcileResult | void> {
    const csr = this.requests.get(name);
    if (!csr || planSigning(csr, { commonName: 'x', organizations: [], signatureValid: true }).type === 'none') return;
    const pem = csrRequestPem(csr);
    const request = await readCsr(pem).catch((err: Error) => ({ error: err.message }));
    const decision = planSigning(csr, request);
    const now = (this.#options.now?.() ?? new Date()).toISOString().replace(/\.\d{3}Z$/, 'Z');
    let status: Record<string, unknown>;
    if (decision.type === 'none') return;
    if (decision.type === 'fail') {
      const failed: Condition = {
        type: 'Failed',
        status: 'True',
        reason: 'SignerValidationFailure',
        message: decision.message,
        lastUpdateTime: now,
        lastTransitionTime: now,
      };
      status = { conditions: [...(csr.status?.conditions ?? []), failed] };
      this.#options.log?.(`csr-signer: ${name} refused: ${decision.message}`);
    } else {
      const certPem = await signCsr(this.#options.ca, pem, decision.profile);
      status = { certificate: Buffer.from(certPem, 'utf8').toString('base64') };
      this.#options.log?.(`csr-signer: ${name} signed for user "${decision.profile.commonName}"`);
    }
    try {
      await this.#options.client.patch(
        certificateSigningRequestKind,
        { name },
        { metadata: { resourceVersion: csr.metadata.resourceVersion }, status },
        { subresource: 'status' },
      );
    } catch (err) {
      if (!(err instanceof NotFoundError)) throw err;
    }
  }
}
