// The identity the API server presents to kubelets (logs, exec, stats), shared by the master that mints it and the kubelets that accept it.

/**
 * Kubernetes' name for the API server's client identity towards kubelets. It is not an admin:
 * the API answers it nothing, so a kubelet address that leads elsewhere receives no key to the cluster.
 */
export const KUBELET_CLIENT_USER_NAME = 'kube-apiserver-kubelet-client';

/** The group whose members may use the kubelet API (Kubernetes' ClusterRole of that name grants the same). */
export const KUBELET_API_ADMIN_GROUP = 'system:kubelet-api-admin';
