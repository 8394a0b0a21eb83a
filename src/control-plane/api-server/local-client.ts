// The Client over the in-process object service: what the master's controllers use, with the same shapes as the HTTP client.
import type { KindDefinition } from '../../core/api/kind.js';
import type { KubeObject } from '../../core/api/meta.js';
import {
  createNamespace,
  type Client,
  type DeleteOptions,
  type ListOptions,
  type ObjectList,
  type ObjectRef,
  type WatchEvent,
  type WatchOptions,
  type WriteOptions,
} from '../../core/client/client.js';
import { BadRequestError } from '../../core/errors.js';
import type { ObjectService } from './object-service.js';

function body(object: unknown): Record<string, unknown> {
  if (typeof object !== 'object' || object === null || Array.isArray(object)) throw new BadRequestError('the request body must be a JSON object');
  return object as Record<string, unknown>;
}

export class LocalClient implements Client {
  readonly #service: ObjectService;

  /** `service` is usually a client view (`service.forClient(name)`), so that /metrics counts the calls under the component's name. */
  constructor(service: ObjectService) {
    this.#service = service;
  }

  get(def: KindDefinition, ref: ObjectRef): Promise<KubeObject> {
    return this.#service.get(def, ref.namespace, ref.name);
  }

  async list(def: KindDefinition, options: ListOptions = {}): Promise<ObjectList> {
    const { items, resourceVersion } = await this.#service.list(def, options.namespace, options);
    return { apiVersion: def.group ? `${def.group}/${def.version}` : def.version, kind: `${def.kind}List`, metadata: { resourceVersion }, items };
  }

  create(def: KindDefinition, object: unknown, options: { namespace?: string } = {}): Promise<KubeObject> {
    return this.#service.create(def, createNamespace(def, object, options.namespace), body(object));
  }

  replace(def: KindDefinition, ref: ObjectRef, object: unknown, options: WriteOptions = {}): Promise<KubeObject> {
    return this.#service.replace(def, ref.namespace, ref.name, body(object), options);
  }

  patch(def: KindDefinition, ref: ObjectRef, patch: unknown, options: WriteOptions = {}): Promise<KubeObject> {
    return this.#service.patch(def, ref.namespace, ref.name, body(patch), options);
  }

  delete(def: KindDefinition, ref: ObjectRef, options: DeleteOptions = {}): Promise<KubeObject> {
    return this.#service.delete(def, ref.namespace, ref.name, options);
  }

  async *watch(def: KindDefinition, options: WatchOptions = {}): AsyncGenerator<WatchEvent> {
    const resourceVersion = options.resourceVersion === '0' ? undefined : options.resourceVersion || undefined;
    for await (const event of this.#service.watch(def, options.namespace, { ...options, resourceVersion })) {
      yield { type: event.type, object: event.object };
    }
  }
}
