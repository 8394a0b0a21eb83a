// Pod admission for service accounts, as Kubernetes' ServiceAccount plugin: the `default` account for pods naming none, a refusal for a missing one, and the kube-api-access projected volume.
import { randomInt } from 'node:crypto';
import type { KubeObject } from '../../core/api/meta.js';
import type { Pod, Volume } from '../../core/api/pod.js';
import { DEFAULT_SERVICE_ACCOUNT, type ServiceAccount } from '../../core/api/serviceaccount.js';
import { ForbiddenError } from '../../core/errors.js';

/** Where every container finds its token, CA and namespace (client libraries' in-cluster config reads here). */
export const SERVICE_ACCOUNT_MOUNT_PATH = '/var/run/secrets/kubernetes.io/serviceaccount';
export const API_ACCESS_VOLUME_PREFIX = 'kube-api-access-';
/** The token's lifetime Kubernetes asks for (an hour and 7 s: the odd seconds mark tokens of this volume). */
export const API_ACCESS_TOKEN_SECONDS = 3607;
/** The ConfigMap Kubernetes publishes in every namespace with the cluster CA. */
export const ROOT_CA_CONFIGMAP = 'kube-root-ca.crt';

/** Kubernetes' generateName alphabet: no vowels (no words), no look-alikes. */
const ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

export function apiAccessVolumeName(random: (n: number) => number = randomInt): string {
  let suffix = '';
  for (let i = 0; i < 5; i++) suffix += ALPHABET[random(ALPHABET.length)];
  return `${API_ACCESS_VOLUME_PREFIX}${suffix}`;
}

/** The projected volume every pod gets unless automount is off: token, CA and namespace. */
export function apiAccessVolume(name: string): Volume {
  return {
    name,
    projected: {
      defaultMode: 0o644,
      sources: [
        { serviceAccountToken: { expirationSeconds: API_ACCESS_TOKEN_SECONDS, path: 'token' } },
        { configMap: { name: ROOT_CA_CONFIGMAP, items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
        { downwardAPI: { items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }] } },
      ],
    },
  } as Volume;
}

/** The pod's kube-api-access volume, if it has one. */
export function apiAccessVolumeOf(pod: Pod): Volume | undefined {
  return (pod.spec.volumes ?? []).find((v) => v.name.startsWith(API_ACCESS_VOLUME_PREFIX) && (v as { projected?: unknown }).projected !== undefined);
}

export interface ServiceAccountAdmissionOptions {
  /** The stored ServiceAccount, undefined when there is none. */
  serviceAccount(namespace: string, name: string): Promise<KubeObject | undefined>;
  random?: (n: number) => number;
  /** Add the kube-api-access volume (default true). */
  mountToken?: boolean;
}

/**
 * The pod as admitted. A pod naming a ServiceAccount that does not exist is refused (403, in
 * Kubernetes' words), except `default`: a namespace made a moment ago may not have it yet, and
 * refusing would fail a create that Kubernetes clients would only retry.
 */
export async function admitPodServiceAccount(pod: Pod, options: ServiceAccountAdmissionOptions): Promise<Pod> {
  const spec = pod.spec;
  const namespace = pod.metadata.namespace ?? 'default';
  const name = spec.serviceAccountName || spec.serviceAccount || DEFAULT_SERVICE_ACCOUNT;
  const sa = (await options.serviceAccount(namespace, name)) as ServiceAccount | undefined;
  if (!sa && name !== DEFAULT_SERVICE_ACCOUNT) {
    throw new ForbiddenError(
      `pods "${pod.metadata.name ?? pod.metadata.generateName ?? ''}" is forbidden: error looking up service account ${namespace}/${name}: serviceaccount "${name}" not found`,
      { kind: 'pods', name: pod.metadata.name },
    );
  }
  const next: Pod = { ...pod, spec: { ...spec, serviceAccountName: name, serviceAccount: name } };
  const automount = spec.automountServiceAccountToken ?? sa?.automountServiceAccountToken ?? true;
  if (!automount || options.mountToken === false || apiAccessVolumeOf(pod)) return next;
  const volumeName = apiAccessVolumeName(options.random);
  const mount = (c: Pod['spec']['containers'][number]) =>
    // A container that mounts something of its own there keeps it, as in Kubernetes.
    (c.volumeMounts ?? []).some((m) => m.mountPath === SERVICE_ACCOUNT_MOUNT_PATH)
      ? c
      : { ...c, volumeMounts: [...(c.volumeMounts ?? []), { name: volumeName, readOnly: true, mountPath: SERVICE_ACCOUNT_MOUNT_PATH }] };
  next.spec.volumes = [...(spec.volumes ?? []), apiAccessVolume(volumeName)];
  next.spec.containers = spec.containers.map(mount);
  if (spec.initContainers) next.spec.initContainers = spec.initContainers.map(mount);
  return next;
}
