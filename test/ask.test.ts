/**
 * Ask over the sandbox (docs/architecture.md, Device write and ask). Each question of the table has its expected structured
 * query and an expected answer worked out HERE from the fixture files (fixtures/sandbox-*), not from
 * the service: the fixture's status mapping, the priority number in the vendor's priority names, the
 * RMM's organisations, alerts and patch rows. Every cited record must exist in the list reads the
 * caller gets, and no record of the other tenant is ever cited.
 */
import fs from 'node:fs';
import path from 'node:path';
import { AskService } from '../src/ask/ask.service';
import { startTestService, type TestService } from './support/service';

let svc: TestService;
beforeAll(async () => { svc = await startTestService(); }, 120_000);
afterAll(async () => { await svc?.close(); });

// ---------------------------------------------------------------- the fixtures, read independently
const FIX = path.join(__dirname, '..', 'fixtures');
const read = (p: string): any => JSON.parse(fs.readFileSync(path.join(FIX, p), 'utf8'));
type Tenant = 'alpha' | 'beta';

interface Tk { id: string; company: string | null; status: string | null; priority: string | null; opened: number }
interface Dv { id: string; hostname: string; company: string | null; online: boolean; attention: boolean; pending: number; os: string }
interface Inc { id: string; company: string | null; opened: number }
interface App { id: string; name: string; company: string | null; installed: string }
interface Agr { id: string; name: string; company: string | null; status: string; start: string }
interface Model { tickets: Tk[]; devices: Dv[]; incidents: Inc[]; applications: App[]; agreements: Agr[] }

const PRIORITY_BY_NUMBER = ['critical', 'high', 'medium', 'low'];
const priorityOf = (name: string | undefined) => {
  const m = /(?:priority |p)(\d)/i.exec(name ?? '');
  return m ? PRIORITY_BY_NUMBER[Number(m[1]) - 1] ?? null : null;
};

function rmm(slug: string) {
  const orgs = new Map<number, string>(read(`${slug}/ninjaone/organizations.json`).map((o: any) => [o.id, o.name]));
  const alerts: any[] = read(`${slug}/ninjaone/alerts.json`);
  const alerting = new Set(alerts.map((a) => a.deviceId));
  // A patch waits until installed; the MSP's REJECTED ones never will be.
  const pending = new Map<number, number>();
  for (const p of read(`${slug}/ninjaone/os-patches.json`)) if (p.status !== 'REJECTED' && p.status !== 'INSTALLED') pending.set(p.deviceId, (pending.get(p.deviceId) ?? 0) + 1);
  const raw: any[] = read(`${slug}/ninjaone/devices.json`);
  const companyOfDevice = new Map(raw.map((d) => [d.id, orgs.get(d.organizationId) ?? null]));
  const devices: Dv[] = raw.map((d) => ({
    id: String(d.id), hostname: d.systemName, company: orgs.get(d.organizationId) ?? null, online: d.offline !== true,
    attention: alerting.has(d.id), pending: pending.get(d.id) ?? 0, os: d.os?.name ?? '',
  }));
  const incidents: Inc[] = alerts.map((a) => ({ id: a.uid, company: companyOfDevice.get(a.deviceId) ?? null, opened: a.createTime * 1000 }));
  const applications: App[] = read(`${slug}/ninjaone/software.json`).map((s: any) => ({
    id: `${s.deviceId}:${s.name}:${s.version ?? ''}`, name: s.name, company: companyOfDevice.get(s.deviceId) ?? null, installed: String(s.installDate).slice(0, 10),
  }));
  return { devices, incidents, applications };
}

