// Collects the first events of a stream with a deadline: how the contract suites read watches without hanging.

/** The first `n` items of `iterable` (fewer if it ends), failing after `timeoutMs` instead of hanging. */
export async function takeEvents<T>(iterable: AsyncIterable<T>, n: number, timeoutMs = 10_000): Promise<T[]> {
  const out: T[] = [];
  if (n === 0) return out;
  const iterator = iterable[Symbol.asyncIterator]();
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`watch delivered ${out.length} of ${n} events in ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    while (out.length < n) {
      const next = await Promise.race([iterator.next(), deadline]);
      if (next.done) break;
      out.push(next.value);
    }
  } finally {
    clearTimeout(timer);
  }
  return out;
}
