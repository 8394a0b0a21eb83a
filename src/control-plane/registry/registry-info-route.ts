// GET /apis/minik8s.io/v1/registry: where the master's image registry listens, so `minik8s image import` pushes to the right port.
import type { Hono } from 'hono';
import { REGISTRY_INFO_PATH } from '../../core/api/activator-paths.js';
import { NotFoundError } from '../../core/errors.js';

export interface RegistryInfoRouteOptions {
  /** The registry's port; undefined when the master runs none (--no-registry). */
  registryPort: number | undefined;
}

/** Registered after authentication and authorization, like the activator's info route it mirrors. */
export function registerRegistryInfoRoute<E extends object>(app: Hono<E>, options: RegistryInfoRouteOptions): void {
  app.get(REGISTRY_INFO_PATH, (c) => {
    if (options.registryPort === undefined) throw new NotFoundError('this master runs no image registry (--no-registry)');
    return c.body(JSON.stringify({ apiVersion: 'minik8s.io/v1', kind: 'RegistryInfo', port: options.registryPort }), 200, {
      'content-type': 'application/json',
    });
  });
}
