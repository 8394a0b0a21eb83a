// Registers the kubelet's Node (its labels and status; taints came with the join), then every 10 s renews its Lease and writes the Node status only when it changed (or every 5 minutes), as the kubelet does.
import { readFileSync } from 'node:fs';
import { nodeKind, type Node } from '../../core/api/node.js';
import type { Client } from '../../core/client/client.js';
import type { RuntimeInfo } from '../../runtime/provider.js';
import { type Clock, sleep, systemClock } from '../kubelet/clock.js';
import { NodeLeaseRenewer, shouldReportStatus } from './node-heartbeat.js';
import { nodeMetaPatch, nodeStatus } from './node-status.js';

/** Kubernetes' default --node-status-update-frequency. */
export const HEARTBEAT_INTERVAL_MS = 10_000;

export interface NodeAgentOptions {
  client: Client;
  nodeName: string;
  nodeIP: string;
  kubeletPort: number;
  /** The --labels; those a node may not set on itself were sent with the join, which refuses them. */
  labels: Record<string, string>;
  /** Runtime facts, asked again at every heartbeat (the engine may have been upgraded). */
  info: () => Promise<RuntimeInfo>;
  /** How often the Lease is renewed and the status looked at (Kubernetes' nodeStatusUpdateFrequency, 10 s). */
  intervalMs?: number;
  /**
   * Heartbeat with a Lease (default). False is the old way, kept to measure what Leases save:
   * no Lease, and the whole status written at every heartbeat.
   */
  leases?: boolean;
  /** An unchanged status is written again this often (Kubernetes' nodeStatusReportFrequency, 5 minutes). */
  statusReportFrequencyMs?: number;
  /** Timers and the time (default the system's); tests step through minutes with a ManualClock. */
  clock?: Clock;
  now?: () => Date;
  log: (message: string) => void;
  /** Pods this node takes (default 110) and memory kept back from them (default 5% up to 1 GiB); a fake node reports its own. */
  maxPods?: number;
  reservedMemoryBytes?: number;
}

function readTrimmed(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8').trim() || undefined;
  } catch {
    return undefined;
  }
}

export class NodeAgent {
  readonly #o: NodeAgentOptions;
  #last: Node['status'] | undefined;
  #lastInfo: RuntimeInfo | undefined;
  /** A status write failed since the last one that got through. */
  #missed = false;
  /** When the status was last written (clock ms). */
  #lastReportAt: number | undefined;
  readonly #lease: NodeLeaseRenewer | undefined;
  readonly #clock: Clock;
  readonly #now: () => Date;
  readonly #machineID = readTrimmed('/etc/machine-id');
  readonly #bootID = readTrimmed('/proc/sys/kernel/random/boot_id');

  constructor(options: NodeAgentOptions) {
    this.#o = options;
    this.#clock = options.clock ?? systemClock;
    this.#now = options.now ?? (() => new Date(this.#clock.now()));
    this.#lease = options.leases === false ? undefined : new NodeLeaseRenewer({ client: options.client, nodeName: options.nodeName });
  }

  /** Labels and a first status; throws when the master refuses (the worker cannot run without its Node). */
  async register(): Promise<void> {
    const { client, nodeName } = this.#o;
    const info = await this.#o.info();
    const node = (await client.patch(
      nodeKind,
      { name: nodeName },
      nodeMetaPatch({ nodeName, architecture: info.architecture, labels: this.#o.labels }),
    )) as Node;
    this.#last = node.status;
    if (this.#lease) this.#lease.nodeUid = node.metadata.uid;
    await this.heartbeat(info);
  }

  /**
   * One heartbeat: renews the Lease, then writes the status if it changed, if the last write is
   * older than the report frequency, or if the Lease could not be renewed (the status then keeps
   * the node alive on a master that has no Leases). A runtime that does not answer makes the node
   * NotReady at once (with the last known capacity), rather than silent until the grace period ends.
   */
  async heartbeat(info?: RuntimeInfo): Promise<void> {
    const now = this.#now();
    let leaseError: unknown;
    if (this.#lease) {
      try {
        await this.#lease.renew(now);
      } catch (err) {
        leaseError = err;
      }
    }
    let runtimeError: string | undefined;
    if (info === undefined) {
      try {
        info = await this.#o.info();
      } catch (err) {
        if (this.#lastInfo === undefined) throw err;
        runtimeError = err instanceof Error ? err.message : String(err);
        info = this.#lastInfo;
      }
    }
    if (runtimeError === undefined) this.#lastInfo = info;
    if (this.#missed || this.#lease) {
      // What the master holds, as the kubelet reads its Node at every status update: the master may
      // have marked the node Unknown (while we could not post, or it missed our Lease), and that is
      // a change to write, with Ready's lastTransitionTime moving as it does in Kubernetes.
      try {
        this.#last = ((await this.#o.client.get(nodeKind, { name: this.#o.nodeName })) as Node).status;
      } catch (err) {
        this.#missed = true;
        throw leaseError ?? err;
      }
    }
    const status = nodeStatus({
      info,
      runtimeError,
      nodeIP: this.#o.nodeIP,
      // The node name, as kubelet's --hostname-override gives it: machines simulated in network namespaces share one UTS host name.
      hostname: this.#o.nodeName,
      kubeletPort: this.#o.kubeletPort,
      now,
      previous: this.#last,
      maxPods: this.#o.maxPods,
      reservedMemoryBytes: this.#o.reservedMemoryBytes,
      machineID: this.#machineID,
      bootID: this.#bootID,
    });
    const report =
      leaseError !== undefined ||
      shouldReportStatus({
        stored: this.#last,
        computed: status,
        lastReportAt: this.#lastReportAt,
        now: now.getTime(),
        leases: this.#lease !== undefined,
        reportFrequencyMs: this.#o.statusReportFrequencyMs,
      });
    if (report) {
      let node: Node;
      try {
        node = (await this.#o.client.patch(nodeKind, { name: this.#o.nodeName }, { status }, { subresource: 'status' })) as Node;
      } catch (err) {
        this.#missed = true;
        throw leaseError ?? err;
      }
      this.#last = node.status;
      this.#lastReportAt = now.getTime();
      this.#missed = false;
    }
    if (leaseError !== undefined) throw leaseError;
  }

  /** Heartbeats until `signal` aborts; a failed one is logged and the next is tried on time. */
  async start(signal: AbortSignal): Promise<void> {
    const interval = this.#o.intervalMs ?? HEARTBEAT_INTERVAL_MS;
    while (!signal.aborted) {
      if (!(await sleep(this.#clock, interval, signal))) break;
      try {
        await this.heartbeat();
      } catch (err) {
        this.#o.log(`worker: node heartbeat failed: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
  }
}
