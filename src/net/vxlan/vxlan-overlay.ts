// The worker's VXLAN overlay: one device, and for every other node a route, a neighbour and an FDB entry, kept in step with the Node objects.
import { nodeKind, type Node } from '../../core/api/node.js';
import type { Client } from '../../core/client/client.js';
import { runController, type ReconcileResult } from '../../core/controller/controller.js';
import type { Informer } from '../../core/controller/informer.js';
import type { InformerFactory } from '../../core/controller/informer-factory.js';
import { WorkQueue } from '../../core/controller/work-queue.js';
import { formatIpv4Cidr, parseIpv4Cidr } from '../../core/api/ipv4.js';
import { formatNetCommand, runNetCommand, type NetRunner } from '../net-command.js';
import { overlayRules, syncOverlayIptables } from './overlay-iptables.js';
import {
  desiredOverlay,
  overlayCommands,
  overlayFieldsChanged,
  parseFdb,
  parseNeighbours,
  parseRoutes,
  PUBLIC_IP_ANNOTATION,
  vtepAddress,
  VTEP_MAC_ANNOTATION,
} from './overlay-plan.js';
import { ensureVxlanDevice, findParentInterface, type VxlanDeviceSpec } from './vxlan-device.js';

export const DEFAULT_VXLAN_DEVICE = 'minik8s.vx';
export const DEFAULT_VXLAN_VNI = 1;
export const DEFAULT_VXLAN_PORT = 8472;
/** Reconciled at least this often even when no Node changes: someone may have removed a route by hand. */
export const OVERLAY_RESYNC_MS = 30_000;

/** The one key of the overlay's queue: every change leads to one whole reconcile, and bursts collapse into one. */
const KEY = 'overlay';

export interface VxlanOverlayOptions {
  /** Writes this node's VTEP annotations. */
  client: Client;
  /** The worker's shared informers: the overlay follows the Nodes' informer, which the process starts. */
  informers: InformerFactory;
  nodeName: string;
  /** The node's address: VXLAN packets leave from it, and peers send to it. */
  nodeIP: string;
  podCIDR: string;
  /** All pods' range; undefined for a node credential from before the master sent it (then the /16 around podCIDR is assumed). */
  clusterCIDR?: string;
  device?: string;
  vni?: number;
  port?: number;
  resyncMs?: number;
  /** Runs ip, bridge and iptables (default: the real tools). */
  run?: NetRunner;
  log?: (message: string) => void;
}

/** The /16 holding a pod /24: the default cluster CIDR's size. */
export function assumedClusterCIDR(podCIDR: string): string {
  const range = parseIpv4Cidr(podCIDR);
  if (!range) throw new Error(`invalid pod CIDR "${podCIDR}"`);
  return formatIpv4Cidr({ base: range.base - (range.base % 2 ** 16), bits: 16 });
}

export class VxlanOverlay {
  readonly informer: Informer<Node>;
  readonly queue = new WorkQueue({ baseDelayMs: 500, maxDelayMs: 30_000 });
  readonly #o: VxlanOverlayOptions;
  readonly #run: NetRunner;
  readonly #log: (message: string) => void;
  readonly #deviceName: string;
  readonly #clusterCIDR: string;
  #spec: VxlanDeviceSpec | undefined;
  #mac: string | undefined;
  #lastSkipped = '';

  constructor(options: VxlanOverlayOptions) {
    this.#o = options;
    this.#run = options.run ?? runNetCommand;
    this.#log = options.log ?? (() => {});
    this.#deviceName = options.device ?? DEFAULT_VXLAN_DEVICE;
    this.#clusterCIDR = options.clusterCIDR ?? assumedClusterCIDR(options.podCIDR);
    if (!options.clusterCIDR) this.#log(`overlay: the master did not say its cluster CIDR; assuming ${this.#clusterCIDR}`);
    this.informer = options.informers.informer<Node>(nodeKind);
    const enqueue = () => this.queue.add(KEY);
    // Heartbeats change every Node every 10 s: only what the overlay reads is worth a reconcile.
    this.informer.addHandlers({
      onAdd: enqueue,
      onUpdate: (old, node) => {
        if (overlayFieldsChanged(old, node)) enqueue();
      },
      onDelete: enqueue,
    });
  }

  /** This node's VXLAN MAC (after setup). */
  get mac(): string | undefined {
    return this.#mac;
  }

