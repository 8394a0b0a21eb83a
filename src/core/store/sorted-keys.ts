// Binary search over sorted store keys: where a prefix's keys start in the memory store and the watch cache.

/** Index of the first element of sorted `keys` that is >= `key`. */
export function lowerBound(keys: readonly string[], key: string): number {
  let lo = 0;
  let hi = keys.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (keys[mid]! < key) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Index just past the last element of sorted `keys` that starts with `prefix`. */
export function prefixEndIndex(keys: readonly string[], prefix: string): number {
  if (prefix === '') return keys.length;
  // Every string starting with `prefix` sorts before the prefix with its last code unit raised by one.
  const bound = prefix.slice(0, -1) + String.fromCharCode(prefix.charCodeAt(prefix.length - 1) + 1);
  return lowerBound(keys, bound);
}
