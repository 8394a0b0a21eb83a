// The map-of-collections idiom in one place: the entry for a key, made and stored on first use.

/** What `getOrCreate` needs of a map: a `Map` or a `WeakMap`. */
export interface KeyedStore<K, V> {
  get(key: K): V | undefined;
  set(key: K, value: V): unknown;
}

/** The value under `key`, or `create()`'s, stored under `key` first when there was none. The map alone fixes `V` (so `() => new Map()` is typed by it). */
export function getOrCreate<K, V>(map: KeyedStore<K, V>, key: NoInfer<K>, create: () => NoInfer<V>): V {
  let value = map.get(key);
  if (value === undefined) {
    value = create();
    map.set(key, value);
  }
  return value;
}
