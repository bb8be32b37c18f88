/** SQL Server LIKE as the ConnectWise and Autotask simulators apply it (the examples of LIKE (Transact-SQL)). */
import { sqlBeginsWith, sqlContains, sqlEndsWith, sqlLike } from './sql-like';

describe('sqlLike', () => {
  it('matches the documented wildcard examples', () => {
    const cases: [string, string[], string[]][] = [
      ['[a-cdf]', ['a', 'b', 'c', 'd', 'f'], ['e', 'g']],
      ['[-acdf]', ['-', 'a', 'f'], ['b']],
      ['[[]', ['['], ['a']],
      [']', [']'], ['a']],
      ['abc[_]d%', ['abc_d', 'abc_de'], ['abcxd']],
      ['abc[def]', ['abcd', 'abce', 'abcf'], ['abcg']],
      ['[^1-9]', ['0', 'a'], ['5']],
      ['5[%]', ['5%'], ['55']],
      ['_ean', ['Dean', 'sean'], ['ean', 'Deann']],
    ];
    for (const [pattern, yes, no] of cases) {
      for (const v of yes) expect([pattern, v, sqlLike(pattern)(v)]).toEqual([pattern, v, true]);
      for (const v of no) expect([pattern, v, sqlLike(pattern)(v)]).toEqual([pattern, v, false]);
    }
    expect(sqlLike('A*', '%*')('abc')).toBe(true);
    expect(sqlLike('A*')('abc')).toBe(false);
  });

  it('a bracketed marker line is a one-character class, not the text; the bare marker is found', () => {
    const text = 'Teams Phone Standard [ref:msp-0a1b]';
    expect(sqlContains('[ref:msp-0a1b]')('nothing alike here: zzz')).toBe(true); // holds an "e"
    expect(sqlContains('[ref:msp-0a1b]')('xyz')).toBe(false);
    expect(sqlContains('msp-0a1b')(text)).toBe(true);
    expect(sqlContains('msp-0a1b')('Teams Phone Standard [ref:msp-0a1c]')).toBe(false);
    expect(sqlContains('MSP-0A1B')(text)).toBe(true);
    expect(sqlContains('[ref')('[ref')).toBe(false); // an unclosed class matches nothing
    expect(sqlBeginsWith('teams')(text)).toBe(true);
    expect(sqlEndsWith('0a1b]')(text)).toBe(true);
    expect(sqlContains('x')(null)).toBe(false);
  });
});
