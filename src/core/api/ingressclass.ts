// IngressClass (networking.k8s.io/v1): names the controller that serves Ingresses of a class; the master makes minik8s' own, the cluster's default.
import * as v from 'valibot';
import type { KindDefinition } from './kind.js';
import { kindSchema } from './meta.js';

/** The annotation that makes a class the default for Ingresses naming none (Kubernetes' name). */
export const DEFAULT_CLASS_ANNOTATION = 'ingressclass.kubernetes.io/is-default-class';
/** The class the master creates, and the controller name the gateway answers to. */
export const MINIK8S_INGRESS_CLASS = 'minik8s';
export const MINIK8S_INGRESS_CONTROLLER = 'minik8s.io/gateway';

/** Kubernetes' rule for spec.controller: a domain-prefixed path, at most 250 characters. */
const CONTROLLER = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/[A-Za-z0-9/._~%!$&'()*+,;=:@-]+$/;

export const ingressClassSchema = kindSchema('networking.k8s.io/v1', 'IngressClass', {
  spec: v.optional(
    v.strictObject({
      controller: v.optional(
        v.pipe(
          v.string(),
          v.maxLength(250, 'must be no more than 250 characters'),
          v.regex(CONTROLLER, 'must be a domain-prefixed path (such as "acme.io/foo")'),
        ),
      ),
      parameters: v.optional(
        v.strictObject({
          apiGroup: v.optional(v.string()),
          kind: v.string(),
          name: v.string(),
          scope: v.optional(v.picklist(['Cluster', 'Namespace'])),
          namespace: v.optional(v.string()),
        }),
      ),
    }),
    {},
  ),
});
export type IngressClass = v.InferOutput<typeof ingressClassSchema>;

/** Whether the class carries the default-class annotation set to "true". */
export function isDefaultIngressClass(c: IngressClass): boolean {
  return c.metadata.annotations?.[DEFAULT_CLASS_ANNOTATION] === 'true';
}

/** The class the master creates at start when missing. */
export function minik8sIngressClass(): IngressClass {
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'IngressClass',
    metadata: { name: MINIK8S_INGRESS_CLASS, annotations: { [DEFAULT_CLASS_ANNOTATION]: 'true' } },
    spec: { controller: MINIK8S_INGRESS_CONTROLLER },
  } as IngressClass;
}

export const ingressClassKind: KindDefinition = {
  kind: 'IngressClass',
  group: 'networking.k8s.io',
  version: 'v1',
  resource: 'ingressclasses',
  singular: 'ingressclass',
  shortNames: [],
  namespaced: false,
  schema: ingressClassSchema,
  statusSubresource: false,
  validateUpdate(existing, next) {
    // As Kubernetes: a class's controller cannot change.
    const before = (existing as IngressClass).spec?.controller;
    const after = (next as IngressClass).spec?.controller;
    return before === after ? [] : [{ path: ['spec', 'controller'], reason: 'FieldValueInvalid', value: after ?? '', detail: 'field is immutable' }];
  },
  // kubectl's columns: NAME CONTROLLER PARAMETERS AGE.
  columns: [
    { name: 'CONTROLLER', value: (o) => (o as IngressClass).spec?.controller ?? '' },
    {
      name: 'PARAMETERS',
      value: (o) => {
        const p = (o as IngressClass).spec?.parameters;
        return p ? `${p.apiGroup ? `${p.apiGroup}/` : ''}${p.kind}/${p.name}` : '<none>';
      },
    },
  ],
};
