/**
 * A bounded fan-out for the read side: one call per item, at most `width` in flight, the answers in the
 * items' order. Connector-neutral (the per-device and per-ticket reads of the connectors share it).
 */

/** `fn` over `items`, at most `width` at once (at least one), answers in order. */
export async function mapLimit<T, U>(items: readonly T[], width: number, fn: (t: T) => Promise<U>): Promise<U[]> {
  const out: U[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]);
    }
  };
  await Promise.all(Array.from({ length: Math.min(Math.max(1, width), items.length) }, worker));
  return out;
}
