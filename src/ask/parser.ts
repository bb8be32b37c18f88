/**
 * The default ask engine: a deterministic parser (no model) of a documented question family. It is
 * strict on purpose: every word must be understood (a keyword, a filler word, a company or application
 * name from the store, a number or a time window), otherwise the question is not answered. Ignoring a
 * word could silently drop a qualifier ("Acme", "Windows") and answer another question.
 */
import type { AskFilters, AskQuery, AskResource } from './ask.schemas';
import { findTimeWindows, rfc } from './time-windows';

export interface ParseContext {
  /** Company names in the store (tickets, devices, agreements, companies). */
  companies: string[];
  /** Application names in the store. */
  applications: string[];
  now: Date;
}

export type ParseResult =
  | { ok: true; query: AskQuery; companyLabel: string | null; windowLabel: string | null }
  | { ok: false; reason: string };

type Mark =
  | { resource: AskResource }
  | { aggregate: 'count' | 'top' | 'list' }
  | { filter: Partial<AskFilters> }
  | { group: 'company'; plural: boolean }
  | { order: 'newest' | 'oldest' | 'name' }
  | { most: true }
  | { filler: true };

const R = (resource: AskResource): Mark => ({ resource });
const F = (filter: Partial<AskFilters>): Mark => ({ filter });
const FILLER: Mark = { filler: true };

/** Phrases first (longest wins), then single words. */
const PHRASES: [string, Mark][] = [
  ['how many', { aggregate: 'count' }], ['number of', { aggregate: 'count' }], ['total number of', { aggregate: 'count' }],
  ['in progress', F({ status: 'in_progress' })], ['in-progress', F({ status: 'in_progress' })],
  ['needs attention', F({ needs_attention: true })], ['need attention', F({ needs_attention: true })],
  ['needing attention', F({ needs_attention: true })], ['requiring attention', F({ needs_attention: true })],
  ['require attention', F({ needs_attention: true })], ['with alerts', F({ needs_attention: true })],
  ['pending patches', F({ patches_pending: true })], ['patches pending', F({ patches_pending: true })],
  ['missing patches', F({ patches_pending: true })], ['need patching', F({ patches_pending: true })],
  ['needing patches', F({ patches_pending: true })], ['pending updates', F({ patches_pending: true })],
  ['no pending patches', F({ patches_pending: false })], ['fully patched', F({ patches_pending: false })],
  ['up to date', F({ patches_pending: false })],
  ['most recent', { order: 'newest' }], ['by name', { order: 'name' }],
];

const WORDS: Record<string, Mark> = {
  ticket: R('tickets'), tickets: R('tickets'), request: R('tickets'), requests: R('tickets'),
  device: R('devices'), devices: R('devices'), machine: R('devices'), machines: R('devices'), computer: R('devices'),
  computers: R('devices'), endpoint: R('devices'), endpoints: R('devices'), asset: R('devices'), assets: R('devices'),
  application: R('applications'), applications: R('applications'), app: R('applications'), apps: R('applications'),
  software: R('applications'), program: R('applications'), programs: R('applications'), installs: R('applications'),
  installations: R('applications'), installation: R('applications'), installed: R('applications'),
  incident: R('incidents'), incidents: R('incidents'), alert: R('incidents'), alerts: R('incidents'),
  agreement: R('agreements'), agreements: R('agreements'), contract: R('agreements'), contracts: R('agreements'),
  count: { aggregate: 'count' }, total: { aggregate: 'count' },
  top: { aggregate: 'top' }, most: { most: true }, busiest: { most: true },
  list: { aggregate: 'list' }, show: { aggregate: 'list' }, which: { aggregate: 'list' }, what: { aggregate: 'list' },
  open: F({ status: 'open' }), unresolved: F({ status: 'open' }), new: F({ status: 'new' }), waiting: F({ status: 'waiting' }),
  resolved: F({ status: 'resolved' }), closed: F({ status: 'closed' }),
  critical: F({ priority: 'critical' }), urgent: F({ priority: 'critical' }), emergency: F({ priority: 'critical' }),
  high: F({ priority: 'high' }), medium: F({ priority: 'medium' }), normal: F({ priority: 'medium' }), low: F({ priority: 'low' }),
  active: F({ agreement_status: 'active' }), cancelled: F({ agreement_status: 'cancelled' }), canceled: F({ agreement_status: 'cancelled' }),
  expired: F({ agreement_status: 'expired' }), inactive: F({ agreement_status: 'inactive' }),
  online: F({ online: true }), offline: F({ online: false }), down: F({ online: false }),
  unpatched: F({ patches_pending: true }),
  windows: F({ os: 'windows' }), mac: F({ os: 'macos' }), macs: F({ os: 'macos' }), macos: F({ os: 'macos' }),
  linux: F({ os: 'linux' }), ubuntu: F({ os: 'linux' }),
  company: { group: 'company', plural: false }, companies: { group: 'company', plural: true },
  client: { group: 'company', plural: false }, clients: { group: 'company', plural: true },
  customer: { group: 'company', plural: false }, customers: { group: 'company', plural: true },
  newest: { order: 'newest' }, latest: { order: 'newest' }, recent: { order: 'newest' }, oldest: { order: 'oldest' },
  alphabetical: { order: 'name' }, alphabetically: { order: 'name' },
};

