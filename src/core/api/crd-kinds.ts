// The KindDefinitions a CustomResourceDefinition adds to the API: one per served version, with its schema, subresources and printer columns.
import type { CustomResourceDefinition, PrinterColumn, ScaleSubresource } from './crd.js';
import { customResourceSchema, type SchemaNode } from './crd-schema.js';
import type { KindDefinition, PrintColumn } from './kind.js';
import type { KubeObject } from './meta.js';
import { SCALE_SUBRESOURCE, type Scale } from './scale.js';
import { formatAge } from './table.js';

/** A custom kind: a KindDefinition plus what the CRD says beyond it. */
export interface CustomKindDefinition extends KindDefinition {
  /** The CRD's name (`foos.example.com`): every version's kind of one CRD shares it. */
  crdName: string;
  /** The version objects are stored in; reads through another version rewrite apiVersion (conversion None). */
  storageVersion: string;
  categories: readonly string[];
  scale?: ScaleSubresource;
  printerColumns: readonly PrinterColumn[];
  openAPIV3Schema: SchemaNode;
}

type Step = { field: string } | { index: number } | { filter: string[]; equals: unknown };

/** Parses the simple JSONPath of a printer column or scale path: `.status.replicas`, `.items[0]`, `.conditions[?(@.type=="Ready")].status`. */
export function parseSimplePath(path: string): Step[] {
  const steps: Step[] = [];
  const s = path
    .trim()
    .replace(/^\{(.*)\}$/, '$1')
    .replace(/^\$/, '');
  let i = 0;
  while (i < s.length) {
    if (s[i] === '.') {
      const m = /^[^.[]+/.exec(s.slice(i + 1));
      if (!m) throw new Error(`invalid JSONPath ${JSON.stringify(path)}`);
      steps.push({ field: m[0] });
      i += 1 + m[0].length;
    } else if (s[i] === '[') {
      const end = s.indexOf(']', s.startsWith('[?(', i) ? s.indexOf(')', i) : i);
      if (end < 0) throw new Error(`invalid JSONPath ${JSON.stringify(path)}`);
      const inner = s.slice(i + 1, end).trim();
      i = end + 1;
      const filter = /^\?\(@((?:\.[^.=!<>\s]+)+)\s*==\s*(.+)\)$/.exec(inner);
      if (filter) steps.push({ filter: filter[1]!.slice(1).split('.'), equals: JSON.parse(filter[2]!.trim().replace(/^'(.*)'$/, '"$1"')) });
      else if (/^-?\d+$/.test(inner)) steps.push({ index: Number(inner) });
      else if (/^(['"]).*\1$/.test(inner)) steps.push({ field: inner.slice(1, -1) });
      else throw new Error(`invalid JSONPath ${JSON.stringify(path)}`);
    } else throw new Error(`invalid JSONPath ${JSON.stringify(path)}`);
  }
  return steps;
}

/** The value at a simple path, or undefined. */
export function readPath(obj: unknown, path: string | Step[]): unknown {
  let cur: unknown = obj;
  for (const step of typeof path === 'string' ? parseSimplePath(path) : path) {
    if (cur === null || typeof cur !== 'object') return undefined;
    if ('field' in step) cur = (cur as Record<string, unknown>)[step.field];
    else if ('index' in step) cur = Array.isArray(cur) ? cur.at(step.index) : undefined;
    else {
      if (!Array.isArray(cur)) return undefined;
      cur = cur.find(
        (item) =>
          readPath(
            item,
            step.filter.map((field) => ({ field })),
          ) === step.equals,
      );
    }
  }
  return cur;
}

/** Writes `value` at a simple field path (`.spec.replicas`), making objects on the way. */
export function writePath(obj: Record<string, unknown>, path: string, value: unknown): void {
  const steps = parseSimplePath(path);
  let cur: Record<string, unknown> = obj;
  steps.forEach((step, i) => {
    if (!('field' in step)) throw new Error(`${path} is not a field path`);
    if (i === steps.length - 1) cur[step.field] = value;
    else {
      if (cur[step.field] === null || typeof cur[step.field] !== 'object') cur[step.field] = {};
      cur = cur[step.field] as Record<string, unknown>;
    }
  });
}

/** A printer column's cell, as kube-apiserver renders each type. */
function printerColumn(col: PrinterColumn, now: () => Date): PrintColumn {
  const steps = parseSimplePath(col.jsonPath);
  return {
    name: col.name.toUpperCase(),
    ...((col.priority ?? 0) > 0 ? { wide: true } : {}),
    value: (obj: KubeObject) => {
      const value = readPath(obj, steps);
      if (value === undefined || value === null) return '';
      if (col.type === 'date' && typeof value === 'string') {
        const t = Date.parse(value);
        return Number.isNaN(t) ? value : formatAge(now().getTime() - t);
      }
      return typeof value === 'object' ? JSON.stringify(value) : String(value);
    },
  };
}

/** The served versions of a CRD as kinds; none while it has no served version. */
export function customKinds(crd: CustomResourceDefinition, now: () => Date = () => new Date()): CustomKindDefinition[] {
  const { spec } = crd;
  const storage = spec.versions.find((ver) => ver.storage)?.name ?? spec.versions[0]?.name ?? 'v1';
  const served = spec.versions.filter((ver) => ver.served);
  const apiVersions = served.map((ver) => `${spec.group}/${ver.name}`);
  return served.map((ver) => {
    const openAPIV3Schema = (ver.schema?.openAPIV3Schema ?? { type: 'object', 'x-kubernetes-preserve-unknown-fields': true }) as SchemaNode;
    return {
      kind: spec.names.kind,
      group: spec.group,
      version: ver.name,
      resource: spec.names.plural,
      singular: spec.names.singular ?? spec.names.kind.toLowerCase(),
      shortNames: spec.names.shortNames ?? [],
      categories: spec.names.categories ?? [],
      namespaced: spec.scope === 'Namespaced',
      schema: customResourceSchema(openAPIV3Schema, apiVersions, spec.names.kind, `${spec.group}/${storage}`),
      statusSubresource: ver.subresources?.status !== undefined,
      ...(ver.subresources?.scale ? { scale: ver.subresources.scale, subresources: [SCALE_SUBRESOURCE] } : {}),
      crdName: crd.metadata.name!,
      storageVersion: storage,
      printerColumns: ver.additionalPrinterColumns ?? [],
      columns: (ver.additionalPrinterColumns ?? []).map((c) => printerColumn(c, now)),
      openAPIV3Schema,
    };
  });
}

/** True for a kind a CRD added. */
export function isCustomKind(def: KindDefinition): def is CustomKindDefinition {
  return typeof (def as Partial<CustomKindDefinition>).crdName === 'string';
}

/** A custom object as the autoscaling/v1 Scale its CRD's scale subresource describes (the paths say where replicas live). */
export function customScaleOf(def: CustomKindDefinition, obj: KubeObject): Scale {
  const paths = def.scale!;
  const number = (x: unknown) => (typeof x === 'number' ? x : 0);
  const selector = paths.labelSelectorPath ? readPath(obj, paths.labelSelectorPath) : undefined;
  const { name, namespace, uid, resourceVersion, creationTimestamp } = obj.metadata;
  return {
    apiVersion: 'autoscaling/v1',
    kind: 'Scale',
    metadata: { name, namespace, uid, resourceVersion, creationTimestamp },
    spec: { replicas: number(readPath(obj, paths.specReplicasPath)) },
    status: { replicas: number(readPath(obj, paths.statusReplicasPath)), ...(typeof selector === 'string' ? { selector } : {}) },
  };
}

/** The merge patch that sets a custom object's replicas at its specReplicasPath. */
export function customScalePatch(def: CustomKindDefinition, replicas: number, metadata: Record<string, unknown>): Record<string, unknown> {
  const patch: Record<string, unknown> = { metadata };
  writePath(patch, def.scale!.specReplicasPath, replicas);
  return patch;
}