/** The tenant's Datto RMM records (beta runs it beside NinjaOne): sites are companies, open alerts incidents. */
function dattoRmm(slug: string) {
  const raw: any[] = read(`${slug}/dattormm/devices.json`).filter((d: any) => d.deleted !== true);
  const open: any[] = read(`${slug}/dattormm/alerts.json`).filter((a: any) => !a.resolved);
  const alerting = new Set(open.map((a) => a.alertSourceInfo.deviceUid));
  const companyOfDevice = new Map(raw.map((d) => [d.uid, d.siteName ?? null]));
  const devices: Dv[] = raw.map((d) => ({
    id: d.uid, hostname: d.hostname, company: d.siteName ?? null, online: d.online === true,
    attention: alerting.has(d.uid), pending: d.patchManagement?.patchesApprovedPending ?? 0, os: d.operatingSystem ?? '',
  }));
  const incidents: Inc[] = open.map((a) => ({ id: a.alertUid, company: companyOfDevice.get(a.alertSourceInfo.deviceUid) ?? null, opened: Date.parse(a.timestamp) }));
  const applications: App[] = read(`${slug}/dattormm/software.json`).flatMap((s: any) => s.software.map((x: any) => ({
    id: `${s.deviceUid}:${x.name}:${x.version ?? ''}`, name: x.name, company: companyOfDevice.get(s.deviceUid) ?? null, installed: '',
  })));
  return { devices, incidents, applications };
}

function alphaModel(): Model {
  const mapping = read('sandbox-alpha/connectwise/_mapping.json').statusMapping;
  const raw = [...read('sandbox-alpha/connectwise/tickets.json'), ...read('sandbox-alpha/connectwise/project_tickets.json')];
  const tickets: Tk[] = raw.map((t) => ({
    id: String(t.id), company: t.company?.name ?? null, status: mapping[t.status?.name] ?? (t.closedFlag ? 'closed' : null),
    priority: priorityOf(t.priority?.name), opened: Date.parse(t._info.dateEntered),
  }));
  const agreements: Agr[] = read('sandbox-alpha/connectwise/agreements.json').map((a: any) => ({
    id: String(a.id), name: a.name, company: a.company?.name ?? null, status: String(a.agreementStatus).toLowerCase(), start: String(a.startDate).slice(0, 10),
  }));
  return { tickets, agreements, ...rmm('sandbox-alpha') };
}

function betaModel(): Model {
  const mapping = read('sandbox-beta/halopsa/_mapping.json').statusMapping;
  const statusName = new Map(read('sandbox-beta/halopsa/statuses.json').map((s: any) => [s.id, s.name]));
  const priorityName = new Map(read('sandbox-beta/halopsa/priorities.json').map((p: any) => [p.priorityid, p.name]));
  const tickets: Tk[] = read('sandbox-beta/halopsa/tickets.json').map((t: any) => ({
    id: String(t.id), company: t.client_name, status: mapping[statusName.get(t.status_id) as string] ?? null,
    priority: priorityOf(priorityName.get(t.priority_id) as string), opened: Date.parse(`${t.dateoccurred}Z`),
  }));
  const agreements: Agr[] = read('sandbox-beta/halopsa/contracts.json').map((c: any) => ({
    id: String(c.id), name: c.ref, company: c.client_name, status: String(c.contract_status).toLowerCase(), start: String(c.start_date).slice(0, 10),
  }));
  const ninja = rmm('sandbox-beta');
  const datto = dattoRmm('sandbox-beta');
  return {
    tickets, agreements, devices: [...ninja.devices, ...datto.devices], incidents: [...ninja.incidents, ...datto.incidents],
    applications: [...ninja.applications, ...datto.applications],
  };
}

const MODELS: Record<Tenant, Model> = { alpha: alphaModel(), beta: betaModel() };

// ---------------------------------------------------------------- time windows, worked out here
const NOW = new Date();
const DAY = 86_400_000;
const today = Date.UTC(NOW.getUTCFullYear(), NOW.getUTCMonth(), NOW.getUTCDate());
const iso = (ms: number) => new Date(ms).toISOString().replace('.000Z', 'Z');
const monthStart = (offset = 0) => Date.UTC(NOW.getUTCFullYear(), NOW.getUTCMonth() + offset, 1);
const mondayThisWeek = today - ((NOW.getUTCDay() + 6) % 7) * DAY;
/** "in October": this year's when it is not in the future, else last year's. */
function namedMonth(m: number): [number, number] {
  const y = m > NOW.getUTCMonth() ? NOW.getUTCFullYear() - 1 : NOW.getUTCFullYear();
  return [Date.UTC(y, m, 1), Date.UTC(y, m + 1, 1)];
}
const inWindow = (t: number, since: number | null, before: number | null) => (since == null || t >= since) && (before == null || t < before);
const dayIn = (d: string, since: number | null, before: number | null) => inWindow(Date.parse(`${d}T00:00:00Z`), since, before);