/** Words that carry no meaning in this family. */
const FILLER_WORDS = (
  'a an the of for at in on with by to from me us our my we i you your is are was were be been being there do does did '
  + 'have has had having any all every currently right now still please tell give get find that those these it its '
  + 'and or per each run running runs install opened open created raised logged reported started priority '
  + 'status state p1 p2 p3 p4 many much than more ones one ready can could would see currently exist exists today s'
).split(' ');
for (const w of FILLER_WORDS) if (!(w in WORDS)) WORDS[w] = FILLER;

/** Legal suffixes dropped to give a company its short name ("Contoso Ltd" -> "contoso"). */
const SUFFIX = /\s+(ltd\.?|limited|inc\.?|incorporated|llc|llp|plc|co\.?|corp\.?|corporation|gmbh)$/;

export const PARSER_WORDS = [...PHRASES.map(([p]) => p), ...Object.keys(WORDS)].sort();

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const boundary = (alias: string) => new RegExp(`(?<![a-z0-9])${escape(alias)}(?:'s)?(?![a-z0-9])`);

interface NameHit { name: string; alias: string }

/**
 * The store names the question mentions (longest alias first); each hit is blanked out of the text.
 * An alias shared by two names is ambiguous.
 */
function matchNames(text: string, names: string[], short: boolean): { hits: NameHit[]; ambiguous: string[] | null; rest: string } {
  const byAlias = new Map<string, Set<string>>();
  for (const name of names) {
    const full = name.toLowerCase().trim();
    if (!full) continue;
    const aliases = [full];
    const shortened = full.replace(SUFFIX, '');
    if (short && shortened !== full && shortened.length >= 3) aliases.push(shortened);
    for (const a of aliases) {
      if (!byAlias.has(a)) byAlias.set(a, new Set());
      byAlias.get(a)!.add(name);
    }
  }
  const aliases = [...byAlias.keys()].sort((a, b) => b.length - a.length);
  const hits: NameHit[] = [];
  let rest = text;
  for (const alias of aliases) {
    const re = boundary(alias);
    const m = re.exec(rest);
    if (!m) continue;
    const owners = [...byAlias.get(alias)!];
    if (owners.length > 1) return { hits, ambiguous: owners.sort(), rest };
    hits.push({ name: owners[0], alias });
    rest = rest.slice(0, m.index) + ' '.repeat(m[0].length) + rest.slice(m.index + m[0].length);
  }
  return { hits, ambiguous: null, rest };
}

