// Joining nodes: a Node with a pod CIDR and a fresh credential per join, and both released once the Node is gone; one at a time, so two joins never race for a CIDR.
import { nodeKind, type Node, type Taint } from '../../core/api/node.js';
import { CONTROL_PLANE_ROLE_LABEL, nodeMaySetLabel } from '../../core/api/node-labels.js';
import { DNS1123_SUBDOMAIN } from '../../core/api/meta.js';
import { AlreadyExistsError, ConflictError, ForbiddenError, InvalidError, NotFoundError } from '../../core/errors.js';
import type { ObjectService } from '../api-server/object-service.js';
import type { NodeCredentials } from './node-credentials.js';
import type { PodCIDRAllocator } from './pod-cidr.js';

export interface JoinResult {
  nodeName: string;
  /** The node's new credential, in clear: shown once, stored only as a digest. */
  token: string;
  podCIDR: string;
  /** False when the Node existed already (a re-join). */
  created: boolean;
}

/** Checks a node name as Kubernetes checks object names (a DNS-1123 subdomain); 422 with one cause otherwise. */
export function validateNodeName(value: unknown, field = 'nodeName'): string {
  const fail = (reason: string, message: string, shown: string) =>
    new InvalidError(`JoinRequest "${shown}" is invalid: ${field}: ${message}`, {
      kind: 'nodes',
      name: shown,
      causes: [{ field, reason, message }],
    });
  if (value === undefined || value === null || value === '') throw fail('FieldValueRequired', 'Required value', '');
  if (typeof value !== 'string') throw fail('FieldValueTypeInvalid', `Invalid value: ${JSON.stringify(value).slice(0, 64)}: must be a string`, '');
  const shown = value.length > 64 ? `${value.slice(0, 64)}...` : value;
  if (value.length > 253) throw fail('FieldValueInvalid', `Invalid value: "${shown}": must be no more than 253 characters`, shown);
  if (!DNS1123_SUBDOMAIN.test(value)) {
    throw fail(
      'FieldValueInvalid',
      `Invalid value: "${shown}": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character`,
      shown,
    );
  }
  return value;
}

/** The range a Node has been given, if any. */
export function nodePodCIDR(node: Pick<Node, 'spec'> | undefined): string | undefined {
  return node?.spec?.podCIDR || node?.spec?.podCIDRs?.[0] || undefined;
}

/** What a worker brings to its join besides its name. */
export interface JoinDetails {
  /** The worker's node password (k3s'): the name is bound to it from the first join on. */
  password?: string;
  /** Labels for a new Node (the worker's --labels and its kubelet labels); only those a node may set on itself. */
  labels?: Record<string, string>;
  /** Taints for a new Node (the worker's --taints), as a kubelet's --register-with-taints. */
  taints?: Taint[];
}

export interface NodeRegistrarOptions {
  service: ObjectService;
  allocator: PodCIDRAllocator;
  credentials: NodeCredentials;
  /** The node running in the master's own process: its Node gets the control-plane role label. */
  controlPlaneNodeName?: string;
  log?: (message: string) => void;
}

export class NodeRegistrar {
  readonly #service: ObjectService;
  readonly #allocator: PodCIDRAllocator;
  readonly #credentials: NodeCredentials;
  readonly #log: (message: string) => void;
  readonly #controlPlaneNodeName: string | undefined;
  #tail: Promise<unknown> = Promise.resolve();

  constructor(options: NodeRegistrarOptions) {
    this.#service = options.service;
    this.#allocator = options.allocator;
    this.#credentials = options.credentials;
    this.#log = options.log ?? (() => {});
    this.#controlPlaneNodeName = options.controlPlaneNodeName;
  }

