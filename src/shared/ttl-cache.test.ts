import { TtlCache } from './ttl-cache';

function deferred<T>() {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => { resolve = res; reject = rej; });
  return { promise, resolve, reject };
}

describe('TtlCache.getOrLoad', () => {
  it('callers that miss while a load runs share it; the value is then cached until it expires', async () => {
    const cache = new TtlCache<string>(50);
    const d = deferred<string>();
    let loads = 0;
    const load = () => { loads++; return d.promise; };
    const waiting = Array.from({ length: 32 }, () => cache.getOrLoad('k', load));
    d.resolve('v');
    expect(await Promise.all(waiting)).toEqual(Array(32).fill('v'));
    expect(await cache.getOrLoad('k', async () => { loads++; return 'other'; })).toBe('v');
    expect(loads).toBe(1);
    await new Promise((r) => setTimeout(r, 60));
    expect(await cache.getOrLoad('k', async () => { loads++; return 'fresh'; })).toBe('fresh');
    expect(loads).toBe(2);
  });

  it('a load that a clear or delete overtook answers its callers but is not kept: the next caller sees the change', async () => {
    for (const change of [(c: TtlCache<string | null>) => c.clear(), (c: TtlCache<string | null>) => c.delete('key')]) {
      const cache = new TtlCache<string | null>(60_000);
      const before = deferred<string | null>();
      const asked = cache.getOrLoad('key', () => before.promise);
      change(cache); // e.g. the key was revoked while its lookup ran
      before.resolve('valid');
      expect(await asked).toBe('valid');
      expect(await cache.getOrLoad('key', async () => null)).toBeNull();
      expect(cache.get('key')).toBeNull();
    }
  });

  it('a failed load is not cached', async () => {
    const cache = new TtlCache<number>(60_000);
    await expect(cache.getOrLoad('k', async () => { throw new Error('database down'); })).rejects.toThrow('database down');
    expect(await cache.getOrLoad('k', async () => 7)).toBe(7);
  });
});
