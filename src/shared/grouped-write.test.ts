import { GroupedWrite } from './grouped-write';

/** A statement that records what it was given and ends when the test says so. */
function recordingWrite() {
  const statements: string[][] = [];
  const ends: (() => void)[] = [];
  const fails = new Set<string>();
  const write = (rows: string[]) => new Promise<void>((resolve, reject) => {
    statements.push(rows);
    ends.push(() => (rows.some((r) => fails.has(r)) ? reject(new Error(`refused ${rows.join(',')}`)) : resolve()));
  });
  /** Ends the statements under way, then lets the writer start the next one. */
  const endAll = async () => { for (const end of ends.splice(0)) end(); await new Promise((r) => setImmediate(r)); };
  return { statements, write, endAll, fails };
}

const key = (row: string) => row.split(':')[0];

describe('GroupedWrite', () => {
  it('writes the first rows at once, and the rows of callers that come meanwhile together in the next statement', async () => {
    const w = recordingWrite();
    const grouped = new GroupedWrite(w.write, key);
    const first = grouped.add(['a:1']);
    expect(w.statements).toEqual([['a:1']]);
    const second = grouped.add(['b:1', 'c:1']);
    const third = grouped.add(['d:1']);
    expect(w.statements).toHaveLength(1);
    await w.endAll();
    await first;
    expect(w.statements).toEqual([['a:1'], ['b:1', 'c:1', 'd:1']]);
    await w.endAll();
    await Promise.all([second, third]);
    // Idle again: the next rows go at once.
    void grouped.add(['e:1']);
    expect(w.statements).toHaveLength(3);
  });

  it('never writes a row before an earlier write of the same row: it waits for the statement after', async () => {
    const w = recordingWrite();
    const grouped = new GroupedWrite(w.write, key);
    const done = [grouped.add(['a:1']), grouped.add(['b:1']), grouped.add(['b:2', 'c:2']), grouped.add(['c:3']), grouped.add(['d:1'])];
    for (let i = 0; i < 4; i++) await w.endAll();
    await Promise.all(done);
    expect(w.statements).toEqual([['a:1'], ['b:1', 'd:1'], ['b:2', 'c:2'], ['c:3']]);
  });

  it('when a statement of several callers fails, writes each caller\'s rows alone: only the caller of the bad row fails', async () => {
    const w = recordingWrite();
    const grouped = new GroupedWrite(w.write, key);
    const first = grouped.add(['a:1']);
    w.fails.add('x:1');
    const results = [grouped.add(['b:1']), grouped.add(['x:1']), grouped.add(['c:1'])].map((p) => p.then(() => 'written', (e: Error) => e.message));
    for (let i = 0; i < 5; i++) await w.endAll();
    await first;
    expect(await Promise.all(results)).toEqual(['written', 'refused x:1', 'written']);
    expect(w.statements).toEqual([['a:1'], ['b:1', 'x:1', 'c:1'], ['b:1'], ['x:1'], ['c:1']]);
  });

  it('puts no more rows in a statement than it may carry (a caller\'s own rows stay together)', async () => {
    const w = recordingWrite();
    const grouped = new GroupedWrite(w.write, key, 3);
    const done = [grouped.add(['a:1']), grouped.add(['b:1', 'c:1']), grouped.add(['d:1', 'e:1']), grouped.add(['f:1', 'g:1', 'h:1', 'i:1'])];
    for (let i = 0; i < 4; i++) await w.endAll();
    await Promise.all(done);
    expect(w.statements).toEqual([['a:1'], ['b:1', 'c:1'], ['d:1', 'e:1'], ['f:1', 'g:1', 'h:1', 'i:1']]);
  });
});