const isOpen = (t: Tk) => t.status !== 'resolved' && t.status !== 'closed';

// ---------------------------------------------------------------- the table
type Expected =
  | { kind: 'count'; ids: string[] }
  | { kind: 'list'; ids: string[]; limit: number }
  | { kind: 'top'; groups: Map<string, number>; limit: number };
interface Case { t: Tenant; q: string; query: Record<string, unknown>; expect(m: Model): Expected }

const count = (ids: { id: string }[]): Expected => ({ kind: 'count', ids: ids.map((x) => x.id) });
const list = (ids: { id: string }[], limit = 25): Expected => ({ kind: 'list', ids: ids.map((x) => x.id), limit });
function top<T>(rows: T[], key: (r: T) => string | null, limit: number): Expected {
  const groups = new Map<string, number>();
  for (const r of rows) { const k = key(r); if (k != null) groups.set(k, (groups.get(k) ?? 0) + 1); }
  return { kind: 'top', groups, limit };
}
const q = (resource: string, aggregate: string, filters: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) =>
  ({ resource, aggregate, filters, group_by: null, order: null, limit: null, ...extra });
const [octSince, octBefore] = namedMonth(9);
const [novSince, novBefore] = namedMonth(10);

const CASES: Case[] = [
  // Tickets (alpha: the PSA with the full status mapping)
  { t: 'alpha', q: 'How many tickets are there?', query: q('tickets', 'count'), expect: (m) => count(m.tickets) },
  { t: 'alpha', q: 'How many open tickets?', query: q('tickets', 'count', { status: 'open' }), expect: (m) => count(m.tickets.filter(isOpen)) },
  { t: 'alpha', q: 'How many open critical tickets does Contoso Ltd have?', query: q('tickets', 'count', { status: 'open', priority: 'critical', company: 'Contoso Ltd' }),
    expect: (m) => count(m.tickets.filter((t) => isOpen(t) && t.priority === 'critical' && t.company === 'Contoso Ltd')) },
  { t: 'alpha', q: 'how many closed tickets does fabrikam have', query: q('tickets', 'count', { status: 'closed', company: 'Fabrikam Inc' }),
    expect: (m) => count(m.tickets.filter((t) => t.status === 'closed' && t.company === 'Fabrikam Inc')) },
  { t: 'alpha', q: 'How many high priority tickets are waiting?', query: q('tickets', 'count', { status: 'waiting', priority: 'high' }),
    expect: (m) => count(m.tickets.filter((t) => t.status === 'waiting' && t.priority === 'high')) },
  { t: 'alpha', q: 'How many new tickets?', query: q('tickets', 'count', { status: 'new' }), expect: (m) => count(m.tickets.filter((t) => t.status === 'new')) },
  { t: 'alpha', q: 'How many resolved tickets for Lakeshore Family Dental?', query: q('tickets', 'count', { status: 'resolved', company: 'Lakeshore Family Dental' }),
    expect: (m) => count(m.tickets.filter((t) => t.status === 'resolved' && t.company === 'Lakeshore Family Dental')) },
  { t: 'alpha', q: 'How many tickets were opened this month?', query: q('tickets', 'count', { opened_since: iso(monthStart()) }),
    expect: (m) => count(m.tickets.filter((t) => t.opened >= monthStart())) },
  { t: 'alpha', q: 'How many tickets were opened in October?', query: q('tickets', 'count', { opened_since: iso(octSince), opened_before: iso(octBefore) }),
    expect: (m) => count(m.tickets.filter((t) => inWindow(t.opened, octSince, octBefore))) },
  { t: 'alpha', q: 'How many tickets in the last 30 days?', query: q('tickets', 'count', { opened_since: iso(today - 30 * DAY) }),
    expect: (m) => count(m.tickets.filter((t) => t.opened >= today - 30 * DAY)) },
  { t: 'alpha', q: 'How many in progress tickets?', query: q('tickets', 'count', { status: 'in_progress' }), expect: (m) => count(m.tickets.filter((t) => t.status === 'in_progress')) },
  { t: 'alpha', q: 'How many low priority tickets since 2026-01-01?', query: q('tickets', 'count', { priority: 'low', opened_since: '2026-01-01T00:00:00Z' }),
    expect: (m) => count(m.tickets.filter((t) => t.priority === 'low' && t.opened >= Date.UTC(2026, 0, 1))) },
  { t: 'alpha', q: 'Which company has the most open tickets?', query: q('tickets', 'top', { status: 'open' }, { group_by: 'company', limit: 1 }),
    expect: (m) => top(m.tickets.filter(isOpen), (t) => t.company, 1) },
  { t: 'alpha', q: 'Top 3 companies by tickets', query: q('tickets', 'top', {}, { group_by: 'company', limit: 3 }), expect: (m) => top(m.tickets, (t) => t.company, 3) },
  { t: 'alpha', q: 'List critical tickets of Adventure Works', query: q('tickets', 'list', { priority: 'critical', company: 'Adventure Works' }),
    expect: (m) => list(m.tickets.filter((t) => t.priority === 'critical' && t.company === 'Adventure Works')) },
  { t: 'alpha', q: 'Show the 5 newest tickets', query: q('tickets', 'list', {}, { order: 'newest', limit: 5 }), expect: (m) => list(m.tickets, 5) },
  // Devices
  { t: 'alpha', q: 'How many devices are offline?', query: q('devices', 'count', { online: false }), expect: (m) => count(m.devices.filter((d) => !d.online)) },
  { t: 'alpha', q: 'Which devices have pending patches?', query: q('devices', 'list', { patches_pending: true }), expect: (m) => list(m.devices.filter((d) => d.pending > 0)) },
  { t: 'alpha', q: 'Which devices need attention?', query: q('devices', 'list', { needs_attention: true }), expect: (m) => list(m.devices.filter((d) => d.attention)) },
  { t: 'alpha', q: 'How many Windows devices?', query: q('devices', 'count', { os: 'windows' }), expect: (m) => count(m.devices.filter((d) => /windows/i.test(d.os))) },
  { t: 'alpha', q: 'List offline devices of Harborview Dental Group', query: q('devices', 'list', { online: false, company: 'Harborview Dental Group' }),
    expect: (m) => list(m.devices.filter((d) => !d.online && d.company === 'Harborview Dental Group')) },
  { t: 'alpha', q: 'list offline devices of Contoso', query: q('devices', 'list', { online: false, company: 'Contoso Ltd' }),
    expect: (m) => list(m.devices.filter((d) => !d.online && d.company === 'Contoso Ltd')) },
  { t: 'alpha', q: 'Top 3 companies by devices', query: q('devices', 'top', {}, { group_by: 'company', limit: 3 }), expect: (m) => top(m.devices, (d) => d.company, 3) },
  { t: 'alpha', q: 'How many devices of Keystone Freight Logistics need patching?', query: q('devices', 'count', { patches_pending: true, company: 'Keystone Freight Logistics' }),
    expect: (m) => count(m.devices.filter((d) => d.pending > 0 && d.company === 'Keystone Freight Logistics')) },
  { t: 'alpha', q: 'How many online macOS devices?', query: q('devices', 'count', { online: true, os: 'macos' }), expect: (m) => count(m.devices.filter((d) => d.online && /mac/i.test(d.os))) },
  { t: 'alpha', q: 'How many devices are fully patched?', query: q('devices', 'count', { patches_pending: false }), expect: (m) => count(m.devices.filter((d) => d.pending === 0)) },
  // Incidents
  { t: 'alpha', q: 'How many incidents this month?', query: q('incidents', 'count', { opened_since: iso(monthStart()) }), expect: (m) => count(m.incidents.filter((i) => i.opened >= monthStart())) },
  { t: 'alpha', q: 'Top 5 companies by incidents this month', query: q('incidents', 'top', { opened_since: iso(monthStart()) }, { group_by: 'company', limit: 5 }),
    expect: (m) => top(m.incidents.filter((i) => i.opened >= monthStart()), (i) => i.company, 5) },
  { t: 'alpha', q: 'List incidents of Harborview Dental Group', query: q('incidents', 'list', { company: 'Harborview Dental Group' }),
    expect: (m) => list(m.incidents.filter((i) => i.company === 'Harborview Dental Group')) },
  { t: 'alpha', q: 'How many alerts in November?', query: q('incidents', 'count', { opened_since: iso(novSince), opened_before: iso(novBefore) }),
    expect: (m) => count(m.incidents.filter((i) => inWindow(i.opened, novSince, novBefore))) },
  // Applications
  { t: 'alpha', q: 'How many installs of Google Chrome?', query: q('applications', 'count', { name: 'Google Chrome' }), expect: (m) => count(m.applications.filter((a) => a.name.toLowerCase().includes('google chrome'))) },
  { t: 'alpha', q: 'Top 3 applications', query: q('applications', 'top', {}, { group_by: 'name', limit: 3 }), expect: (m) => top(m.applications, (a) => a.name, 3) },
  { t: 'alpha', q: 'How many devices have "7-Zip" installed?', query: q('applications', 'count', { name: '7-Zip' }), expect: (m) => count(m.applications.filter((a) => a.name.toLowerCase().includes('7-zip'))) },
  { t: 'alpha', q: 'How many applications on devices of Summit Legal Partners?', query: q('applications', 'count', { company: 'Summit Legal Partners' }),
    expect: (m) => count(m.applications.filter((a) => a.company === 'Summit Legal Partners')) },
  // Agreements
  { t: 'alpha', q: 'How many active agreements?', query: q('agreements', 'count', { agreement_status: 'active' }), expect: (m) => count(m.agreements.filter((a) => a.status === 'active')) },
  { t: 'alpha', q: 'List cancelled agreements', query: q('agreements', 'list', { agreement_status: 'cancelled' }), expect: (m) => list(m.agreements.filter((a) => a.status === 'cancelled')) },
  { t: 'alpha', q: 'Which agreements does Contoso Ltd have?', query: q('agreements', 'list', { company: 'Contoso Ltd' }), expect: (m) => list(m.agreements.filter((a) => a.company === 'Contoso Ltd')) },
  // Beta: the limited PSA connector and the other RMM dataset
  { t: 'beta', q: 'How many open tickets does Atlas Plumbing Supplies have?', query: q('tickets', 'count', { status: 'open', company: 'Atlas Plumbing Supplies' }),
    expect: (m) => count(m.tickets.filter((t) => isOpen(t) && t.company === 'Atlas Plumbing Supplies')) },
  { t: 'beta', q: 'How many critical tickets?', query: q('tickets', 'count', { priority: 'critical' }), expect: (m) => count(m.tickets.filter((t) => t.priority === 'critical')) },
  { t: 'beta', q: 'Top 5 clients by open tickets', query: q('tickets', 'top', { status: 'open' }, { group_by: 'company', limit: 5 }), expect: (m) => top(m.tickets.filter(isOpen), (t) => t.company, 5) },
  { t: 'beta', q: 'How many waiting tickets?', query: q('tickets', 'count', { status: 'waiting' }), expect: (m) => count(m.tickets.filter((t) => t.status === 'waiting')) },
  { t: 'beta', q: 'How many tickets were opened this week?', query: q('tickets', 'count', { opened_since: iso(mondayThisWeek) }), expect: (m) => count(m.tickets.filter((t) => t.opened >= mondayThisWeek)) },
  { t: 'beta', q: 'How many devices are offline?', query: q('devices', 'count', { online: false }), expect: (m) => count(m.devices.filter((d) => !d.online)) },
  { t: 'beta', q: 'Which devices have pending patches?', query: q('devices', 'list', { patches_pending: true }), expect: (m) => list(m.devices.filter((d) => d.pending > 0)) },
  { t: 'beta', q: 'List offline Windows devices of Thames Reach Housing Association', query: q('devices', 'list', { online: false, os: 'windows', company: 'Thames Reach Housing Association' }),
    expect: (m) => list(m.devices.filter((d) => !d.online && /windows/i.test(d.os) && d.company === 'Thames Reach Housing Association')) },
  { t: 'beta', q: 'How many incidents since Monday?', query: q('incidents', 'count', { opened_since: iso(mondayThisWeek) }), expect: (m) => count(m.incidents.filter((i) => i.opened >= mondayThisWeek)) },
  { t: 'beta', q: 'How many applications were installed in the last 7 days?', query: q('applications', 'count', { opened_since: iso(today - 7 * DAY) }),
    expect: (m) => count(m.applications.filter((a) => dayIn(a.installed, today - 7 * DAY, null))) },
  { t: 'beta', q: 'Top 3 companies by incidents', query: q('incidents', 'top', {}, { group_by: 'company', limit: 3 }), expect: (m) => top(m.incidents, (i) => i.company, 3) },
];

