// Test support for the reconcilers' shell tests: a Client and shared informers over one object service, wired as the master wires them.
import type { Client } from '../../core/client/client.js';
import { InformerFactory } from '../../core/controller/informer-factory.js';
import { LocalClient } from '../api-server/local-client.js';
import type { ObjectService } from '../api-server/object-service.js';

export interface ControllerFixture {
  client: Client;
  informers: InformerFactory;
  /** Starts the informers and the controllers built on them; resolves once the signal has stopped them all. */
  run(signal: AbortSignal, ...controllers: { start(signal: AbortSignal): Promise<unknown> }[]): Promise<void>;
}

/** Build the controllers with `client` and `informers`, then `run` them: a controller no longer starts its informers itself. */
export function controllerFixture(service: ObjectService): ControllerFixture {
  const client = new LocalClient(service);
  const informers = new InformerFactory({ client });
  return {
    client,
    informers,
    async run(signal, ...controllers) {
      await Promise.all([informers.start(signal), ...controllers.map((c) => c.start(signal))]);
    },
  };
}