  /**
   * The device, the iptables rules and this Node's VTEP annotations. Run before the kubelet starts,
   * so that a machine where the overlay cannot work stops the worker with the reason.
   */
  async setup(): Promise<void> {
    const parent = await findParentInterface(this.#run, this.#o.nodeIP);
    this.#spec = {
      name: this.#deviceName,
      vni: this.#o.vni ?? DEFAULT_VXLAN_VNI,
      port: this.#o.port ?? DEFAULT_VXLAN_PORT,
      localIP: this.#o.nodeIP,
      parent,
      address: vtepAddress(this.#o.podCIDR),
    };
    const changes = await this.#syncLocal();
    const s = this.#spec;
    this.#log(
      `overlay: vxlan ${s.name} (VNI ${s.vni}, UDP ${s.port}) on ${s.parent} ${s.localIP}, VTEP ${s.address} ${this.#mac}: ${changes.length ? changes.join(', ') : 'adopted as it was'}`,
    );
    await this.#publish(undefined);
  }

  /** Until `signal` aborts; the first reconcile waits for the Nodes' informer, which the process starts with the others. */
  async start(signal: AbortSignal): Promise<void> {
    if (!this.#spec) await this.setup();
    this.queue.add(KEY);
    await runController({ name: 'overlay', queue: this.queue, informers: [this.informer], reconcile: () => this.reconcile(), log: this.#log }, signal);
  }

  /** Level-triggered: the device and rules as they should be, the peers' entries as the Nodes say, our annotations published. */
  async reconcile(): Promise<ReconcileResult> {
    const spec = this.#spec!;
    for (const change of await this.#syncLocal()) this.#log(`overlay: ${change}`);

    const { state, skipped } = desiredOverlay({
      self: { name: this.#o.nodeName, podCIDR: this.#o.podCIDR, publicIP: this.#o.nodeIP },
      nodes: this.informer.list(),
    });
    const skippedText = skipped.map((s) => `${s.name}: ${s.reason}`).join('; ');
    if (skippedText !== this.#lastSkipped) {
      if (skippedText) this.#log(`overlay: not reaching ${skippedText}`);
      this.#lastSkipped = skippedText;
    }
    const dev = spec.name;
    const [routes, neighbours, fdb] = await Promise.all([
      this.#run({ tool: 'ip', args: ['-4', '-j', 'route', 'show', 'dev', dev] }),
      this.#run({ tool: 'ip', args: ['-4', '-j', 'neigh', 'show', 'dev', dev] }),
      this.#run({ tool: 'bridge', args: ['-j', 'fdb', 'show', 'dev', dev] }),
    ]);
    const commands = overlayCommands(dev, state, { routes: parseRoutes(routes), neighbours: parseNeighbours(neighbours), fdb: parseFdb(fdb) });
    const failures: string[] = [];
    // Each is tried: one peer's failure must not keep the others unreachable.
    for (const command of commands) {
      try {
        await this.#run(command);
        this.#log(`overlay: ${formatNetCommand(command)}`);
      } catch (err) {
        failures.push(err instanceof Error ? err.message : String(err));
      }
    }
    // Our own Node gone (deleted): there is nothing to annotate until the worker joins again.
    const self = this.informer.get(this.#o.nodeName);
    if (self) await this.#publish(self);
    if (failures.length) throw new Error(failures.join('; '));
    return { requeueAfterMs: this.#o.resyncMs ?? OVERLAY_RESYNC_MS };
  }

  /** Device and iptables; the MAC changes only when the device had to be made again. */
  async #syncLocal(): Promise<string[]> {
    const { mac, changes } = await ensureVxlanDevice(this.#run, this.#spec!);
    this.#mac = mac;
    changes.push(...(await syncOverlayIptables(this.#run, overlayRules({ clusterCIDR: this.#clusterCIDR, podCIDR: this.#o.podCIDR }))));
    return changes;
  }

  /** Writes the VTEP annotations on our own Node unless `node` (the cached one) already shows them. */
  async #publish(node: Node | undefined): Promise<void> {
    const wanted = { [VTEP_MAC_ANNOTATION]: this.#mac!, [PUBLIC_IP_ANNOTATION]: this.#o.nodeIP };
    const current = node?.metadata.annotations ?? {};
    if (node && Object.entries(wanted).every(([k, v]) => current[k] === v)) return;
    await this.#o.client.patch(nodeKind, { name: this.#o.nodeName }, { metadata: { annotations: wanted } });
  }
}