// ---------------------------------------------------------------- list reads, for the citations
const LIST_OF: Record<string, string> = { tickets: 'tickets', devices: 'devices', applications: 'applications', incidents: 'incidents', agreements: 'agreements' };
const listCache = new Map<string, any[]>();
async function readAll(tenantId: string, resource: string, key = svc.key): Promise<any[]> {
  const cacheKey = `${tenantId}:${resource}:${key}`;
  if (listCache.has(cacheKey)) return listCache.get(cacheKey)!;
  const seen: any[] = [];
  let cursor: string | null = null;
  do {
    const qs = new URLSearchParams({ limit: '500', ...(cursor ? { cursor } : {}) });
    const res = await svc.api(`/tenants/${tenantId}/${LIST_OF[resource]}?${qs}`, { key });
    expect(res.status).toBe(200);
    seen.push(...res.body[LIST_OF[resource]]);
    cursor = res.body.next_cursor;
  } while (cursor);
  listCache.set(cacheKey, seen);
  return seen;
}
const tenantId = (t: Tenant) => (t === 'alpha' ? svc.alphaId : svc.betaId);
const ask = (t: Tenant | string, question: string, key = svc.key) =>
  svc.api(`/tenants/${t === 'alpha' || t === 'beta' ? tenantId(t) : t}/ask`, { method: 'POST', json: { question }, key });

