// The API server's own credential towards kubelets: a token minted at each start, known to the API only as kube-apiserver-kubelet-client.
import { randomBytes } from 'node:crypto';
import { KUBELET_API_ADMIN_GROUP, KUBELET_CLIENT_USER_NAME } from '../../core/api/kubelet-client.js';
import type { UserInfo } from '../api-server/auth.js';

/** Kubelets accept it (through a TokenReview); the API authorizes this user for nothing. */
export const KUBELET_CLIENT_USER: UserInfo = { name: KUBELET_CLIENT_USER_NAME, groups: [KUBELET_API_ADMIN_GROUP] };

export interface KubeletClientCredential {
  token: string;
  user: UserInfo;
}

/**
 * A fresh token per master start, held in memory only: kubelets review it with the API server
 * (their cache forgets the old one within minutes), so nothing needs to keep it. Whoever
 * obtains it, for instance by making the master call a listener of theirs in a node's name,
 * can read logs and run commands through kubelets that trust this master, but cannot use the API.
 */
export function mintKubeletClientCredential(): KubeletClientCredential {
  return { token: randomBytes(32).toString('hex'), user: KUBELET_CLIENT_USER };
}
