import { dayField, isDay, parseDay, parseInstant, rfc3339 } from './dates';

describe('parseInstant', () => {
  it.each([
    '2026-11-22T10:00:00Z', '2026-11-22t10:00:00z', '2026-11-22T10:00:00.123456789+05:30', '2024-02-29T00:00:00Z',
    '0001-01-01T00:00:00Z', '9999-12-31T23:59:59Z', '9999-12-31T23:59:59.999999Z', '9999-12-31T23:59:59+14:00', '0001-01-01T23:59:59-23:59',
  ])('takes %s', (s) => {
    expect(parseInstant(s)).toEqual({ ok: true, value: Date.parse(s) });
  });

  it.each([
    '0000-01-01T00:00:00Z', '0000-02-29T00:00:00Z', '10000-01-01T00:00:00Z', '+010000-01-01T00:00:00Z', '-000001-01-01T00:00:00Z', '+002026-01-01T00:00:00Z',
    // Real instants whose UTC time falls outside 0001-9999.
    '9999-12-31T23:59:59-00:01', '9999-12-31T23:30:00-23:59', '0001-01-01T00:00:00+00:01', '0001-01-01T10:00:00+23:59',
  ])('refuses %s as out of range', (s) => {
    expect(parseInstant(s)).toEqual({ ok: false, problem: 'range' });
  });

  it.each([
    '2026-02-30T00:00:00Z', '2025-02-29T00:00:00Z', '2026-11-22T24:00:00Z', '2026-12-31T23:59:60Z', '2026-11-22T10:00:00+24:00',
    '2026-11-22T10:00:00+05:60', '2026-11-22 10:00:00Z', '2026-11-22T10:00:00', '2026-11-22', 'yesterday', '0000-02-30T00:00:00Z', '',
  ])('refuses %s as malformed', (s) => {
    expect(parseInstant(s)).toEqual({ ok: false, problem: 'format' });
  });
});

describe('parseDay', () => {
  it.each(['2026-11-01', '2024-02-29', '0001-01-01', '0099-12-31', '9999-12-31'])('takes %s', (s) => {
    expect(parseDay(s)).toEqual({ ok: true, value: s });
    expect(isDay(s)).toBe(true);
  });

  it.each(['0000-01-01', '10000-01-01', '+2026-01-01', '-0001-01-01', '99999-12-31'])('refuses %s as out of range', (s) => {
    expect(parseDay(s)).toEqual({ ok: false, problem: 'range' });
    expect(isDay(s)).toBe(false);
  });

  it.each(['2026-02-30', '2025-02-29', '2026-13-01', '2026-1-01', '2026-11-01T00:00:00Z', 'today', '0000-13-01', ''])('refuses %s as malformed', (s) => {
    expect(parseDay(s)).toEqual({ ok: false, problem: 'format' });
    expect(isDay(s)).toBe(false);
  });
});

describe('the request schemas', () => {
  it('name the problem of an instant: malformed or out of range', () => {
    expect(rfc3339.safeParse('2026-11-22T10:00:00Z').success).toBe(true);
    expect(rfc3339.safeParse('0000-01-01T00:00:00Z').error?.issues[0].message).toMatch(/out of range/);
    expect(rfc3339.safeParse('2026-02-30T00:00:00Z').error?.issues[0].message).toMatch(/RFC 3339/);
  });

  it('refuse a day out of range and leave a malformed one to the service that reads it', () => {
    const day = dayField();
    expect(day.safeParse('0000-01-01').error?.issues[0].message).toMatch(/out of range/);
    expect(day.safeParse('10000-01-01').error?.issues[0].message).toMatch(/out of range/);
    expect(day.safeParse('2026-02-30').success).toBe(true);
    expect(day.safeParse('a\u0000b').success).toBe(false);
  });
});