/** Every citation names a record of the caller's list read (agreements: by source_id; they carry no id there). */
async function expectCitedVisible(t: Tenant, records: any[], key = svc.key) {
  const other: Tenant = t === 'alpha' ? 'beta' : 'alpha';
  for (const r of records) {
    const rows = await readAll(tenantId(t), r.resource, key);
    const found = rows.find((x) => (r.resource === 'agreements' ? x.source_id === r.source_id : x.id === r.id && x.source_id === r.source_id));
    expect({ cited: r, found: Boolean(found) }).toEqual({ cited: r, found: true });
    if (r.resource !== 'agreements') {
      const foreign = await readAll(tenantId(other), r.resource);
      expect(foreign.some((x) => x.id === r.id)).toBe(false);
    }
  }
}

describe('the question family over the sandbox fixtures', () => {
  it('has at least 40 questions', () => expect(CASES.length).toBeGreaterThanOrEqual(40));

  it.each(CASES.map((c) => [c.t, c.q, c] as const))('%s: %s', async (t, question, c) => {
    const res = await ask(t, question);
    expect(res.status).toBe(200);
    const a = res.body;
    expect({ answered: a.answered, answer: a.answer, query: a.query }).toEqual({ answered: true, answer: a.answer, query: c.query });
    expect(a.suggestions).toEqual([]);
    expect(a.as_of).toEqual(expect.stringMatching(/^\d{4}-\d\d-\d\dT/));
    const e = c.expect(MODELS[t]);
    const cited = a.records.map((r: any) => r.source_id);
    for (const r of a.records) expect(r.resource).toBe(c.query.resource);
    if (e.kind === 'count') {
      expect(a.count).toBe(e.ids.length);
      expect(new Set(cited)).toEqual(new Set(e.ids));
      expect(cited).toHaveLength(e.ids.length);
      expect(a.answer).toContain(e.ids.length === 0 ? 'no ' : ` ${e.ids.length} `);
    } else if (e.kind === 'list') {
      expect(a.count).toBe(e.ids.length);
      expect(cited).toHaveLength(Math.min(e.limit, e.ids.length));
      for (const id of cited) expect(e.ids).toContain(id);
      expect(a.answer).toMatch(e.ids.length === 0 ? /^There are no / : new RegExp(`^${e.ids.length} `));
      for (const r of a.records) expect(a.answer).toContain(r.label);
      if (c.query.resource === 'tickets' || c.query.resource === 'incidents') {
        // Newest first: the opening times of the cited records never increase.
        const opened = new Map<string, number>((MODELS[t][c.query.resource] as { id: string; opened: number }[]).map((x) => [x.id, x.opened]));
        const times = cited.map((id: string) => opened.get(id)!);
        expect(times).toEqual([...times].sort((x, y) => y - x));
        if (e.limit < e.ids.length) expect(Math.min(...times)).toBeGreaterThanOrEqual(Math.max(...e.ids.filter((id) => !cited.includes(id)).map((id) => opened.get(id)!)));
      }
    } else {
      const expected = [...e.groups.entries()].sort((x, y) => y[1] - x[1]);
      const n = Math.min(e.limit, expected.length);
      expect(a.groups.map((g: any) => g.count)).toEqual(expected.slice(0, n).map(([, v]) => v));
      for (const g of a.groups) expect(e.groups.get(g.name)).toBe(g.count);
      // Every group strictly larger than the smallest one shown is shown (ties may fall either way).
      const floor = a.groups.length ? a.groups[a.groups.length - 1].count : Infinity;
      for (const [name, v] of expected) if (v > floor) expect(a.groups.map((g: any) => g.name)).toContain(name);
      expect(cited).toHaveLength(a.groups.reduce((s: number, g: any) => s + g.count, 0));
      for (const g of a.groups) expect(a.answer).toContain(`${g.name} (${g.count})`);
    }
    await expectCitedVisible(t, a.records);
  });
});

