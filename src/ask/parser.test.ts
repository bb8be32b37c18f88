/**
 * The parser with a fixed clock: time windows at their edges (a Monday, January, a future month), the
 * strictness that refuses rather than guesses, and company short names.
 */
import { AskQuery } from './ask.schemas';
import { parseQuestion } from './parser';
import { findTimeWindows } from './time-windows';

const at = (iso: string) => new Date(iso);
const ctx = (now: string) => ({ companies: ['Contoso Ltd', 'Contoso Holdings', 'Fabrikam Inc', "Margie's Travel", 'City Power & Light'], applications: ['Google Chrome'], now: at(now) });
const window = (text: string, now: string) => {
  const w = findTimeWindows(` ${text} `, at(now)).windows[0];
  return w ? [w.since?.toISOString() ?? null, w.before?.toISOString() ?? null] : null;
};

describe('time windows (UTC, weeks from Monday)', () => {
  it.each([
    ['today', '2026-11-22T08:00:00Z', ['2026-11-22T00:00:00.000Z', null]],
    ['yesterday', '2026-11-22T08:00:00Z', ['2026-11-21T00:00:00.000Z', '2026-11-22T00:00:00.000Z']],
    // 2026-11-22 is a Sunday: its week began on Monday the 16th.
    ['this week', '2026-11-22T08:00:00Z', ['2026-11-16T00:00:00.000Z', null]],
    ['this week', '2026-11-16T00:00:00Z', ['2026-11-16T00:00:00.000Z', null]],
    ['last week', '2026-11-22T08:00:00Z', ['2026-11-09T00:00:00.000Z', '2026-11-16T00:00:00.000Z']],
    ['since monday', '2026-11-16T09:00:00Z', ['2026-11-16T00:00:00.000Z', null]],
    ['since friday', '2026-11-16T09:00:00Z', ['2026-11-13T00:00:00.000Z', null]],
    ['this month', '2026-01-05T00:00:00Z', ['2026-01-01T00:00:00.000Z', null]],
    ['last month', '2026-01-05T00:00:00Z', ['2025-12-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z']],
    ['in november', '2026-11-22T08:00:00Z', ['2026-11-01T00:00:00.000Z', '2026-12-01T00:00:00.000Z']],
    ['in december', '2026-11-22T08:00:00Z', ['2025-12-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z']],
    ['in feb 2024', '2026-11-22T08:00:00Z', ['2024-02-01T00:00:00.000Z', '2024-03-01T00:00:00.000Z']],
    ['last 7 days', '2026-11-22T08:00:00Z', ['2026-11-15T00:00:00.000Z', null]],
    ['in the past 2 weeks', '2026-11-22T08:00:00Z', ['2026-11-08T00:00:00.000Z', null]],
    ['since 2026-02-28', '2026-11-22T08:00:00Z', ['2026-02-28T00:00:00.000Z', null]],
  ])('%s at %s', (text, now, expected) => expect(window(text, now)).toEqual(expected));

  it('an impossible date is reported, not rolled over', () => {
    expect(findTimeWindows(' since 2026-02-30 ', at('2026-11-22T00:00:00Z')).invalid).toBe('since 2026-02-30');
  });
});

describe('parseQuestion', () => {
  const now = '2026-11-22T08:00:00Z';
  const ok = (q: string) => {
    const r = parseQuestion(q, ctx(now));
    if (!r.ok) throw new Error(`not parsed: ${q}: ${r.reason}`);
    expect(() => AskQuery.parse(r.query)).not.toThrow();
    return r.query;
  };
  const refused = (q: string) => {
    const r = parseQuestion(q, ctx(now));
    expect(r.ok).toBe(false);
    return r.ok ? '' : r.reason;
  };

  it('matches companies by full or short name, possessives and punctuation included', () => {
    expect(ok("How many of Fabrikam's tickets are open?").filters).toEqual({ company: 'Fabrikam Inc', status: 'open' });
    expect(ok("list tickets of margie's travel").filters.company).toBe("Margie's Travel");
    expect(ok('how many tickets does City Power & Light have').filters.company).toBe('City Power & Light');
    expect(ok('how many tickets does CONTOSO LTD have').filters.company).toBe('Contoso Ltd');
  });

  it('refuses a short name shared by two companies, an unknown company and two companies', () => {
    expect(refused('how many tickets does Contoso Holdings and Fabrikam have')).toMatch(/One company/);
    expect(refused('how many tickets does Acme have')).toMatch(/"acme"/);
  });

  it('refuses what it would otherwise have to guess', () => {
    expect(refused('how many tickets this week in november')).toMatch(/One time window/);
    expect(refused('how many open closed tickets')).toMatch(/two values of status/);
    expect(refused('top 5 tickets')).toMatch(/Top of what/);
    expect(refused('top 5 companies by tickets of Fabrikam Inc')).toMatch(/one company/);
    expect(refused('how many are there')).toMatch(/names no kind of record/);
  });

  it('top N, the most, newest N', () => {
    expect(ok('Which customer has the most critical tickets?')).toMatchObject({ aggregate: 'top', group_by: 'company', limit: 1, filters: { priority: 'critical' } });
    expect(ok('top 10 customers by devices')).toMatchObject({ aggregate: 'top', group_by: 'company', limit: 10 });
    expect(ok('last 3 tickets')).toMatchObject({ aggregate: 'list', order: 'newest', limit: 3 });
    expect(ok('the 4 oldest open tickets')).toMatchObject({ aggregate: 'list', order: 'oldest', limit: 4 });
    expect(ok('How many devices have Google Chrome installed?')).toMatchObject({ resource: 'applications', aggregate: 'count', filters: { name: 'Google Chrome' } });
  });
});
