import { OncePerForm } from './once-per-form';

describe('OncePerForm', () => {
  it('runs once per scope and form key; a repeat (even while the first runs) gets the same result', async () => {
    const once = new OncePerForm<number>();
    let runs = 0;
    const slow = () => new Promise<number>((r) => setTimeout(() => r(++runs), 20));
    const [a, b] = await Promise.all([once.run('s1', 'k1', slow), once.run('s1', 'k1', slow)]);
    expect([a, b]).toEqual([{ value: 1, repeated: false }, { value: 1, repeated: true }]);
    expect(await once.run('s1', 'k1', slow)).toEqual({ value: 1, repeated: true });
    // Another session with the same form key, or another form, runs again.
    expect(await once.run('s2', 'k1', slow)).toEqual({ value: 2, repeated: false });
    expect(await once.run('s1', 'k2', slow)).toEqual({ value: 3, repeated: false });
  });

  it('forgets a run that failed, so the same form can be sent again', async () => {
    const once = new OncePerForm<string>();
    await expect(once.run('s', 'k', () => Promise.reject(new Error('refused')))).rejects.toThrow('refused');
    expect(await once.run('s', 'k', async () => 'done')).toEqual({ value: 'done', repeated: false });
  });

  it('forgets results after their lifetime and keeps at most its bound', async () => {
    const short = new OncePerForm<number>(0);
    await short.run('s', 'k', async () => 1);
    await new Promise((r) => setTimeout(r, 2));
    expect(await short.run('s', 'k', async () => 2)).toEqual({ value: 2, repeated: false });
    const small = new OncePerForm<number>(60_000, 2);
    await small.run('s', 'a', async () => 1);
    await small.run('s', 'b', async () => 2);
    await small.run('s', 'c', async () => 3);
    expect(await small.run('s', 'a', async () => 4)).toEqual({ value: 4, repeated: false });
    expect(await small.run('s', 'c', async () => 5)).toEqual({ value: 3, repeated: true });
  });
});
