// What a node may change on its own Node (Kubernetes' NodeRestriction admission), judged on the stored and the proposed object.
import { isIP } from 'node:net';
import type { Node } from '../../core/api/node.js';
import { nodeMaySetLabel } from '../../core/api/node-labels.js';

export interface NodeRestrictionInput {
  /** The node making the request (its credential's node name). */
  nodeName: string;
  /** The stored Node; undefined for a create. */
  old: Node | undefined;
  /** The Node as it would be stored after the write. */
  next: Node;
  /** 'status' for writes to the status subresource, which change nothing but status. */
  subresource?: string;
  /** IP addresses other Nodes report: a node claiming one would have the master call another machine in its name. */
  otherNodeAddresses: ReadonlySet<string>;
  /** Accept loopback node addresses: the master listens on loopback, so its nodes are on this machine and 127.0.0.1 is their true address. */
  allowLoopback?: boolean;
  /** Accept an address another node reports (fake nodes of one process share their machine's). */
  allowShared?: boolean;
}

/** The master's choices for node addresses (see NodeRestrictionInput). */
export interface NodeAddressPolicy {
  allowLoopback?: boolean;
  allowShared?: boolean;
}

const same = (a: unknown, b: unknown) => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);

/** The label keys whose value differs between two label maps (added, changed or removed), sorted. */
function changedLabels(a: Record<string, string> = {}, b: Record<string, string> = {}): string[] {
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  return [...keys].filter((k) => a[k] !== b[k]).sort();
}

/** Why an IPv4 or IPv6 literal cannot be a node's address for the master to call, or undefined when it can be. */
export function unusableNodeAddress(address: string, allowLoopback = false): string | undefined {
  const family = isIP(address);
  if (family === 0) {
    const host = address.toLowerCase().replace(/\.$/, '');
    if (!allowLoopback && (host === 'localhost' || host.endsWith('.localhost'))) return 'a loopback name';
    return undefined;
  }
  if (family === 4) {
    const [a, b] = address.split('.').map(Number) as [number, number];
    if (a === 127) return allowLoopback ? undefined : 'a loopback address';
    if (a === 0) return 'an unspecified address';
    if (a === 169 && b === 254) return 'a link-local address';
    if (a >= 224) return 'a multicast or reserved address';
    return undefined;
  }
  const v6 = address.toLowerCase();
  if (v6 === '::1') return allowLoopback ? undefined : 'a loopback address';
  if (v6 === '::') return 'an unspecified address';
  if (/^fe[89ab]/.test(v6)) return 'a link-local address';
  if (v6.startsWith('ff')) return 'a multicast address';
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(v6);
  if (mapped) return unusableNodeAddress(mapped[1]!, allowLoopback);
  return undefined;
}

function isLoopback(address: string): boolean {
  return address.startsWith('127.') || address === '::1' || address.toLowerCase() === 'localhost';
}

/** The reason a spec or metadata write is refused, in Kubernetes' words; undefined when allowed. */
function objectRestriction(input: NodeRestrictionInput): string | undefined {
  const { nodeName, old, next } = input;
  const who = `node "${nodeName}"`;
  const labels = changedLabels(old?.metadata.labels, next.metadata.labels).filter((k) => !nodeMaySetLabel(k));
  if (labels.length)
    return old ? `${who} is not allowed to modify labels: ${labels.join(', ')}` : `${who} is not allowed to set the following labels: ${labels.join(', ')}`;
  // A Node's taints are set when it joins (its --taints) and afterwards by admins only: a node that could clear them would draw the pods kept away from it.
  if (old && !same(old.spec?.taints, next.spec?.taints)) return `${who} is not allowed to modify taints`;
  if (!same(old?.spec?.unschedulable ?? false, next.spec?.unschedulable ?? false)) return `${who} is not allowed to modify unschedulable`;
  if (!same(old?.spec?.podCIDR, next.spec?.podCIDR) || !same(old?.spec?.podCIDRs, next.spec?.podCIDRs)) return `${who} is not allowed to modify pod CIDR`;
  if (!same(old?.spec?.providerID, next.spec?.providerID)) return `${who} is not allowed to modify providerID`;
  // A finalizer the node added would make an admin's delete wait for ever; owner references would have the garbage collector delete the Node.
  if (!same(old?.metadata.finalizers ?? [], next.metadata.finalizers ?? [])) return `${who} is not allowed to modify finalizers`;
  if (!same(old?.metadata.ownerReferences ?? [], next.metadata.ownerReferences ?? [])) return `${who} is not allowed to set OwnerReferences`;
  return undefined;
}

/** The reason a status write is refused; undefined when allowed. */
function statusRestriction(input: NodeRestrictionInput): string | undefined {
  const { nodeName, old, next } = input;
  const who = `node "${nodeName}"`;
  for (const { type, address } of next.status?.addresses ?? []) {
    const unusable = unusableNodeAddress(address, input.allowLoopback);
    if (unusable) return `${who} is not allowed to report ${type} ${address}: it is ${unusable}`;
    if (input.otherNodeAddresses.has(address) && !input.allowShared && !(input.allowLoopback && isLoopback(address))) {
      return `${who} is not allowed to report ${type} ${address}: another node reports that address`;
    }
  }
  // The kubelet's port is fixed at registration: a node moving it elsewhere would have the master call whatever listens there.
  const oldPort = old?.status?.daemonEndpoints?.kubeletEndpoint?.Port;
  const newPort = next.status?.daemonEndpoints?.kubeletEndpoint?.Port;
  if (oldPort && newPort !== oldPort) return `${who} is not allowed to change its kubelet port from ${oldPort} to ${newPort ?? 'none'}`;
  return undefined;
}

/**
 * Why this write of a node to a Node is refused, worded as Kubernetes' NodeRestriction words it
 * (`node "n1" is not allowed to modify taints`); undefined when the node may make it. Another
 * node's Node is never the node's to write.
 */
export function nodeRestriction(input: NodeRestrictionInput): string | undefined {
  const name = input.next.metadata.name ?? input.old?.metadata.name;
  if (name !== input.nodeName) return `node "${input.nodeName}" is not allowed to modify node "${name}"`;
  if (input.subresource === 'status') return statusRestriction(input);
  // A create sets status too; a spec write leaves the stored status as it is.
  return objectRestriction(input) ?? (input.old ? undefined : statusRestriction(input));
}
