// Test support for the reconcilers' shell tests: shared informers over one Client, started with the controllers as the master starts them.
import type { Client } from '../../core/client/client.js';
import { InformerFactory } from '../../core/controller/informer-factory.js';

export interface ControllerFixture {
  client: Client;
  informers: InformerFactory;
  /** Starts the informers and the controllers built on them; resolves once the signal has stopped them all. */
  run(signal: AbortSignal, ...controllers: { start(signal: AbortSignal): Promise<unknown> }[]): Promise<void>;
}

/**
 * Build the controllers with `client` and `informers`, then `run` them: a controller no longer
 * starts its informers itself. Tests pass a LocalClient over their object service.
 */
export function controllerFixture(client: Client): ControllerFixture {
  const informers = new InformerFactory({ client });
  return {
    client,
    informers,
    async run(signal, ...controllers) {
      await Promise.all([informers.start(signal), ...controllers.map((c) => c.start(signal))]);
    },
  };
}
