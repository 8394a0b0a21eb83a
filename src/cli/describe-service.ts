// `minik8s describe service`: kubectl's layout for a Service: selector, type, addresses, each port with its target, node port and endpoints.
import type { EndpointSubset, Endpoints } from '../core/api/endpoints.js';
import type { Service } from '../core/api/service.js';
import type { DescribeWriter } from './describe-writer.js';

/** How many `ip:port` pairs a port's Endpoints line lists before `+ N more...`, as kubectl does. */
const MAX_LISTED = 3;

/** The ready `ip:port` pairs for one service port (matched by port name), as kubectl's describe prints them. */
export function endpointsForPort(subsets: readonly EndpointSubset[] | undefined, portName: string | undefined): string {
  const all: string[] = [];
  for (const s of subsets ?? []) {
    for (const p of s.ports ?? []) {
      if ((p.name ?? '') !== (portName ?? '')) continue;
      for (const a of s.addresses ?? []) all.push(`${a.ip}:${p.port}`);
    }
  }
  if (all.length === 0) return '<none>';
  const more = all.length - MAX_LISTED;
  return all.slice(0, MAX_LISTED).join(',') + (more > 0 ? ` + ${more} more...` : '');
}

export function describeService(w: DescribeWriter, service: Service, endpoints: Endpoints | undefined): void {
  const spec = service.spec;
  const selector = Object.keys(spec.selector ?? {})
    .sort()
    .map((k) => `${k}=${spec.selector![k]}`)
    .join(',');
  w.field(0, 'Selector', selector);
  w.field(0, 'Type', spec.type);
  if (spec.ipFamilyPolicy) w.field(0, 'IP Family Policy', spec.ipFamilyPolicy);
  if (spec.ipFamilies?.length) w.field(0, 'IP Families', spec.ipFamilies.join(','));
  w.field(0, 'IP', spec.clusterIP);
  w.field(0, 'IPs', (spec.clusterIPs ?? (spec.clusterIP ? [spec.clusterIP] : [])).join(','));
  if (spec.externalIPs?.length) w.field(0, 'External IPs', spec.externalIPs.join(','));
  for (const p of spec.ports) {
    const name = p.name || '<unset>';
    w.field(0, 'Port', `${name}  ${p.port}/${p.protocol}`);
    w.field(0, 'TargetPort', `${p.targetPort ?? p.port}/${p.protocol}`);
    if (p.nodePort) w.field(0, 'NodePort', `${name}  ${p.nodePort}/${p.protocol}`);
    // A service without a selector has Endpoints only if someone wrote them.
    w.field(0, 'Endpoints', endpoints ? endpointsForPort(endpoints.subsets, p.name) : '<none>');
  }
  w.field(0, 'Session Affinity', spec.sessionAffinity);
  if (spec.sessionAffinity === 'ClientIP') w.field(0, 'Session Affinity Timeout', `${spec.sessionAffinityConfig?.clientIP?.timeoutSeconds ?? 10800}s`);
  if (spec.externalTrafficPolicy) w.field(0, 'External Traffic Policy', spec.externalTrafficPolicy);
  if (spec.internalTrafficPolicy) w.field(0, 'Internal Traffic Policy', spec.internalTrafficPolicy);
}
