// The master's own IngressClass: `minik8s`, served by the gateway and annotated as the cluster's default, made at start if missing.
import { ingressClassKind, MINIK8S_INGRESS_CLASS, minik8sIngressClass } from '../../core/api/ingressclass.js';
import { AlreadyExistsError, NotFoundError } from '../../core/errors.js';
import type { ObjectService } from '../api-server/object-service.js';

export interface IngressClassOptions {
  service: ObjectService;
  log?: (message: string) => void;
}

/** Creates the class when absent; one that exists is the admin's (who may have taken its default annotation away) and stays as it is. */
export async function ensureIngressClass(options: IngressClassOptions): Promise<void> {
  try {
    await options.service.get(ingressClassKind, undefined, MINIK8S_INGRESS_CLASS);
    return;
  } catch (err) {
    if (!(err instanceof NotFoundError)) throw err;
  }
  try {
    await options.service.create(ingressClassKind, undefined, minik8sIngressClass() as unknown as Record<string, unknown>);
    options.log?.(`created ingressclass ${MINIK8S_INGRESS_CLASS} (the default class)`);
  } catch (err) {
    if (!(err instanceof AlreadyExistsError)) throw err;
  }
}
