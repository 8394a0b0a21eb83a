// `minik8s cluster-info` and `minik8s api-versions`: where the control plane answers, and the group versions it serves, as kubectl prints them.
import { serviceKind } from '../core/api/service.js';
import type { CliContext } from './context.js';

interface ServiceLike {
  metadata: { name: string; labels?: Record<string, string> };
  spec?: { ports?: { name?: string; port?: number }[] };
}

// kubectl colours the names and URLs only on a terminal; plain text is what scripts and pipes get from both.
const green = (text: string) => text;
const yellow = (text: string) => text;

/** kubectl's lines: the control plane, then each kube-system Service labelled kubernetes.io/cluster-service=true, through the API's proxy. */
export function clusterInfoText(server: string, services: readonly ServiceLike[]): string {
  const base = server.replace(/\/$/, '');
  let text = `${green('Kubernetes control plane')} is running at ${yellow(base)}\n`;
  for (const svc of services) {
    const port = svc.spec?.ports?.[0];
    const portPart = port?.name ? `:${port.name}` : port?.port !== undefined && (svc.spec?.ports?.length ?? 0) > 1 ? `:${port.port}` : '';
    const name = svc.metadata.labels?.['kubernetes.io/name'] ?? svc.metadata.name;
    text += `${green(name)} is running at ${yellow(`${base}/api/v1/namespaces/kube-system/services/${svc.metadata.name}${portPart}/proxy`)}\n`;
  }
  return `${text}\nTo further debug and diagnose cluster problems, use 'minik8s cluster-info dump'.\n`;
}

export async function runClusterInfo(ctx: CliContext): Promise<number> {
  const client = ctx.client();
  const list = await client.list(serviceKind, { namespace: 'kube-system', labelSelector: 'kubernetes.io/cluster-service=true' });
  ctx.out(clusterInfoText(client.server.href, list.items as unknown as ServiceLike[]));
  return 0;
}

/** Every group/version the server lists under /api and /apis, sorted, one a line. */
export async function runApiVersions(ctx: CliContext): Promise<number> {
  const client = ctx.client();
  const core = (await client.request('GET', '/api')) as { versions?: string[] };
  const groups = (await client.request('GET', '/apis')) as { groups?: { versions?: { groupVersion: string }[] }[] };
  const all = new Set<string>(core?.versions ?? []);
  for (const group of groups?.groups ?? []) for (const v of group.versions ?? []) all.add(v.groupVersion);
  ctx.out(
    [...all]
      .sort()
      .map((v) => `${v}\n`)
      .join(''),
  );
  return 0;
}
