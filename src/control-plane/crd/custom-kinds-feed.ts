// The API server's dynamic kinds: an informer on CustomResourceDefinitions adds each Established CRD's versions to the kind registry, and removes them when the CRD goes.
import { crdEstablished, crdKind, type CustomResourceDefinition } from '../../core/api/crd.js';
import { customKinds } from '../../core/api/crd-kinds.js';
import { setAddedKinds } from '../../core/api/registry.js';
import type { Informer } from '../../core/controller/informer.js';
import type { InformerFactory } from '../../core/controller/informer-factory.js';

export interface CustomKindsFeedOptions {
  informers: InformerFactory;
  log?: (message: string) => void;
}

/**
 * Serves custom kinds without a restart: discovery, the resource routes, OpenAPI and the
 * controllers' clients all read the one registry, so adding a CRD's kinds there is all it takes.
 * A CRD being deleted stays served until its objects are gone (its cleanup lists and deletes them).
 * Not leader-elected: every API server serves every Established CRD.
 */
export function feedCustomKinds(options: CustomKindsFeedOptions): Informer<CustomResourceDefinition> {
  const log = options.log ?? (() => {});
  const informer = options.informers.informer<CustomResourceDefinition>(crdKind);
  const served = new Map<string, string>();
  const sync = (crd: CustomResourceDefinition) => {
    const name = crd.metadata.name!;
    if (!crdEstablished(crd)) return;
    // Re-register only when what shapes the kinds changed (status writes happen often).
    const shape = JSON.stringify(crd.spec);
    if (served.get(name) === shape) return;
    try {
      setAddedKinds(name, customKinds(crd));
      served.set(name, shape);
    } catch (err) {
      log(`custom resource ${name}: not served: ${(err as Error).message}`);
    }
  };
  informer.addHandlers({
    onAdd: sync,
    onUpdate: (_old, crd) => sync(crd),
    onDelete: (crd) => {
      setAddedKinds(crd.metadata.name!, []);
      served.delete(crd.metadata.name!);
    },
  });
  return informer;
}
