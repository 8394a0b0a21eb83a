// JSON comparison and a canonical serialisation (sorted keys): what hashes and "did it change" checks agree on.

type JsonObject = { [key: string]: unknown };

export function isPlainObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((x, i) => deepEqual(x, b[i]));
  if (isPlainObject(a) && isPlainObject(b)) {
    const ka = Object.keys(a);
    return ka.length === Object.keys(b).length && ka.every((k) => Object.hasOwn(b, k) && deepEqual(a[k], b[k]));
  }
  return false;
}

/** JSON with object keys sorted and undefined members dropped: the same value always gives the same text (stored annotations, template hashes). */
export function canonicalJson(value: unknown): string {
  const sort = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(sort);
    if (!isPlainObject(v)) return v;
    const out: JsonObject = {};
    for (const k of Object.keys(v).sort()) if (v[k] !== undefined) out[k] = sort(v[k]);
    return out;
  };
  return JSON.stringify(sort(value));
}