describe('what the parser cannot answer', () => {
  it.each([
    'What is the weather in Paris?',
    'How many tickets does Acme have?',
    'How many tickets and devices are there?',
    'How many open devices?',
    'Delete all tickets',
    'How many charges this month?',
    'How many tickets since 2026-02-30?',
    'Top 5 tickets',
    '',
  ].filter(Boolean))('%s -> answered false, nothing cited, example questions', async (question) => {
    const res = await ask('alpha', question);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ answered: false, query: null, records: [], count: null, groups: [] });
    expect(res.body.suggestions.length).toBeGreaterThanOrEqual(5);
    // The suggestions are questions it can answer.
    for (const s of res.body.suggestions.slice(0, 3)) expect((await ask('alpha', s)).body.answered).toBe(true);
  });

  it('agreements on the limited connector, which has no agreements list: answered false, nothing cited', async () => {
    const res = await ask('beta', 'How many inactive agreements?');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ answered: false, records: [], count: null });
  });

  it('an empty or oversized question is a 422 HTTPValidationError', async () => {
    expect((await ask('alpha', '')).status).toBe(422);
    expect((await ask('alpha', 'x'.repeat(501))).status).toBe(422);
    const extra = await svc.api(`/tenants/${svc.alphaId}/ask`, { method: 'POST', json: { question: 'How many tickets?', tenant: 'other' } });
    expect(extra.status).toBe(422);
  });
});

