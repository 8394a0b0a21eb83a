// The description of one API kind: how it is named, served, validated and printed.
import type * as v from 'valibot';
import type { KubeObject } from './meta.js';
import type { FieldProblem } from './validate.js';

/** A table column for `get` (like a CRD's additionalPrinterColumns). */
export interface PrintColumn {
  /** Header, upper case as kubectl prints it (NAME and AGE are added by the printer). */
  name: string;
  /** Only shown with `-o wide`. */
  wide?: boolean;
  value(obj: KubeObject): string;
}

/** A subresource as API discovery lists it: `pods/eviction` takes a policy/v1 Eviction. */
export interface SubresourceDefinition {
  name: string;
  kind: string;
  group?: string;
  version?: string;
  verbs: readonly string[];
}

export interface KindDefinition {
  kind: string;
  /** '' for the core group, e.g. 'apps', 'autoscaling', 'minik8s.io'. */
  group: string;
  version: string;
  /** Plural resource name used in paths, e.g. 'pods'. */
  resource: string;
  singular: string;
  shortNames: readonly string[];
  namespaced: boolean;
  /** Validates (and defaults) a whole object; its output is what gets stored. */
  schema: v.GenericSchema<unknown, KubeObject>;
  /** True if the kind has a `/status` subresource (spec writes then ignore status). */
  statusSubresource: boolean;
  /** Field selectors beyond metadata.name and metadata.namespace, e.g. 'spec.nodeName'. */
  fieldSelectors?: readonly string[];
  /** Subresources served by their own routes (binding, eviction, log, exec), listed in API discovery. */
  subresources?: readonly SubresourceDefinition[];
  /** Rules on what an update may change (immutable fields), judged on validated objects; problems become a 422. */
  validateUpdate?(existing: KubeObject, next: KubeObject): FieldProblem[];
  /** Columns between NAME and AGE in `get` tables. */
  columns?: readonly PrintColumn[];
}

/** `apps/v1`, or `v1` for the core group. */
export function apiVersionOf(def: Pick<KindDefinition, 'group' | 'version'>): string {
  return def.group ? `${def.group}/${def.version}` : def.version;
}
