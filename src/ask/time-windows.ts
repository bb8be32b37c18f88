/**
 * Time windows of the question family, in UTC whole days (documented on /ask/examples): a window is
 * [since, before) and either end may be open. Weeks start on Monday (ISO 8601).
 */
import { isDay } from '../shared/dates';

export interface TimeWindow {
  since: Date | null;
  before: Date | null;
  /** How the question said it, for the answer. */
  label: string;
}

export const MONTHS = ['january', 'february', 'march', 'april', 'may', 'june', 'july', 'august', 'september', 'october', 'november', 'december'];
export const WEEKDAYS = ['sunday', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday'];
const MONTH_ABBR = MONTHS.map((m) => m.slice(0, 3));

const DAY = 86_400_000;
const startOfDay = (d: Date) => new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate()));
const addDays = (d: Date, n: number) => new Date(d.getTime() + n * DAY);
const startOfMonth = (y: number, m: number) => new Date(Date.UTC(y, m, 1));
/** Monday 00:00 UTC of the week holding `d`. */
const startOfWeek = (d: Date) => addDays(startOfDay(d), -((d.getUTCDay() + 6) % 7));

export const TIME_WINDOW_FORMS = [
  'today', 'yesterday', 'this week', 'last week', 'this month', 'last month', 'this year',
  'last N days / weeks / months (also "past N days")', 'since Monday (any weekday: its latest occurrence, today included)',
  'in November, in Nov 2026 (the latest such month, this one included)', 'since 2026-11-01', 'before 2026-11-01',
];

const monthIndex = (word: string): number => {
  const full = MONTHS.indexOf(word);
  return full >= 0 ? full : MONTH_ABBR.indexOf(word);
};

interface Rule { re: RegExp; make(m: RegExpExecArray, now: Date): TimeWindow | null }

const RULES: Rule[] = [
  { re: /\b(?:in the |during the |over the )?(?:last|past) (\d{1,3}) (day|days|week|weeks|month|months)\b/, make: (m, now) => {
    const n = Number(m[1]);
    if (n < 1) return null;
    const today = startOfDay(now);
    const since = m[2].startsWith('day') ? addDays(today, -n)
      : m[2].startsWith('week') ? addDays(today, -7 * n)
        : new Date(Date.UTC(today.getUTCFullYear(), today.getUTCMonth() - n, today.getUTCDate()));
    return { since, before: null, label: `in the last ${n} ${m[2]}` };
  } },
  { re: /\btoday\b/, make: (_m, now) => ({ since: startOfDay(now), before: null, label: 'today' }) },
  { re: /\byesterday\b/, make: (_m, now) => ({ since: addDays(startOfDay(now), -1), before: startOfDay(now), label: 'yesterday' }) },
  { re: /\bthis week\b/, make: (_m, now) => ({ since: startOfWeek(now), before: null, label: 'this week' }) },
  { re: /\blast week\b/, make: (_m, now) => ({ since: addDays(startOfWeek(now), -7), before: startOfWeek(now), label: 'last week' }) },
  { re: /\bthis month\b/, make: (_m, now) => ({ since: startOfMonth(now.getUTCFullYear(), now.getUTCMonth()), before: null, label: 'this month' }) },
  { re: /\blast month\b/, make: (_m, now) => ({
    since: startOfMonth(now.getUTCFullYear(), now.getUTCMonth() - 1), before: startOfMonth(now.getUTCFullYear(), now.getUTCMonth()), label: 'last month',
  }) },
  { re: /\bthis year\b/, make: (_m, now) => ({ since: startOfMonth(now.getUTCFullYear(), 0), before: null, label: 'this year' }) },
  { re: new RegExp(`\\bsince (${WEEKDAYS.join('|')})\\b`), make: (m, now) => {
    const back = (now.getUTCDay() - WEEKDAYS.indexOf(m[1]) + 7) % 7;
    return { since: addDays(startOfDay(now), -back), before: null, label: `since ${m[1][0].toUpperCase()}${m[1].slice(1)}` };
  } },
  { re: new RegExp(`\\b(?:in|during) (${[...MONTHS, ...MONTH_ABBR].join('|')})(?: (\\d{4}))?\\b`), make: (m, now) => {
    const month = monthIndex(m[1]);
    let year = m[2] ? Number(m[2]) : now.getUTCFullYear();
    if (!m[2] && month > now.getUTCMonth()) year -= 1;
    return { since: startOfMonth(year, month), before: startOfMonth(year, month + 1), label: `in ${MONTHS[month][0].toUpperCase()}${MONTHS[month].slice(1)} ${year}` };
  } },
  { re: /\bsince (\d{4}-\d{2}-\d{2})\b/, make: (m) => dateWindow(m[1], 'since') },
  { re: /\bbefore (\d{4}-\d{2}-\d{2})\b/, make: (m) => dateWindow(m[1], 'before') },
];

function dateWindow(day: string, side: 'since' | 'before'): TimeWindow | null {
  if (!isDay(day)) return null;
  const d = new Date(`${day}T00:00:00Z`);
  return side === 'since' ? { since: d, before: null, label: `since ${day}` } : { since: null, before: d, label: `before ${day}` };
}

export interface WindowMatch {
  windows: TimeWindow[];
  /** The text with the window phrases blanked out. */
  rest: string;
  invalid: string | null;
}

/** Finds every time-window phrase in a lower-cased question. */
export function findTimeWindows(text: string, now: Date): WindowMatch {
  const windows: TimeWindow[] = [];
  let rest = text;
  let invalid: string | null = null;
  for (const rule of RULES) {
    for (;;) {
      const m = rule.re.exec(rest);
      if (!m) break;
      const w = rule.make(m, now);
      if (w) windows.push(w); else invalid = m[0];
      rest = rest.slice(0, m.index) + ' '.repeat(m[0].length) + rest.slice(m.index + m[0].length);
    }
  }
  return { windows, rest, invalid };
}

export function rfc(d: Date | null): string | null {
  return d ? d.toISOString().replace('.000Z', 'Z') : null;
}