describe('the path tenant is the only scope', () => {
  it('a caller that cannot see the tenant gets 404, for ask and for the examples', async () => {
    const isv = await svc.services.admin.createIsv('Ask Stranger ISV');
    const { key } = await svc.services.admin.issueApiKey(isv.id, 'stranger');
    for (const [id, k] of [[svc.alphaId, key], [svc.betaId, svc.alphaMspKey], ['not-a-uuid', svc.key], ['00000000-0000-0000-0000-000000000000', svc.key]]) {
      const res = await svc.api(`/tenants/${id}/ask`, { method: 'POST', json: { question: 'How many tickets?' }, key: k });
      expect({ id, status: res.status, code: res.body.code }).toEqual({ id, status: 404, code: 'not_found' });
      const ex = await svc.api(`/tenants/${id}/ask/examples`, { key: k });
      expect(ex.status).toBe(404);
    }
  });

  it("the tenant's MSP key asks its own tenant and sees only its records", async () => {
    const res = await ask('alpha', 'How many tickets are there?', svc.alphaMspKey);
    expect(res.body.answered).toBe(true);
    expect(res.body.count).toBe(MODELS.alpha.tickets.length);
    await expectCitedVisible('alpha', res.body.records, svc.alphaMspKey);
  });

  it("another tenant's company is not known here, and its records are never cited", async () => {
    const res = await ask('alpha', 'How many tickets does Atlas Plumbing Supplies have?');
    expect(res.body.answered).toBe(false);
    const beta = await ask('beta', 'How many devices are there?', svc.betaMspKey);
    expect(beta.body.count).toBe(MODELS.beta.devices.length);
    const alphaIds = new Set((await readAll(svc.alphaId, 'devices')).map((d) => d.id));
    expect(beta.body.records.some((r: any) => alphaIds.has(r.id))).toBe(false);
    await expectCitedVisible('beta', beta.body.records, svc.betaMspKey);
  });
});

