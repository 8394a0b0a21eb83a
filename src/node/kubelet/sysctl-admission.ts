// The kubelet's sysctl admission: a pod asking for a sysctl outside the safe set (and the node's allowlist) is rejected, Failed with reason SysctlForbidden.
import type { Pod, PodStatus } from '../../core/api/pod.js';
import { forbiddenSysctl } from '../../runtime/security-context.js';

/** The status a rejected pod gets, as the kubelet's rejectPod writes it; undefined when the node admits the pod. */
export function sysctlRejection(pod: Pod, allowedUnsafe: readonly string[] = []): (PodStatus & { reason: string; message: string }) | undefined {
  const forbidden = forbiddenSysctl(pod, allowedUnsafe);
  if (!forbidden) return undefined;
  return { phase: 'Failed', reason: 'SysctlForbidden', message: `Pod was rejected: ${forbidden}` };
}
