// The description of one API kind: how it is named, served, validated and printed.
import type * as v from 'valibot';
import type { KubeObject } from './meta.js';
import type { PatchMeta } from './patch-meta.js';
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

/** Reads stored objects, for admission checks that depend on other objects. */
export interface AdmissionLookup {
  /** The stored object, or undefined when there is none. */
  get(ref: { group: string; resource: string; namespace?: string; name: string }): Promise<KubeObject | undefined>;
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
  /** Groups of kinds `get CATEGORY` lists together (a CRD's names.categories). */
  categories?: readonly string[];
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
  /**
   * Checks against other stored objects (a Workflow's Tasks must name Functions that exist), run on
   * create and on spec updates after the schema and update rules; problems become a 422. Paths are
   * relative to the object (`spec.definition...`).
   */
  admit?(obj: KubeObject, lookup: AdmissionLookup): Promise<FieldProblem[]>;
  /** Which lists a strategic merge patch merges, and by which key (Kubernetes' patchStrategy and patchMergeKey); default: metadata's. */
  patchMeta?: PatchMeta;
  /** Columns between NAME and AGE in `get` tables. */
  columns?: readonly PrintColumn[];
  /** AGE right after NAME, before the kind's columns (as kubectl prints CertificateSigningRequests). */
  ageFirst?: boolean;
}

/** `apps/v1`, or `v1` for the core group. */
export function apiVersionOf(def: Pick<KindDefinition, 'group' | 'version'>): string {
  return def.group ? `${def.group}/${def.version}` : def.version;
}
