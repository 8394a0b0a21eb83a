// Service default/kubernetes at the range's first address, port 443 (https) -> the API servers, with its Endpoints: how in-cluster clients reach the API.
import { endpointsKind } from '../../core/api/endpoints.js';
import { serviceKind } from '../../core/api/service.js';
import { AlreadyExistsError, ApiError, NotFoundError } from '../../core/errors.js';
import type { ObjectService } from '../api-server/object-service.js';
import { API_SERVICE, apiServiceIP } from '../api-server/service-allocation.js';

export interface ApiServiceOptions {
  service: ObjectService;
  serviceCIDR: string;
  /** The address and port pods reach the API server at (the advertised URL's). */
  address: string;
  port: number;
  log?: (message: string) => void;
}

/** Makes the Service if missing and points its Endpoints at this API server (an admin's Service is left as it is). */
export async function ensureApiService(options: ApiServiceOptions): Promise<void> {
  const { service } = options;
  const { namespace, name } = API_SERVICE;
  try {
    await service.create(serviceKind, namespace, {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name, namespace, labels: { component: 'apiserver', provider: 'kubernetes' } },
      spec: {
        type: 'ClusterIP',
        clusterIP: apiServiceIP(options.serviceCIDR),
        ports: [{ name: 'https', port: 443, protocol: 'TCP', targetPort: options.port }],
      },
    });
    options.log?.(`created service ${namespace}/${name} at ${apiServiceIP(options.serviceCIDR)}`);
  } catch (err) {
    if (!(err instanceof AlreadyExistsError)) {
      // Not fatal: in-cluster clients are lost, nothing else.
      options.log?.(`warning: cannot create service ${namespace}/${name}: ${(err as Error).message}`);
      return;
    }
  }
  const endpoints = {
    apiVersion: 'v1',
    kind: 'Endpoints',
    metadata: { name, namespace },
    subsets: [{ addresses: [{ ip: options.address }], ports: [{ name: 'https', port: options.port, protocol: 'TCP' }] }],
  };
  try {
    const current = await service.get(endpointsKind, namespace, name);
    await service.replace(endpointsKind, namespace, name, {
      ...endpoints,
      metadata: { ...endpoints.metadata, resourceVersion: current.metadata.resourceVersion },
    });
  } catch (err) {
    if (err instanceof NotFoundError) {
      await service.create(endpointsKind, namespace, endpoints).catch((e: unknown) => {
        if (!(e instanceof AlreadyExistsError)) throw e;
      });
      return;
    }
    if (err instanceof ApiError) options.log?.(`warning: cannot update endpoints ${namespace}/${name}: ${err.message}`);
    else throw err;
  }
}
