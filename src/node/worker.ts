// The worker role: join (or reuse the node credential), the Docker provider, the Node's registration and heartbeat, and the kubelet, proxy, DNS and overlay over one set of shared informers.
import { nodeServiceAccountVolumes } from './kubelet/service-account-volume.js';
import { podVolumeDir } from '../runtime/docker-container-config.js';
import { setMaxListeners } from 'node:events';
import { rmSync, writeFileSync } from 'node:fs';
import { clusterDnsFile } from '../net/dns/host-resolv-conf.js';
import { join } from 'node:path';
import { ApiClient } from '../core/client/api-client.js';
import { InformerFactory } from '../core/controller/informer-factory.js';
import { assumedClusterCIDR, VxlanOverlay } from '../net/vxlan/vxlan-overlay.js';
import { DEFAULT_CLUSTER_DOMAIN } from '../net/dns/cluster-zone.js';
import { NodeDns } from './dns/node-dns.js';
import { podNetworkConfig } from '../core/api/ipv4.js';
import { DockerProvider } from '../runtime/docker-provider.js';
import type { WorkerConfig } from './worker-config.js';
import { Kubelet } from './kubelet/kubelet.js';
import { procNodeStats } from './kubelet/node-stats.js';
import { nodeLocalDnsEndpoints, ServiceProxy } from './proxy/proxy.js';
import { portInUseMessage, StartupError } from '../core/lifecycle/startup-error.js';
import { startFakeWorker } from './fake-nodes/fake-worker.js';
import { NodeAgent } from './agent/node-agent.js';
import { sourceAddressFor } from './agent/node-address.js';
import { obtainNodeCredential } from './agent/node-credential.js';
import { type RegistryTrust, trustRegistryCa } from '../runtime/docker-registry-trust.js';

export interface WorkerOptions {
  log?: (message: string) => void;
  /** Set when the master runs in the same process: where to join and with which token. */
  localMaster?: { server: string; joinToken: string };
}

function hostOf(server: string): string {
  const host = new URL(server).hostname;
  return host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
}

