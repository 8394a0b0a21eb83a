// What joining nodes deal with on the master, built over the store: join tokens, node credentials (watched into memory), pod CIDRs and the registrar that ties them together.
import type { Store } from '../../core/store/store.js';
import type { ObjectService } from '../api-server/object-service.js';
import { JoinTokenStore } from './join-tokens.js';
import { NodeCredentials } from './node-credentials.js';
import { NodeRegistrar } from './node-join.js';
import { PodCIDRAllocator } from './pod-cidr.js';

export interface NodeAccessOptions {
  store: Store;
  service: ObjectService;
  clusterCIDR: string;
  /** The node in the master's own process, which gets the control-plane role label when it joins. */
  controlPlaneNodeName?: string;
  /** Stops the credential watch. */
  signal: AbortSignal;
  log: (message: string) => void;
}

export interface NodeAccess {
  joinTokens: JoinTokenStore;
  credentials: NodeCredentials;
  registrar: NodeRegistrar;
  /** Resolves once the signal has aborted and the watch has ended. */
  stopped: Promise<void>;
}

/** Resolves once the node credentials are in memory, so that no kubelet is refused after a master restart. */
export async function startNodeAccess(options: NodeAccessOptions): Promise<NodeAccess> {
  const { store, signal, log } = options;
  const joinTokens = new JoinTokenStore({ store });
  const credentials = new NodeCredentials({ store, log });
  const stopped = credentials.start(signal);
  await Promise.race([
    credentials.whenSynced(),
    new Promise<void>((resolve) => {
      if (signal.aborted) resolve();
      else signal.addEventListener('abort', () => resolve(), { once: true });
    }),
  ]);
  const allocator = new PodCIDRAllocator({ store, clusterCIDR: options.clusterCIDR });
  const registrar = new NodeRegistrar({ service: options.service, allocator, credentials, controlPlaneNodeName: options.controlPlaneNodeName, log });
  return { joinTokens, credentials, registrar, stopped };
}
