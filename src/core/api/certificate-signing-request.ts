// CertificateSigningRequest (certificates.k8s.io/v1): a PKCS#10 request a user files for the cluster CA to sign once someone approves it; the requester's identity is set by the server.
import * as v from 'valibot';
import type { KindDefinition } from './kind.js';
import { conditionSchema, kindSchema } from './meta.js';
import { objectMetaPatchMeta } from './patch-meta.js';
import { formatAge } from './table.js';

export const CSR_GROUP = 'certificates.k8s.io';
/** The signer whose certificates the API server accepts as client credentials (Kubernetes' well-known signer). */
export const KUBE_APISERVER_CLIENT_SIGNER = 'kubernetes.io/kube-apiserver-client';
/** Kubernetes' floor for spec.expirationSeconds. */
export const MIN_CSR_EXPIRATION_SECONDS = 600;

/** The key usages Kubernetes' API accepts (KeyUsage in certificates/v1). */
export const KEY_USAGES = [
  'signing',
  'digital signature',
  'content commitment',
  'key encipherment',
  'key agreement',
  'data encipherment',
  'cert sign',
  'crl sign',
  'encipher only',
  'decipher only',
  'any',
  'server auth',
  'client auth',
  'code signing',
  'email protection',
  's/mime',
  'ipsec end system',
  'ipsec tunnel',
  'ipsec user',
  'timestamping',
  'ocsp signing',
  'microsoft sgc',
  'netscape sgc',
] as const;

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const SIGNER_NAME = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?\/[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;

/** The request's PEM text from spec.request (base64 of the PEM, as the API carries []byte). */
export function csrRequestPem(csr: CertificateSigningRequest): string {
  return Buffer.from(csr.spec.request, 'base64').toString('utf8');
}

export const certificateSigningRequestSchema = kindSchema(`${CSR_GROUP}/v1`, 'CertificateSigningRequest', {
  spec: v.strictObject({
    request: v.pipe(
      v.string('Required value'),
      v.regex(BASE64, 'must be base64'),
      v.check((s) => /-----BEGIN CERTIFICATE REQUEST-----/.test(Buffer.from(s, 'base64').toString('latin1')), 'PEM block type must be CERTIFICATE REQUEST'),
    ),
    signerName: v.pipe(v.string('Required value'), v.regex(SIGNER_NAME, 'must be a fully qualified domain and path of the form "example.com/signer-name"')),
    expirationSeconds: v.optional(
      v.pipe(
        v.number(),
        v.integer('must be an integer'),
        v.minValue(MIN_CSR_EXPIRATION_SECONDS, `may not specify a duration less than ${MIN_CSR_EXPIRATION_SECONDS} seconds`),
      ),
    ),
    usages: v.optional(v.array(v.picklist(KEY_USAGES, `supported values: ${KEY_USAGES.map((u) => `"${u}"`).join(', ')}`))),
    // Set by the API server from the requester; whatever a client sends is replaced.
    username: v.optional(v.string()),
    uid: v.optional(v.string()),
    groups: v.optional(v.array(v.string())),
    extra: v.optional(v.record(v.string(), v.array(v.string()))),
  }),
  status: v.optional(
    v.strictObject({
      conditions: v.optional(v.array(conditionSchema)),
      certificate: v.optional(v.pipe(v.string(), v.regex(BASE64, 'must be base64'))),
    }),
  ),
});
export type CertificateSigningRequest = v.InferOutput<typeof certificateSigningRequestSchema>;

/** The condition column as kubectl prints it: the condition types joined, Issued once there is a certificate, Pending before any. */
export function csrConditionText(csr: CertificateSigningRequest): string {
  const types = (csr.status?.conditions ?? []).filter((c) => c.status === 'True').map((c) => c.type);
  if (csr.status?.certificate) types.push('Issued');
  return types.length ? types.join(',') : 'Pending';
}

export const certificateSigningRequestKind: KindDefinition = {
  kind: 'CertificateSigningRequest',
  group: CSR_GROUP,
  version: 'v1',
  resource: 'certificatesigningrequests',
  singular: 'certificatesigningrequest',
  shortNames: ['csr'],
  namespaced: false,
  schema: certificateSigningRequestSchema,
  statusSubresource: true,
  // Served by control-plane/certificates/approval-routes.ts.
  subresources: [{ name: 'approval', kind: 'CertificateSigningRequest', verbs: ['get', 'patch', 'update'] }],
  // The request is the requester's; once filed it does not change (Kubernetes: spec is immutable).
  validateUpdate: (existing, next) =>
    JSON.stringify((existing as CertificateSigningRequest).spec) === JSON.stringify((next as CertificateSigningRequest).spec)
      ? []
      : [{ path: ['spec'], reason: 'FieldValueInvalid', value: (next as CertificateSigningRequest).spec, detail: 'field is immutable' }],
  patchMeta: { metadata: { fields: objectMetaPatchMeta } },
  ageFirst: true,
  columns: [
    { name: 'SIGNERNAME', value: (o) => (o as CertificateSigningRequest).spec.signerName },
    { name: 'REQUESTOR', value: (o) => (o as CertificateSigningRequest).spec.username ?? '' },
    {
      name: 'REQUESTEDDURATION',
      value: (o) => {
        const s = (o as CertificateSigningRequest).spec.expirationSeconds;
        return s === undefined ? '<none>' : formatAge(s * 1000);
      },
    },
    { name: 'CONDITION', value: (o) => csrConditionText(o as CertificateSigningRequest) },
  ],
};