  /**
   * Creates the Node with the lowest free /24 (or keeps the one an existing Node has) and issues
   * a credential that replaces any earlier one. Joins and releases run one at a time: the pick
   * of "lowest free" must see every earlier allocation (the per-CIDR records would refuse a
   * duplicate anyway, but serialising spares the retries).
   */
  async join(nodeName: unknown, details: JoinDetails = {}): Promise<JoinResult> {
    const name = validateNodeName(nodeName);
    const forbidden = Object.keys(details.labels ?? {})
      .filter((k) => !nodeMaySetLabel(k))
      .sort();
    if (forbidden.length) {
      throw new ForbiddenError(`nodes "${name}" is forbidden: node "${name}" is not allowed to set the following labels: ${forbidden.join(', ')}`, {
        kind: 'nodes',
        name,
      });
    }
    return this.#serial(async () => {
      await this.#credentials.checkPassword(name, details.password);
      for (let attempt = 0; ; attempt++) {
        try {
          return await this.#join(name, details);
        } catch (err) {
          // Someone created the Node between our read and our create: join it as an existing one.
          if (err instanceof AlreadyExistsError && attempt < 2) continue;
          throw err;
        }
      }
    });
  }

  /** When the Node `nodeName` no longer exists, frees its pod CIDR and revokes its credential; undefined when it exists. */
  releaseIfGone(nodeName: string): Promise<{ freed: string[]; revoked: boolean } | undefined> {
    return this.#serial(async () => {
      if (await this.#getNode(nodeName)) return undefined;
      const freed = await this.#allocator.releaseNode(nodeName);
      const revoked = await this.#credentials.revoke(nodeName);
      if (freed.length || revoked) {
        this.#log(
          `node ${nodeName} is gone: ${[freed.length ? `freed pod CIDR ${freed.join(', ')}` : '', revoked ? 'revoked its credential' : ''].filter(Boolean).join(', ')}`,
        );
      }
      return { freed, revoked };
    });
  }

  /** Every node name that holds a pod CIDR or a credential (to check against the Nodes at start). */
  async namesWithState(): Promise<string[]> {
    const names = new Set([...(await this.#allocator.list()).map((r) => r.nodeName), ...(await this.#credentials.nodeNames())]);
    return [...names].sort();
  }

  async #join(name: string, details: JoinDetails): Promise<JoinResult> {
    const existing = await this.#getNode(name);
    if (existing?.metadata.deletionTimestamp) {
      throw new ConflictError(`node "${name}" is being deleted; join again once it is gone`, { kind: 'nodes', name });
    }
    let podCIDR = nodePodCIDR(existing);
    const onNode = podCIDR !== undefined;
    let fresh = false;
    if (podCIDR) {
      await this.#allocator.claim(podCIDR, name);
    } else {
      // A node joining again before its old Node's release keeps the range it had.
      podCIDR = await this.#allocator.heldBy(name);
      if (!podCIDR) {
        // Ranges set on Nodes by hand have no record: they count as taken too.
        const nodes = (await this.#service.list(nodeKind, undefined)).items as Node[];
        const inUse = nodes.flatMap((n) => [n.spec?.podCIDR, ...(n.spec?.podCIDRs ?? [])]).filter((c): c is string => Boolean(c));
        podCIDR = await this.#allocator.allocate(name, inUse);
        fresh = true;
      }
    }
    try {
      const spec = { podCIDR, podCIDRs: [podCIDR] };
      if (!existing) {
        // Labels and taints come with the first join only, as a kubelet registers them when it creates its Node; later an admin changes them.
        const labels = { ...details.labels, ...(name === this.#controlPlaneNodeName ? { [CONTROL_PLANE_ROLE_LABEL]: '' } : {}) };
        const taints = details.taints?.length ? { taints: details.taints } : {};
        const metadata = Object.keys(labels).length ? { name, labels } : { name };
        await this.#service.create(nodeKind, undefined, { apiVersion: 'v1', kind: 'Node', metadata, spec: { ...spec, ...taints } });
      } else if (!onNode) await this.#service.patch(nodeKind, undefined, name, { spec });
    } catch (err) {
      if (fresh) await this.#allocator.release(podCIDR, name).catch(() => {});
      throw err;
    }
    const token = await this.#credentials.issue(name, details.password);
    this.#log(`node ${name} ${existing ? 'joined again' : 'joined'} with pod CIDR ${podCIDR}`);
    return { nodeName: name, token, podCIDR, created: !existing };
  }

  async #getNode(name: string): Promise<Node | undefined> {
    try {
      return (await this.#service.get(nodeKind, undefined, name)) as Node;
    } catch (err) {
      if (err instanceof NotFoundError) return undefined;
      throw err;
    }
  }

  #serial<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.#tail.then(fn, fn);
    this.#tail = run.catch(() => {});
    return run;
  }
}
