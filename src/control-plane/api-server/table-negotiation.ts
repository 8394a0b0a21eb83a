// Content negotiation for Table answers: whether a GET's Accept header asks for a meta.k8s.io Table (kubectl's get does), and how much of each object its rows carry.
import type { IncludeObject } from '../../core/api/table.js';
import { BadRequestError } from '../../core/errors.js';

export type TableVersion = 'meta.k8s.io/v1' | 'meta.k8s.io/v1beta1';

/**
 * The Table version the Accept header asks for first, or undefined when plain JSON comes first
 * (or is all it names). kubectl sends `application/json;as=Table;v=v1;g=meta.k8s.io,
 * application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json`.
 */
export function acceptedTable(accept: string | undefined): TableVersion | undefined {
  for (const range of (accept ?? '').split(',')) {
    const [type, ...params] = range.split(';').map((p) => p.trim());
    if (type !== 'application/json' && type !== '*/*' && type !== 'application/*') continue;
    const p = Object.fromEntries(params.map((kv) => kv.split('=').map((x) => x.trim()) as [string, string]));
    if (p.as === undefined) return undefined;
    if (p.as === 'Table' && p.g === 'meta.k8s.io' && (p.v === 'v1' || p.v === 'v1beta1')) return `meta.k8s.io/${p.v}`;
    // Another transformation (PartialObjectMetadata...) this server does not make: look further.
  }
  return undefined;
}

/** `includeObject` as Kubernetes reads it: None, Metadata (the default) or Object. */
export function parseIncludeObject(value: string | undefined): IncludeObject {
  if (value === undefined || value === '') return 'Metadata';
  if (value === 'None' || value === 'Metadata' || value === 'Object') return value;
  throw new BadRequestError(`includeObject: Unsupported value: "${value}": supported values: "None", "Metadata", "Object"`);
}
