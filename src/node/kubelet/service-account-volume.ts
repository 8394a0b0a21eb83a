// The kube-api-access projected volume on the node: a token requested for the pod (bound to it), the cluster CA (from ConfigMap kube-root-ca.crt) and the namespace, written with an atomic `..data` swap and refreshed at 80% of the token's life.
import { mkdirSync, readlinkSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type ConfigMap, configMapKind } from '../../core/api/configmap.js';
import type { Pod, Volume } from '../../core/api/pod.js';
import { type Service, serviceKind } from '../../core/api/service.js';
import type { ApiClient } from '../../core/client/api-client.js';
import { NotFoundError } from '../../core/errors.js';

interface TokenSource {
  path: string;
  expirationSeconds?: number;
  audience?: string;
}

interface Projection {
  serviceAccountToken?: TokenSource;
  configMap?: { name?: string; items?: { key: string; path: string }[] };
  downwardAPI?: { items?: { path: string; fieldRef?: { fieldPath: string } }[] };
}

/** The pod's projected volumes that carry a service account token (admission's kube-api-access-XXXXX). */
export function tokenVolumes(pod: Pod): Volume[] {
  return (pod.spec.volumes ?? []).filter((v) =>
    ((v as { projected?: { sources?: Projection[] } }).projected?.sources ?? []).some((s) => s.serviceAccountToken),
  );
}

/**
 * Writes `files` into `dir` the way the kubelet's atomic writer does: a fresh timestamped
 * directory, then `..data` switched to it by one rename, with each name a link through `..data`.
 * A reader opening `token` sees the old file or the new one, never half of either.
 */
