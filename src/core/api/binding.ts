// Binding (v1): the body of POST pods/NAME/binding, which assigns a pod to a node. Never stored, so not in the kind registry.
import * as v from 'valibot';
import { InvalidError } from '../errors.js';
import { objectMetaSchema, subdomainName } from './meta.js';
import { causeFromIssue, invalidMessage } from './validate.js';

export const bindingSchema = v.strictObject({
  apiVersion: v.optional(v.literal('v1', 'must be "v1"')),
  kind: v.optional(v.literal('Binding', 'must be "Binding"')),
  metadata: v.optional(objectMetaSchema, {}),
  target: v.strictObject({
    // Kubernetes binds only to Nodes; an empty kind means Node, as in its ObjectReference defaulting.
    kind: v.optional(v.picklist(['Node', ''])),
    apiVersion: v.optional(v.string()),
    name: subdomainName,
    namespace: v.optional(v.string()),
    uid: v.optional(v.string()),
    resourceVersion: v.optional(v.string()),
    fieldPath: v.optional(v.string()),
  }),
});
export type Binding = v.InferOutput<typeof bindingSchema>;

/** Validates a Binding body: 422 with one cause per bad field, as for stored kinds. */
export function parseBinding(input: unknown, podName: string): Binding {
  const result = v.safeParse(bindingSchema, input);
  if (result.success) return result.output;
  const causes = result.issues.map((i) => causeFromIssue(i));
  throw new InvalidError(invalidMessage('Binding', podName, causes), { kind: 'Binding', group: '', name: podName, causes });
}
