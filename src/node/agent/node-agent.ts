// Registers the kubelet's Node (its labels and status; taints came with the join) and posts a heartbeat every 10 s, as the kubelet's node status loop does.
import { readFileSync } from 'node:fs';
import { nodeKind, type Node } from '../../core/api/node.js';
import type { Client } from '../../core/client/client.js';
import { abortableDelay } from '../../core/controller/informer.js';
import type { RuntimeInfo } from '../../runtime/provider.js';
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
  intervalMs?: number;
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
  /** A heartbeat failed since the last one that got through. */
  #missed = false;
  readonly #machineID = readTrimmed('/etc/machine-id');
  readonly #bootID = readTrimmed('/proc/sys/kernel/random/boot_id');

  constructor(options: NodeAgentOptions) {
    this.#o = options;
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
    await this.heartbeat(info);
  }

  /**
   * Posts the node's status now. A runtime that does not answer makes the node NotReady at
   * once (with the last known capacity), rather than silent until the master's grace period ends.
   */
  async heartbeat(info?: RuntimeInfo): Promise<void> {
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
    if (this.#missed) {
      // While we could not post, the master may have marked the node Unknown: read what it holds,
      // so that Ready's lastTransitionTime moves when we come back, as it does in Kubernetes.
      this.#last = ((await this.#o.client.get(nodeKind, { name: this.#o.nodeName })) as Node).status;
    }
    const status = nodeStatus({
      info,
      runtimeError,
      nodeIP: this.#o.nodeIP,
      // The node name, as kubelet's --hostname-override gives it: machines simulated in network namespaces share one UTS host name.
      hostname: this.#o.nodeName,
      kubeletPort: this.#o.kubeletPort,
      now: (this.#o.now ?? (() => new Date()))(),
      previous: this.#last,
      maxPods: this.#o.maxPods,
      reservedMemoryBytes: this.#o.reservedMemoryBytes,
      machineID: this.#machineID,
      bootID: this.#bootID,
    });
    let node: Node;
    try {
      node = (await this.#o.client.patch(nodeKind, { name: this.#o.nodeName }, { status }, { subresource: 'status' })) as Node;
    } catch (err) {
      this.#missed = true;
      throw err;
    }
    this.#last = node.status;
    this.#missed = false;
  }

  /** Heartbeats until `signal` aborts; a failed one is logged and the next is tried on time. */
  async start(signal: AbortSignal): Promise<void> {
    const interval = this.#o.intervalMs ?? HEARTBEAT_INTERVAL_MS;
    while (!signal.aborted) {
      await abortableDelay(interval, signal);
      if (signal.aborted) break;
      try {
        await this.heartbeat();
      } catch (err) {
        this.#o.log(`worker: node heartbeat failed: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
  }
}