export function writeAtomically(dir: string, files: Readonly<Record<string, string>>, now: Date = new Date()): void {
  mkdirSync(dir, { recursive: true });
  const stamp = `..${now.toISOString().replace(/[:.]/g, '_')}.${process.pid}.${Math.random().toString(36).slice(2, 8)}`;
  const fresh = join(dir, stamp);
  mkdirSync(fresh, { mode: 0o755 });
  for (const [name, content] of Object.entries(files)) writeFileSync(join(fresh, name), content, { mode: 0o644 });
  let previous: string | undefined;
  try {
    previous = readlinkSync(join(dir, '..data'));
  } catch {
    previous = undefined;
  }
  const tmpLink = join(dir, '..data_tmp');
  rmSync(tmpLink, { force: true });
  symlinkSync(stamp, tmpLink);
  renameSync(tmpLink, join(dir, '..data'));
  for (const name of Object.keys(files)) {
    try {
      symlinkSync(join('..data', name), join(dir, name));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
  }
  if (previous && previous !== stamp) rmSync(join(dir, previous), { recursive: true, force: true });
}

export interface ServiceAccountVolumesOptions {
  /** A TokenRequest for the pod's service account, bound to the pod, with the node's credential. */
  requestToken(pod: Pod, source: TokenSource): Promise<{ token: string; expirationTimestamp: string }>;
  /** The data of a ConfigMap in the pod's namespace (undefined when there is none): the volume's ca.crt comes from kube-root-ca.crt. */
  configMap?: (namespace: string, name: string) => Promise<Readonly<Record<string, string>> | undefined>;
  /**
   * The cluster CA the kubelet trusts the API server with: ca.crt while the namespace's
   * kube-root-ca.crt is not published yet (a pod made right after its namespace), rather than
   * holding the pod back as Kubernetes would; it is the same certificate.
   */
  caPem?: string;
  /** Where the volume's files live on this node: the directory the runtime binds for an emptyDir of that name. */
  dir(pod: Pod, volumeName: string): string;
  /** The API's in-cluster address, for KUBERNETES_SERVICE_HOST/PORT; none are set without it. */
  apiService?: () => Promise<{ host: string; port: number } | undefined>;
  now?: () => number;
}

/** Kubernetes refreshes a projected token once 80% of its life has passed (or after 24 h). */
const REFRESH_FRACTION = 0.8;

export class ServiceAccountVolumes {
  readonly #o: ServiceAccountVolumesOptions;
  /** Per pod uid and volume: when the current token is due for a refresh, in ms since the epoch. */
  readonly #refreshAt = new Map<string, number>();

  constructor(options: ServiceAccountVolumesOptions) {
    this.#o = options;
  }

  /**
   * Makes (or refreshes) the pod's token volumes and returns the pod as the runtime should run
   * it: each such volume as an emptyDir at the directory written here, and the API service's
   * address in every container's environment.
   */
  async prepare(pod: Pod): Promise<Pod> {
    const now = this.#o.now?.() ?? Date.now();
    const volumes = tokenVolumes(pod);
    for (const vol of volumes) {
      const key = `${pod.metadata.uid}/${vol.name}`;
      const due = this.#refreshAt.get(key);
      if (due !== undefined && now < due) continue;
      const files: Record<string, string> = {};
      for (const s of ((vol as { projected?: { sources?: Projection[] } }).projected?.sources ?? []) as Projection[]) {
        if (s.serviceAccountToken) {
          const issued = await this.#o.requestToken(pod, s.serviceAccountToken);
          files[s.serviceAccountToken.path] = issued.token;
          const life = Date.parse(issued.expirationTimestamp) - now;
          this.#refreshAt.set(key, now + Math.max(60_000, Math.floor(life * REFRESH_FRACTION)));
        }
        if (s.configMap?.items?.length) {
          const data = s.configMap.name ? await this.#o.configMap?.(pod.metadata.namespace ?? 'default', s.configMap.name) : undefined;
          for (const item of s.configMap.items) {
            const value = data?.[item.key] ?? (item.key === 'ca.crt' ? this.#o.caPem : undefined);
            if (value !== undefined) files[item.path] = value;
          }
        }
        for (const item of s.downwardAPI?.items ?? [])
          if (item.fieldRef?.fieldPath === 'metadata.namespace') files[item.path] = pod.metadata.namespace ?? 'default';
      }
      writeAtomically(this.#o.dir(pod, vol.name), files, new Date(now));
    }
    const names = new Set(volumes.map((v) => v.name));
    const api = await this.#o.apiService?.();
    if (names.size === 0 && !api) return pod;
    const env = api
      ? [
          { name: 'KUBERNETES_SERVICE_HOST', value: api.host },
          { name: 'KUBERNETES_SERVICE_PORT', value: String(api.port) },
          { name: 'KUBERNETES_SERVICE_PORT_HTTPS', value: String(api.port) },
        ]
      : [];
    const withEnv = <C extends { env?: { name: string }[] }>(c: C): C => {
      if (!env.length) return c;
      const own = new Set((c.env ?? []).map((e) => e.name));
      return { ...c, env: [...env.filter((e) => !own.has(e.name)), ...(c.env ?? [])] };
    };
    return {
      ...pod,
      spec: {
        ...pod.spec,
        volumes: (pod.spec.volumes ?? []).map((v) => (names.has(v.name) ? ({ name: v.name, emptyDir: {} } as Volume) : v)),
        containers: pod.spec.containers.map(withEnv),
        ...(pod.spec.initContainers ? { initContainers: pod.spec.initContainers.map(withEnv) } : {}),
      },
    } as Pod;
  }

  /** Drops what is kept for a pod that is gone (the runtime removes its directories). */
  forget(uid: string): void {
    for (const key of [...this.#refreshAt.keys()]) if (key.startsWith(`${uid}/`)) this.#refreshAt.delete(key);
  }
}

/** The node's ServiceAccountVolumes: tokens from the TokenRequest API as the node, ConfigMaps read as the node, files where the runtime binds emptyDirs, the API's address from Service default/kubernetes. */
export function nodeServiceAccountVolumes(options: {
  client: Pick<ApiClient, 'request' | 'get'>;
  caPem?: string;
  volumeDir: (uid: string, volume: string) => string;
}): ServiceAccountVolumes {
  let api: { host: string; port: number } | undefined;
  return new ServiceAccountVolumes({
    caPem: options.caPem,
    configMap: async (namespace, name) => {
      try {
        return ((await options.client.get(configMapKind, { namespace, name })) as ConfigMap).data ?? {};
      } catch (err) {
        if (err instanceof NotFoundError) return undefined;
        throw err;
      }
    },
    dir: (pod, name) => options.volumeDir(pod.metadata.uid!, name),
    requestToken: async (pod, source) => {
      const namespace = encodeURIComponent(pod.metadata.namespace ?? 'default');
      const sa = encodeURIComponent(pod.spec.serviceAccountName ?? 'default');
      const spec = {
        expirationSeconds: source.expirationSeconds ?? 3607,
        ...(source.audience ? { audiences: [source.audience] } : {}),
        boundObjectRef: { kind: 'Pod', apiVersion: 'v1', name: pod.metadata.name, uid: pod.metadata.uid },
      };
      const answer = (await options.client.request('POST', `/api/v1/namespaces/${namespace}/serviceaccounts/${sa}/token`, {
        body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec },
      })) as { status: { token: string; expirationTimestamp: string } };
      return answer.status;
    },
    // Read until found, then kept: the API service's address never changes in a cluster's life.
    apiService: async () => {
      if (api) return api;
      try {
        const svc = (await options.client.get(serviceKind, { namespace: 'default', name: 'kubernetes' })) as Service;
        const port = svc.spec.ports?.find((p) => p.name === 'https') ?? svc.spec.ports?.[0];
        if (svc.spec.clusterIP && port) api = { host: svc.spec.clusterIP, port: port.port };
      } catch (err) {
        if (!(err instanceof NotFoundError)) throw err;
      }
      return api;
    },
  });
}
