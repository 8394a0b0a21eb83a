// The worker on the fake provider: one fake node through the real kubelet (--provider=fake), or many through the fake-node host (--fake-nodes N).
import { ApiClient } from '../../core/client/api-client.js';
import { InformerFactory } from '../../core/controller/informer-factory.js';
import { FakeProvider } from '../../runtime/fake-provider.js';
import type { WorkerConfig } from '../worker-config.js';
import { Kubelet } from '../kubelet/kubelet.js';
import { portInUseMessage, StartupError } from '../../core/lifecycle/startup-error.js';
import { FAKE_NODE_LABEL, FakeNodeHost, fakeNodeInfo, fakeNodeNames } from './fake-nodes.js';
import { NodeAgent } from '../agent/node-agent.js';
import { obtainNodeCredential } from '../agent/node-credential.js';

export interface FakeWorkerOptions {
  config: WorkerConfig;
  server: string;
  joinToken?: string;
  nodeIP: string;
  log: (message: string) => void;
}

/** Runs the fake node(s) until `signal` aborts. No containers, no bridge, no overlay: pods report Running with an address of the node's /24. */
export async function startFakeWorker(options: FakeWorkerOptions, signal: AbortSignal): Promise<void> {
  const { config, server, joinToken, nodeIP, log } = options;
  const capacity = config.fake!.capacity;
  if (config.fake?.nodes !== undefined) {
    const host = new FakeNodeHost({
      server,
      joinToken,
      names: fakeNodeNames(config.name, config.fake.nodes),
      nodeIP,
      capacity,
      labels: config.labels,
      taints: config.taints,
      kubeletPort: config.kubeletPort,
      dataDir: config.dataDir,
      heartbeatIntervalMs: config.fake.heartbeatSeconds * 1000,
      log,
    });
    await host.start(signal);
    return;
  }

  // One fake node is a whole kubelet (its own pod watch, events, probes, the kubelet API) over the fake provider.
  const labels = { [FAKE_NODE_LABEL]: 'true', ...config.labels };
  const credential = await obtainNodeCredential({
    server,
    nodeName: config.name,
    joinToken,
    dataDir: config.dataDir,
    registration: { labels, taints: config.taints },
    signal,
    log,
  });
  const client = new ApiClient({ server, token: credential.token, timeoutMs: 15_000, tls: { ca: credential.ca } });
  try {
    const provider = new FakeProvider({ recordCalls: false, info: fakeNodeInfo(capacity) });
    log(`worker: node ${credential.nodeName} (${nodeIP}) on the fake provider, pods in ${credential.podCIDR}`);
    const agent = new NodeAgent({
      client,
      nodeName: credential.nodeName,
      nodeIP,
      kubeletPort: config.kubeletPort,
      labels,
      info: () => provider.info(),
      log,
      maxPods: capacity.pods,
      reservedMemoryBytes: 0,
      intervalMs: config.fake!.heartbeatSeconds * 1000,
    });
    await agent.register();
    const informers = new InformerFactory({ client, log });
    const kubelet = new Kubelet({
      client,
      informers,
      nodeName: credential.nodeName,
      nodeIP,
      provider,
      podCIDR: credential.podCIDR,
      address: config.kubeletAddress,
      port: config.kubeletPort,
      ...(credential.kubeletCert && credential.kubeletKey && credential.ca
        ? { tls: { cert: credential.kubeletCert, key: credential.kubeletKey, ca: credential.ca } }
        : {}),
      log,
    });
    await Promise.all([
      kubelet.start(signal).catch((err: NodeJS.ErrnoException) => {
        if (err?.code !== 'EADDRINUSE') throw err;
        throw new StartupError(portInUseMessage({ port: config.kubeletPort, what: 'kubelet API', flag: '--kubelet-port' }), { cause: err });
      }),
      agent.start(signal),
      informers.start(signal),
    ]);
  } finally {
    client.close();
  }
}
