/** A small map whose entries expire; used for hot-path lookups (key auth, tenant access). */
export class TtlCache<V> {
  private readonly map = new Map<string, { value: V; expires: number }>();
  /** Loads running now (getOrLoad), by key. */
  private readonly loading = new Map<string, Promise<V>>();
  /** Moves on at every clear and delete: a load that started before one is not kept. */
  private generation = 0;

  constructor(private readonly ttlMs: number, private readonly maxEntries = 10_000) {}

  get(key: string): V | undefined {
    const hit = this.map.get(key);
    if (!hit) return undefined;
    if (hit.expires < Date.now()) {
      this.map.delete(key);
      return undefined;
    }
    return hit.value;
  }
  set(key: string, value: V): void {
    if (this.map.size >= this.maxEntries) this.map.clear();
    this.map.set(key, { value, expires: Date.now() + this.ttlMs });
  }

  /**
   * The value of `key`, cached or from `load`. Callers that miss while a load of the key runs share it,
   * so an entry expiring under load costs one lookup, not one per request in flight. A load that a
   * `clear` or `delete` overtook answers its callers (they asked before the change) but is not kept:
   * the next caller loads again and sees the change.
   */
  getOrLoad(key: string, load: () => Promise<V>): Promise<V> {
    const hit = this.get(key);
    if (hit !== undefined) return Promise.resolve(hit);
    const running = this.loading.get(key);
    if (running) return running;
    const generation = this.generation;
    const loaded = load().then((value) => {
      if (this.generation === generation) this.set(key, value);
      return value;
    });
    this.loading.set(key, loaded);
    const done = () => { if (this.loading.get(key) === loaded) this.loading.delete(key); };
    loaded.then(done, done);
    return loaded;
  }

  delete(key: string): void {
    this.generation++;
    this.map.delete(key);
    this.loading.delete(key);
  }
  clear(): void {
    this.generation++;
    this.map.clear();
    this.loading.clear();
  }
}
