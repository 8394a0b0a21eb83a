// Starts the master's activator (and, when the master runs alone, its routes to pods) and turns listen failures into StartupErrors.
import type { InformerFactory } from '../../core/controller/informer-factory.js';
import { advertisedServerUrl } from '../master/announce.js';
import { portInUseMessage, StartupError } from '../../core/lifecycle/startup-error.js';
import type { Activator } from './activator.js';
import { PodRouteSync } from './pod-route-sync.js';

export interface StartActivatorOptions {
  activator: Activator;
  /** What the master's config says: where to listen, and whether to keep routes to pods. */
  config: { address: string; activatorAddress?: string; activatorPort: number; insecureHttp?: boolean; podRoutes: boolean; clusterCIDR: string };
  /** For the pod routes' Node informer. */
  informers: InformerFactory;
  signal: AbortSignal;
  log: (message: string) => void;
}

/**
 * The activator's URL as clients reach it: the listen address, or for a wildcard the machine's
 * address; https unless the master runs --insecure-http.
 */
export async function activatorBaseUrl(config: { address: string; activatorAddress?: string; activatorPort: number; insecureHttp?: boolean }): Promise<string> {
  return advertisedServerUrl(config.activatorAddress ?? config.address, config.activatorPort, config.insecureHttp ? 'http' : 'https');
}

export async function startActivator(o: StartActivatorOptions): Promise<{ url: string; stopped: Promise<void> }> {
  const address = o.config.activatorAddress ?? o.config.address;
  try {
    await o.activator.listen();
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE')
      throw new StartupError(portInUseMessage({ port: o.config.activatorPort, what: 'activator', flag: '--activator-port' }), { cause: err });
    if (code === 'EADDRNOTAVAIL')
      throw new StartupError(`cannot listen on ${address}: no interface of this machine has that address; check --activator-address`, { cause: err });
    if (code === 'EACCES')
      throw new StartupError(`not allowed to listen on port ${o.config.activatorPort}; run as root or pass an --activator-port above 1023`, { cause: err });
    throw err;
  }
  const url = await activatorBaseUrl(o.config);
  const parts: Promise<void>[] = [o.activator.start(o.signal)];
  if (o.config.podRoutes) {
    parts.push(new PodRouteSync({ informers: o.informers, clusterCIDR: o.config.clusterCIDR, log: o.log }).start(o.signal));
  }
  o.log(`activator: serving functions at ${url}/function/NAME and workflows at ${url}/workflow/NAME`);
  return { url, stopped: Promise.all(parts).then(() => {}) };
}