/** Runs the worker until `signal` aborts; resolves once the kubelet has stopped (pods keep running, as with a real kubelet). */
export async function startWorker(config: WorkerConfig, signal: AbortSignal, options: WorkerOptions = {}): Promise<void> {
  const log = options.log ?? ((m: string) => process.stderr.write(`${m}\n`));
  // The kubelet's, the overlay's and the node agent's watches and requests all listen on this one signal: more than Node's default 10 at once is normal.
  setMaxListeners(100, signal);
  const server = options.localMaster?.server ?? config.server;
  const joinToken = options.localMaster?.joinToken ?? config.joinToken;
  if (!server) throw new StartupError('the worker needs --server URL');

  const nodeIP =
    config.nodeIP ??
    (await sourceAddressFor(server).catch((err: Error) => {
      throw new StartupError(`cannot find this machine's address towards ${server} (${err.message}); pass --node-ip`, { cause: err });
    }));
  if (config.provider === 'fake') {
    await startFakeWorker({ config, server, joinToken, nodeIP, log }, signal);
    return;
  }
  const credential = await obtainNodeCredential({
    server,
    nodeName: config.name,
    joinToken,
    dataDir: config.dataDir,
    registration: { labels: config.labels, taints: config.taints },
    signal,
    log,
  });
  const client = new ApiClient({ server, token: credential.token, timeoutMs: 15_000, tls: { ca: credential.ca } });
  let registryTrust: RegistryTrust | undefined;
  try {
    // Unqualified image names come from the master's registry, on the host workers reach the master at.
    const imageRegistry = `${hostOf(server)}:${credential.registryPort ?? 5000}`;
    // Over TLS the registry's certificate is the cluster CA's: the engine trusts it by the CA this worker pinned at its join.
    if (credential.ca && credential.registryPort !== undefined && server.startsWith('https:')) {
      try {
        registryTrust = trustRegistryCa({ registry: imageRegistry, caPem: credential.ca, certsDir: config.dockerCertsDir });
      } catch (err) {
        log(`warning: cannot make the Docker engine trust the registry at ${imageRegistry} (${(err as Error).message}); pulls from it will fail`);
      }
    }
    // ClusterFirst pods ask the cluster DNS: at its service address, which the proxy leads to this node's server, or, with no proxy, at the server itself.
    const podNameserver = config.proxy === 'iptables' ? config.clusterDNS : podNetworkConfig(credential.podCIDR).gateway;
    // Recorded for `minik8s dns host enable`, which points the machine's own resolver at the same server.
    if (config.dns === 'on') writeFileSync(clusterDnsFile(config.dataDir), `${podNameserver}\n`);
    else rmSync(clusterDnsFile(config.dataDir), { force: true });
    const provider = new DockerProvider({
      dockerHost: config.dockerHost,
      nodeName: credential.nodeName,
      podCIDR: credential.podCIDR,
      bridgeName: config.bridgeName,
      // With the overlay, pods keep their addresses towards other nodes' pods; it masquerades only traffic leaving the cluster.
      ipMasquerade: config.overlay === 'none',
      rootDir: join(config.dataDir, 'kubelet'),
      imageRegistry,
      ...(config.dns === 'on' ? { clusterDNS: { nameserver: podNameserver, domain: DEFAULT_CLUSTER_DOMAIN } } : {}),
      log,
      signal,
    });
    const info = await provider.info().catch((err: Error) => {
      throw new StartupError(
        `cannot reach the Docker engine at ${config.dockerHost ?? process.env.DOCKER_HOST ?? 'unix:///var/run/docker.sock'}: ${err.message}`,
        { cause: err },
      );
    });
    log(
      `worker: node ${credential.nodeName} (${nodeIP}) on ${info.runtimeVersion}, pods on ${config.bridgeName} ${credential.podCIDR}, images from ${imageRegistry}`,
    );

    const agent = new NodeAgent({
      client,
      nodeName: credential.nodeName,
      nodeIP,
      kubeletPort: config.kubeletPort,
      labels: config.labels,
      info: () => provider.info(),
      log,
    });
    await agent.register();

    // One informer per resource for the whole worker: the proxy and the DNS follow the same Services and Endpoints. Started below, with the components.
    const informers = new InformerFactory({ client, log });

    // Before the kubelet, so that its first pods reach other nodes' pods; a machine where it cannot work stops the worker with the reason.
    const overlay =
      config.overlay === 'vxlan'
        ? new VxlanOverlay({ client, informers, nodeName: credential.nodeName, nodeIP, podCIDR: credential.podCIDR, clusterCIDR: credential.clusterCIDR, log })
        : undefined;
    await overlay?.setup().catch((err: Error) => {
      throw new StartupError(`cannot set up the pod overlay: ${err.message}`, { cause: err });
    });

    // Node-local cluster DNS on the pod bridge's gateway address, so the bridge is made first; a port or address problem stops the worker with the reason.
    let dns: NodeDns | undefined;
    if (config.dns === 'on') {
      const bridge = await provider.ensurePodNetwork().catch((err: Error) => {
        throw new StartupError(`cannot make the pod network for the cluster DNS: ${err.message}`, { cause: err });
      });
      dns = new NodeDns({ informers, address: bridge.gateway, clusterDNS: config.clusterDNS, upstreams: config.dnsUpstreams, log });
      await dns.listen().catch((err: NodeJS.ErrnoException) => {
        const why =
          err?.code === 'EADDRINUSE'
            ? portInUseMessage({ port: 53, what: `cluster DNS on ${bridge.gateway}`, flag: '--dns=off' })
            : `cannot serve the cluster DNS on ${bridge.gateway}:53: ${err.message}`;
        throw new StartupError(why, { cause: err });
      });
    }

    // Service rules: a machine where iptables cannot work stops the worker with the reason.
    const proxy =
      config.proxy === 'iptables'
        ? new ServiceProxy({
            informers,
            nodeName: credential.nodeName,
            clusterCIDR: credential.clusterCIDR ?? assumedClusterCIDR(credential.podCIDR),
            // 10.96.0.10:53 leads to this node's own DNS server, on the pod bridge's gateway address.
            localServiceEndpoints: dns ? nodeLocalDnsEndpoints(credential.podCIDR) : undefined,
            bridgeName: config.bridgeName,
            log,
          })
        : undefined;
    await proxy?.check().catch((err: Error) => {
      throw new StartupError(`cannot set up the service proxy: ${err.message}`, { cause: err });
    });

    const serviceAccountVolumes = nodeServiceAccountVolumes({
      client,
      caPem: credential.ca,
      volumeDir: (uid, volume) => podVolumeDir(join(config.dataDir, 'kubelet'), uid, volume),
    });
    const kubelet = new Kubelet({
      client,
      informers,
      nodeName: credential.nodeName,
      nodeIP,
      provider,
      podCIDR: credential.podCIDR,
      volumeRoot: join(config.dataDir, 'kubelet'),
      address: config.kubeletAddress,
      port: config.kubeletPort,
      ...(credential.kubeletCert && credential.kubeletKey && credential.ca
        ? { tls: { cert: credential.kubeletCert, key: credential.kubeletKey, ca: credential.ca } }
        : {}),
      log,
      nodeStats: procNodeStats({ cores: info.cpuCores }),
      // The kube-api-access volume: written where the runtime binds an emptyDir of the same name.
      preparePod: (pod) => serviceAccountVolumes.prepare(pod),
    });
    await Promise.all([
      kubelet.start(signal).catch((err: NodeJS.ErrnoException) => {
        if (err?.code !== 'EADDRINUSE') throw err;
        throw new StartupError(portInUseMessage({ port: config.kubeletPort, what: 'kubelet API', flag: '--kubelet-port' }), { cause: err });
      }),
      agent.start(signal),
      overlay?.start(signal),
      proxy?.start(signal),
      dns?.start(signal),
      informers.start(signal),
    ]);
    await provider.close();
  } finally {
    registryTrust?.remove();
    client.close();
  }
}