/** The marks of the phrases (longest first) and words of the text, and the words that are none. */
function marksOf(text: string): { marks: Mark[]; unknown: string[] } {
  const marks: Mark[] = [];
  for (const [phrase, mark] of [...PHRASES].sort((a, b) => b[0].length - a[0].length)) {
    const re = boundary(phrase);
    for (let m = re.exec(text); m; m = re.exec(text)) {
      marks.push(mark);
      text = text.slice(0, m.index) + ' '.repeat(m[0].length) + text.slice(m.index + m[0].length);
    }
  }
  const unknown: string[] = [];
  for (const word of text.replace(/[?!.,;:()]/g, ' ').split(/\s+/).filter(Boolean)) {
    const bare = word.replace(/^'+|'+$/g, '').replace(/'s$/, '');
    if (!bare) continue;
    const mark = WORDS[bare];
    if (mark) marks.push(mark); else unknown.push(bare);
  }
  return { marks, unknown };
}

interface Meaning {
  resources: Set<AskResource>;
  filters: AskFilters;
  aggregate: 'count' | 'top' | 'list' | null;
  group: { plural: boolean } | null;
  order: 'newest' | 'oldest' | 'name' | null;
  most: boolean;
}

/** What the marks ask for together; refused when two of them ask for different values of one filter. */
function meaningOf(marks: Mark[]): Meaning | { refused: string } {
  const resources = new Set<AskResource>();
  const filters: AskFilters = {};
  let aggregate: Meaning['aggregate'] = null;
  let group = null as { plural: boolean } | null;
  let order: Meaning['order'] = null;
  let most = false;
  for (const m of marks) {
    if ('resource' in m) resources.add(m.resource);
    else if ('aggregate' in m) aggregate = aggregate === 'count' || aggregate === 'top' ? aggregate : m.aggregate;
    else if ('filter' in m) {
      for (const [k, v] of Object.entries(m.filter)) {
        const prev = (filters as Record<string, unknown>)[k];
        if (prev !== undefined && prev !== v) return { refused: `The question asks for two values of ${k}.` };
        (filters as Record<string, unknown>)[k] = v;
      }
    } else if ('group' in m) group = { plural: (group?.plural ?? false) || m.plural };
    else if ('order' in m) order = m.order;
    else if ('most' in m) most = true;
  }
  return { resources, filters, aggregate, group, order, most };
}

export function parseQuestion(question: string, ctx: ParseContext): ParseResult {
  // A quoted text is an application or agreement name to search for, as written.
  let quoted = null as string | null;
  const unquoted = question.replace(/["\u201c\u201d]([^"\u201c\u201d]{1,200})["\u201c\u201d]/g, (_m, q: string) => { quoted = quoted ?? q.trim(); return ' '; });
  let text = ` ${unquoted.toLowerCase().replace(/[\u2018\u2019]/g, "'").replace(/\s+/g, ' ')} `;

  const companies = matchNames(text, ctx.companies, true);
  if (companies.ambiguous) return { ok: false, reason: `"${question}" names more than one company: ${companies.ambiguous.join(', ')}. Use the full name.` };
  if (new Set(companies.hits.map((h) => h.name)).size > 1) return { ok: false, reason: 'One company at a time, please.' };
  text = companies.rest;
  const company = companies.hits[0]?.name ?? null;

  const apps = matchNames(text, ctx.applications, false);
  text = apps.rest;
  const appName = quoted ?? (apps.hits.length === 1 ? apps.hits[0].name : null);
  if (!quoted && apps.hits.length > 1) return { ok: false, reason: 'One application at a time, please.' };

  const time = findTimeWindows(text, ctx.now);
  if (time.invalid) return { ok: false, reason: `"${time.invalid}" is not a date I can read (use YYYY-MM-DD).` };
  if (time.windows.length > 1) return { ok: false, reason: 'One time window at a time, please.' };
  text = time.rest;

  // Numbers: "top 5", "5 newest", "first 10".
  let limit = null as number | null;
  text = text.replace(/\b(?:top|first|last) (\d{1,3})\b|\b(\d{1,3}) (?=(?:newest|latest|oldest|most|biggest|largest)\b)/g, (m, a: string | undefined, b: string | undefined) => {
    limit = Number(a ?? b);
    return m.startsWith('top') ? ' top ' : m.startsWith('last') ? ' newest ' : ' ';
  });

  const { marks, unknown } = marksOf(text);
  if (unknown.length > 0) {
    return { ok: false, reason: `I do not understand ${unknown.map((w) => `"${w}"`).join(', ')}${company ? '' : ' (companies are matched against the company names in your data)'}.` };
  }

  const meaning = meaningOf(marks);
  if ('refused' in meaning) return { ok: false, reason: meaning.refused };
  const { resources, filters, group, most } = meaning;
  let { aggregate, order } = meaning;
  // "applications on devices of X", "incidents of devices": the device word qualifies the other.
  if (resources.size > 1 && (resources.has('applications') || resources.has('incidents'))) resources.delete('devices');
  if (resources.size === 0) return { ok: false, reason: 'The question names no kind of record I know (tickets, devices, applications, incidents, agreements).' };
  if (resources.size > 1) return { ok: false, reason: `One kind of record at a time, please (the question names ${[...resources].join(' and ')}).` };
  const resource = [...resources][0];

  // Incidents are the active alerts: "open"/"active" incidents are all of them.
  if (resource === 'incidents') {
    if (filters.status === 'open') delete filters.status;
    if (filters.agreement_status === 'active') delete filters.agreement_status;
  }
  if (company) filters.company = company;
  if (appName) filters.name = appName;
  const window = time.windows[0];
  if (window) {
    if (window.since) filters.opened_since = rfc(window.since);
    if (window.before) filters.opened_before = rfc(window.before);
  }

  let group_by: 'company' | 'name' | null = null;
  if (most || aggregate === 'top') {
    aggregate = 'top';
    group_by = group ? 'company' : resource === 'applications' ? 'name' : null;
    if (!group_by) return { ok: false, reason: 'Top of what? Ask for the top companies (or, for applications, the top applications).' };
    if (group_by === 'company' && company) return { ok: false, reason: 'A top-N of companies cannot also be about one company.' };
    limit = limit ?? (group && !group.plural ? 1 : 5);
  } else if (!aggregate) aggregate = 'list';
  if (aggregate !== 'list') order = null;
  const query: AskQuery = {
    resource, filters, aggregate, group_by,
    order, limit: aggregate === 'count' ? null : limit,
  };
  return { ok: true, query, companyLabel: company, windowLabel: window?.label ?? null };
}
