/**
 * Kaseya BMS time logs are a start and end time on one StartDate: a span the service derives across a
 * UTC midnight is placed on the day it starts, ending at 23:59:59, and only more than a day is refused.
 * Every time here is fixed; none depends on when the test runs.
 */
import type { TimeEntryDraft } from '../write-types';
import { kaseyaBmsWriter } from './writer';

const HOUR = 3_600_000;
const draft = (start: Date, hours: number): TimeEntryDraft => ({ marker: 'msp-0123abcd', ticketRef: '5001', hours, billable: true, memberRef: null, start });
const bodyOf = (t: TimeEntryDraft) => kaseyaBmsWriter.previewTimeEntry(t)[0].body as Record<string, unknown>;
const span = (t: TimeEntryDraft) => {
  const b = bodyOf(t);
  return { StartDate: b.StartDate, StartTime: b.StartTime, EndTime: b.EndTime, Timespent: b.Timespent };
};

describe('Kaseya BMS time log span', () => {
  it('a span within one day is sent as it is', () => {
    const t = draft(new Date('2026-11-20T09:15:00.400Z'), 1.5);
    expect(kaseyaBmsWriter.checkTimeEntry(t)).toEqual([]);
    expect(span(t)).toEqual({ StartDate: '2026-11-20', StartTime: '09:15:00', EndTime: '10:45:00', Timespent: 1.5 });
  });

  it('23:30 for 1 h crosses midnight: placed on its first day, ending at 23:59:59', () => {
    const t = draft(new Date('2026-11-20T23:30:00Z'), 1);
    expect(kaseyaBmsWriter.checkTimeEntry(t)).toEqual([]);
    expect(span(t)).toEqual({ StartDate: '2026-11-20', StartTime: '22:59:59', EndTime: '23:59:59', Timespent: 1 });
  });

  it('23:00 for 1 h (ending exactly at midnight) never sends EndTime 00:00:00', () => {
    expect(span(draft(new Date('2026-11-20T23:00:00Z'), 1))).toEqual({ StartDate: '2026-11-20', StartTime: '22:59:59', EndTime: '23:59:59', Timespent: 1 });
  });

  it('1.25 h posted at 00:10 (the start derived from now, as the service does) lands on the day before, in the past', () => {
    const now = Date.parse('2026-11-21T00:10:00Z');
    const t = draft(new Date(now - 1.25 * HOUR), 1.25);
    expect(kaseyaBmsWriter.checkTimeEntry(t)).toEqual([]);
    expect(span(t)).toEqual({ StartDate: '2026-11-20', StartTime: '22:44:59', EndTime: '23:59:59', Timespent: 1.25 });
  });

  it('a whole day fits (00:00:00 to 23:59:59); more than 24 hours is refused naming hours, with no body built', () => {
    expect(span(draft(new Date('2026-11-20T10:00:00Z'), 24))).toEqual({ StartDate: '2026-11-20', StartTime: '00:00:00', EndTime: '23:59:59', Timespent: 24 });
    const long = draft(new Date('2026-11-20T10:00:00Z'), 24.5);
    expect(kaseyaBmsWriter.checkTimeEntry(long)).toEqual([{ field: 'hours', message: expect.stringContaining('at most 24 hours') }]);
    expect(() => bodyOf(long)).toThrow(/at most 24 hours/);
  });
});