describe('citations are capped, and the answer says so', () => {
  it('a count over more rows than the cap cites the first ones and says how many', async () => {
    const service = new AskService(svc.services.ds, svc.services.config, { citeCap: 10 });
    const access = await svc.services.access.tenantAccess(await svc.services.access.authenticate(svc.key), svc.alphaId);
    const a = await service.ask(access, 'How many tickets are there?');
    const n = MODELS.alpha.tickets.length;
    expect(a).toMatchObject({ answered: true, count: n, records_capped: true, cited_cap: 10 });
    expect(a.records).toHaveLength(10);
    expect(a.answer).toBe(`There are ${n} tickets. The first 10 of the ${n} records are cited.`);
    const top = await service.ask(access, 'Top 3 companies by tickets');
    expect(top.records).toHaveLength(10);
    expect(top.records_capped).toBe(true);
    expect(top.answer).toMatch(/The first 10 of the \d+ records are cited\.$/);
  });
});

describe('the examples', () => {
  it('lists the family; every example parses to the query it shows and is answered', async () => {
    const res = await svc.api(`/tenants/${svc.alphaId}/ask/examples`);
    expect(res.status).toBe(200);
    expect(res.body.engine).toBe('parser');
    expect(res.body.families.map((f: any) => f.name)).toEqual(['count', 'list', 'top']);
    const examples = res.body.families.flatMap((f: any) => f.examples);
    expect(examples.length).toBeGreaterThanOrEqual(10);
    for (const ex of examples) {
      const a = (await ask('alpha', ex.question)).body;
      expect({ q: ex.question, answered: a.answered, query: a.query }).toEqual({ q: ex.question, answered: true, query: ex.query });
    }
  });

  it('/docs (the OpenAPI document it renders) describes the question family', async () => {
    const doc = (await svc.api('/openapi.json')).body;
    const op = doc.paths['/tenants/{tenant_id}/ask'].post;
    expect(op.description).toContain('how many [filters] <records>');
    expect(op.description).toContain('Time windows');
    expect(doc.paths['/tenants/{tenant_id}/ask/examples'].get).toBeDefined();
  });
});
