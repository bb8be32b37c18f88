import { FollowingRuns } from './following-runs';

/** A task whose runs the test ends by hand, counting how many started and how many ran at once. */
function controlledTask() {
  const pending: { resolve: (v: number) => void; reject: (e: unknown) => void }[] = [];
  let started = 0;
  let running = 0;
  let mostAtOnce = 0;
  const task = () => new Promise<number>((resolve, reject) => {
    const n = ++started;
    running++;
    mostAtOnce = Math.max(mostAtOnce, running);
    pending.push({ resolve: () => { running--; resolve(n); }, reject: (e) => { running--; reject(e); } });
  });
  const tick = () => new Promise<void>((r) => setImmediate(r));
  return {
    task, tick,
    get started() { return started; },
    get mostAtOnce() { return mostAtOnce; },
    end: async (i: number, err?: Error) => { await tick(); if (err) pending[i].reject(err); else pending[i].resolve(i + 1); await tick(); },
  };
}

describe('FollowingRuns', () => {
  it('a burst of calls during one run costs one more run after it, never two at once, and every caller gets a run that began after it asked', async () => {
    const runs = new FollowingRuns<number, string[]>((a, b) => [...a, ...b]);
    const t = controlledTask();
    const first = runs.run('k', [], t.task);
    await t.tick();
    const during = Array.from({ length: 5 }, () => runs.run('k', [], t.task));
    await t.tick();
    expect(t.started).toBe(1);
    await t.end(0);
    expect(await first).toBe(1);
    expect(t.started).toBe(2);
    // A call while the follower runs waits for a third run.
    const late = runs.run('k', [], t.task);
    await t.end(1);
    expect(await Promise.all(during)).toEqual([2, 2, 2, 2, 2]);
    await t.end(2);
    expect(await late).toBe(3);
    expect(t.mostAtOnce).toBe(1);
    expect(runs.size).toBe(0);
  });

  it('keys are independent', async () => {
    const runs = new FollowingRuns<number, string[]>((a, b) => [...a, ...b]);
    const t = controlledTask();
    const a = runs.run('a', [], t.task);
    const b = runs.run('b', [], t.task);
    await t.tick();
    expect(t.started).toBe(2);
    await t.end(0);
    await t.end(1);
    expect((await Promise.all([a, b])).sort()).toEqual([1, 2]);
  });

  it('a failed run fails its own callers only; the run after it still goes', async () => {
    const runs = new FollowingRuns<number, string[]>((a, b) => [...a, ...b]);
    const t = controlledTask();
    const first = runs.run('k', [], t.task);
    const firstSettled = first.then(() => 'ok', (e: Error) => e.message);
    await t.tick();
    const second = runs.run('k', [], t.task);
    await t.end(0, new Error('vendor down'));
    expect(await firstSettled).toBe('vendor down');
    await t.end(1);
    expect(await second).toBe(2);
    expect(runs.size).toBe(0);
  });

  it('a task that throws at once is a rejected run, and the key is free again after it', async () => {
    const runs = new FollowingRuns<number, string[]>((a, b) => [...a, ...b]);
    await expect(runs.run('k', [], () => { throw new Error('bad'); })).rejects.toThrow('bad');
    await new Promise((r) => setImmediate(r));
    expect(runs.size).toBe(0);
    expect(await runs.run('k', [], async () => 7)).toBe(7);
  });

  it('the run callers share does what each of them asked: their requests combined', async () => {
    const runs = new FollowingRuns<string, string[]>((a, b) => [...a, ...b]);
    let release!: () => void;
    const first = runs.run('k', ['first'], (r) => new Promise((resolve) => { release = () => resolve(r.join('+')); }));
    await new Promise((r) => setImmediate(r));
    const task = async (r: string[]) => r.join('+');
    const joined = [runs.run('k', ['a'], task), runs.run('k', ['full'], task), runs.run('k', ['b'], task)];
    release();
    expect(await first).toBe('first');
    expect(await Promise.all(joined)).toEqual(['a+full+b', 'a+full+b', 'a+full+b']);
  });
});
