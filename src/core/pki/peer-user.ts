// The user a verified TLS client certificate names (CN = user, O = groups), for the API server and kubelets alike.
import type { TLSSocket } from 'node:tls';

export interface CertificateUser {
  name: string;
  groups: readonly string[];
}

/**
 * Only a certificate the TLS layer checked against the cluster CA counts (`socket.authorized`);
 * servers ask for certificates without requiring them, so an unverified one is ignored and the
 * request falls back to its bearer token.
 */
export function userFromCertificate(socket: TLSSocket | undefined): CertificateUser | undefined {
  if (!socket || typeof socket.getPeerCertificate !== 'function' || !socket.authorized) return undefined;
  const subject = socket.getPeerCertificate()?.subject;
  const cn = subject?.CN;
  const name = Array.isArray(cn) ? cn[0] : cn;
  if (!name) return undefined;
  const o = subject.O;
  const groups = o === undefined ? [] : Array.isArray(o) ? o : [o];
  return { name, groups: [...groups, 'system:authenticated'] };
}
