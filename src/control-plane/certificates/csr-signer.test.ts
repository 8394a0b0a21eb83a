// The signer's decision per request, and the approval subresource's rules on conditions, as tables.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { CertificateSigningRequest } from '../../core/api/certificate-signing-request.js';
import { approvalConditions } from './csr-routes.js';
import { planSigning } from './csr-signer.js';

const approved = [{ type: 'Approved', status: 'True' as const }];
function csr(spec: Partial<CertificateSigningRequest['spec']> = {}, conditions = approved, certificate?: string): CertificateSigningRequest {
  return {
    apiVersion: 'certificates.k8s.io/v1',
    kind: 'CertificateSigningRequest',
    metadata: { name: 'a' },
    spec: { request: '', signerName: 'kubernetes.io/kube-apiserver-client', usages: ['client auth'], groups: ['devs'], ...spec },
    status: { conditions, ...(certificate ? { certificate } : {}) },
  } as CertificateSigningRequest;
}
const req = (o: string[] = ['devs'], cn = 'alice') => ({ commonName: cn, organizations: o, signatureValid: true });

describe('planSigning', () => {
  const cases: [string, CertificateSigningRequest, ReturnType<typeof req> | { error: string }, string][] = [
    ['approved: signed with the CSR subject', csr(), req(), 'sign'],
    ['pending: nothing yet', csr({}, []), req(), 'none'],
    ['denied: never', csr({}, [{ type: 'Denied', status: 'True' }]), req(), 'none'],
    ['already issued: nothing', csr({}, approved, 'Y2VydA=='), req(), 'none'],
    ['another signer: not ours', csr({ signerName: 'example.com/other' }), req(), 'none'],
    ['system:masters asked by a non-admin: refused', csr(), req(['system:masters']), 'fail'],
    ['system:masters asked by an admin: signed', csr({ groups: ['system:masters'] }), req(['system:masters']), 'sign'],
    ['server auth: refused', csr({ usages: ['client auth', 'server auth'] }), req(), 'fail'],
    ['no client auth: refused', csr({ usages: ['digital signature'] }), req(), 'fail'],
    ['no CN: refused', csr(), req(['devs'], ''), 'fail'],
    ['unparsable: refused', csr(), { error: 'bad PEM' }, 'fail'],
  ];
  for (const [name, input, request, want] of cases) it(name, () => assert.equal(planSigning(input, request).type, want));

  it('caps the lifetime at what was asked', () => {
    const d = planSigning(csr({ expirationSeconds: 3600 }), req());
    assert.equal(d.type === 'sign' && d.profile.validSeconds, 3600);
  });
});

describe('approvalConditions', () => {
  const now = '2030-01-01T00:00:00Z';
  it('takes an approval, stamping its times', () => {
    assert.deepEqual(approvalConditions('a', [], [{ type: 'Approved', status: 'True', reason: 'KubectlApprove' }], now), [
      { type: 'Approved', status: 'True', reason: 'KubectlApprove', lastUpdateTime: now, lastTransitionTime: now },
    ]);
  });
  it('refuses Approved with Denied, and taking a decision back', () => {
    assert.throws(
      () =>
        approvalConditions(
          'a',
          [],
          [
            { type: 'Approved', status: 'True' },
            { type: 'Denied', status: 'True' },
          ],
          now,
        ),
      /Approved and Denied conditions are mutually exclusive/,
    );
    assert.throws(() => approvalConditions('a', [{ type: 'Denied', status: 'True' }], [], now), /updates may not remove a condition of type "Denied"/);
  });
});
