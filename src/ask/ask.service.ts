/**
 * Ask (docs/architecture.md, Device write and ask): a question becomes a structured query (parser, or the optional model),
 * the query is validated by its zod schema, then run on the tenant's store only, on the connections
 * whose lists the caller reads, the same tables and the same tenant scope as the list reads. Every
 * figure in the answer is counted from rows here, and every row counted is cited (up to CITE_CAP).
 */
import type { DataSource } from 'typeorm';
import type { TenantAccess } from '../access/access.service';
import type { AppConfig } from '../config/config';
import { connectorsListing, connectorsSyncing } from '../connectors/registry';
import { RECORD_LISTS } from '../records/record-lists';
import { toRfc3339 } from '../shared/dates';
import { TtlCache } from '../shared/ttl-cache';
import { ASK_RESOURCE_DEFS, type AskResourceDef, type SqlParams } from './ask.resources';
import { AskStore } from './ask.store';
import { AskQuery, type AskAnswer, type AskFilters } from './ask.schemas';
import { ModelEngine, type ModelConfig } from './model-engine';
import { parseQuestion, type ParseContext } from './parser';

/** Most records one answer cites; a larger count says so in the answer (`records_capped`). */
export const CITE_CAP = 500;

export const EXAMPLE_QUESTIONS: { family: string; pattern: string; questions: string[] }[] = [
  { family: 'count', pattern: 'how many [filters] <records> [of <company>] [<time window>]', questions: [
    'How many open critical tickets does Contoso Ltd have?', 'How many devices are offline?',
    'How many tickets were opened this month?', 'How many active agreements are there?'] },
  { family: 'list', pattern: 'which | list | show [filters] <records> [of <company>] [<time window>]', questions: [
    'Which devices have pending patches?', 'List offline devices of Harborview Dental Group',
    'Show the 5 newest tickets', 'Which devices need attention?', 'List incidents this week'] },
  { family: 'top', pattern: 'top N companies by [filters] <records> [<time window>] | which company has the most <records>', questions: [
    'Top 5 companies by incidents this month', 'Which company has the most open tickets?',
    'Top 3 applications', 'Top 5 clients by critical tickets in November'] },
];

export const RECORD_WORDS = [
  'tickets: status open (not resolved or closed), new, in progress, waiting, resolved, closed; priority critical, high, medium, low; opened <time window>',
  'devices: online, offline, needing attention, with pending patches (or fully patched), Windows, macOS, Linux',
  'applications (installed software): by "quoted name" or an installed application name, installed <time window>',
  'incidents (active alerts): opened <time window>',
  'agreements: active, cancelled, expired, inactive; started <time window>',
];

type Refusal = { answered: false; answer: string; query: AskQuery | null };

class Params implements SqlParams {
  readonly values: unknown[] = [];
  add(value: unknown): string {
    this.values.push(value);
    return `$${this.values.length}`;
  }
}

export class AskService {
  private readonly names = new TtlCache<{ companies: string[]; applications: string[] }>(5_000);
  readonly model: ModelEngine | null;

  readonly now: () => Date;
  /** Most records one answer cites (CITE_CAP; tests lower it to see the cap at work). */
  readonly citeCap: number;

  private readonly store: AskStore;

  constructor(ds: DataSource, config: AppConfig, opts: { now?: () => Date; citeCap?: number } = {}) {
    this.store = new AskStore(ds);
    this.model = config.askModel ? new ModelEngine(config.askModel as ModelConfig, config.webhookAllowLoopback) : null;
    this.now = opts.now ?? (() => new Date());
    this.citeCap = opts.citeCap ?? CITE_CAP;
  }

  get engine(): 'parser' | 'model' {
    return this.model ? 'model' : 'parser';
  }

  async ask(access: TenantAccess, question: string): Promise<AskAnswer> {
    const names = await this.storeNames(access);
    let query: AskQuery;
    let companyLabel: string | null = null;
    if (this.model) {
      const translated = await this.model.translate(question);
      if (!translated.ok) return this.refuse({ answered: false, answer: translated.reason, query: null });
      query = translated.query;
    } else {
      const parsed = parseQuestion(question, this.parseContext(names));
      if (!parsed.ok) return this.refuse({ answered: false, answer: `I cannot answer that: ${parsed.reason}`, query: null });
      query = parsed.query;
      companyLabel = parsed.companyLabel;
    }
    // The one gate before anything runs, whichever engine wrote the query.
    const valid = AskQuery.safeParse(query);
    if (!valid.success) {
      const why = valid.error.issues.map((i) => `${i.path.join('.') || 'query'}: ${i.message}`).join('; ');
      return this.refuse({ answered: false, answer: `The query was refused and nothing was run (${why}).`, query: null });
    }
    query = valid.data;
    if (query.filters.company) {
      const company = resolveCompany(query.filters.company, names.companies);
      if (!company) return this.refuse({ answered: false, answer: `No company named "${query.filters.company}" is in this tenant's data.`, query: null });
      query = { ...query, filters: { ...query.filters, company } };
      companyLabel = company;
    }
    return this.run(access, query, companyLabel);
  }

  parseContext(names: { companies: string[]; applications: string[] }): ParseContext {
    return { ...names, now: this.now() };
  }

  private refuse(r: Refusal): AskAnswer {
    return {
      ...r, records: [], count: null, groups: [], records_capped: false, cited_cap: this.citeCap, as_of: null,
      engine: this.engine, suggestions: EXAMPLE_QUESTIONS.flatMap((f) => f.questions),
    };
  }

  /** Connections whose records of this resource the caller reads: the same rule as the list read. */
  private feeding(access: TenantAccess, def: AskResourceDef) {
    const list = RECORD_LISTS[def.list];
    const listing = connectorsListing(list.resource);
    return access.connections.filter((c) => c.kind === list.kind && listing.includes(c.connector));
  }

  async storeNames(access: TenantAccess): Promise<{ companies: string[]; applications: string[] }> {
    const ids = access.connections.map((c) => c.id).sort();
    const key = `${access.tenant.id}:${ids.join(',')}`;
    const hit = this.names.get(key);
    if (hit) return hit;
    const companies = await this.store.companyNames(access.tenant.id, ids);
    const apps = await this.store.applicationNames(access.tenant.id, ids);
    const value = { companies: companies.map((r) => r.name), applications: apps.map((r) => r.name) };
    this.names.set(key, value);
    return value;
  }

  /** Runs a validated query on the store and words the answer from the rows. */
  async run(access: TenantAccess, query: AskQuery, companyLabel: string | null): Promise<AskAnswer> {
    const def = ASK_RESOURCE_DEFS[query.resource];
    const connections = this.feeding(access, def);
    const list = RECORD_LISTS[def.list];
    if (connections.length === 0 && list.requiresCapability && access.connections.some((c) => c.kind === list.kind)) {
      return this.refuse({ answered: false, answer: `No connection of this tenant supports the ${list.itemsField} list.`, query });
    }
    const p = new Params();
    const where = [`r.tenant_id = ${p.add(access.tenant.id)}`, `r.connection_id = ANY(${p.add(connections.map((c) => c.id))}::uuid[])`];
    for (const [k, v] of Object.entries(query.filters) as [keyof AskFilters, unknown][]) {
      if (v == null || k === 'opened_since' || k === 'opened_before') continue;
      const f = def.filter[k] as ((value: unknown, p: SqlParams) => string) | undefined;
      if (!f) throw new Error(`ask: ${query.resource} has no SQL for filter ${k}`); // AskQuery refuses it first
      where.push(f(v, p));
    }
    if (def.time) {
      const bound = (iso: string) => (def.time!.kind === 'date' ? p.add(iso.slice(0, 10)) : `${p.add(iso)}::timestamptz`);
      if (query.filters.opened_since) where.push(`${def.time.column} >= ${bound(query.filters.opened_since)}`);
      if (query.filters.opened_before) where.push(`${def.time.column} < ${bound(query.filters.opened_before)}`);
    }
    const from = `FROM ${def.table} r ${def.join ?? ''} WHERE ${where.join(' AND ')}`;
    const select = `SELECT r.id, r.source_id, ${def.label} AS label, ${def.company} AS company`;
    const order = query.aggregate === 'list' ? (query.order ?? def.defaultOrder) : def.defaultOrder;
    const orderBy = order === 'name' ? `${def.name} ASC, r.id` : `${def.newest} ${order === 'oldest' ? 'ASC' : 'DESC'} NULLS LAST, r.id`;

    let count: number;
    let rows: { id: string; source_id: string; label: string | null; company: string | null }[];
    let groups: { name: string; count: number }[] = [];
    if (query.aggregate === 'top') {
      const key = query.group_by === 'name' ? def.name : def.company;
      const limit = query.limit ?? 5;
      const g = await this.store.top(key, from, limit, p.values);
      groups = g.map((x) => ({ name: x.name, count: x.n }));
      count = groups.reduce((n, x) => n + x.count, 0);
      const keys = p.add(groups.map((x) => x.name));
      rows = groups.length === 0 ? [] : await this.store.rows(`${select} ${from} AND ${key} = ANY(${keys}::text[])`, `${key}, ${orderBy}`, this.citeCap, p.values);
    } else {
      const n = await this.store.countRecords(from, p.values);
      count = n;
      const take = query.aggregate === 'list' ? Math.min(query.limit ?? 25, this.citeCap) : this.citeCap;
      rows = count === 0 ? [] : await this.store.rows(`${select} ${from}`, orderBy, take, p.values);
    }
    const records = rows.map((r) => ({ resource: query.resource, id: r.id, source_id: r.source_id, label: r.label ?? r.source_id }));
    const capped = query.aggregate !== 'list' && count > records.length;
    const answer = wordAnswer(query, def, count, records.map((r) => r.label), groups, companyLabel, capped);
    const asOf = await this.asOf(access, def);
    return {
      answered: true, answer, query, records, count, groups, records_capped: capped, cited_cap: this.citeCap,
      as_of: asOf, engine: this.engine, suggestions: [],
    };
  }

  /** Oldest last sync among the connections feeding the lists used; null if one never synced. */
  private async asOf(access: TenantAccess, def: AskResourceDef): Promise<string | null> {
    const pairs: [string, string][] = [];
    for (const resource of def.syncedFrom) {
      const list = Object.values(RECORD_LISTS).find((l) => l.resource === resource)!;
      const syncing = connectorsSyncing(resource);
      for (const c of access.connections) if (c.kind === list.kind && syncing.includes(c.connector)) pairs.push([c.id, resource]);
    }
    if (pairs.length === 0) return null;
    const row = await this.store.oldestSync(pairs);
    return row && row.n === pairs.length ? toRfc3339(row.oldest) : null;
  }
}

/** The store's spelling of a company: exact (any case), else the one name whose short form it is. */
export function resolveCompany(given: string, names: string[]): string | null {
  const g = given.trim().toLowerCase();
  const exact = names.find((n) => n.toLowerCase() === g);
  if (exact) return exact;
  const short = names.filter((n) => n.toLowerCase().replace(/\s+(ltd\.?|limited|inc\.?|incorporated|llc|llp|plc|co\.?|corp\.?|corporation|gmbh)$/, '') === g);
  return short.length === 1 ? short[0] : null;
}

const PRIORITY_WORD: Record<string, string> = { critical: 'critical', high: 'high-priority', medium: 'medium-priority', low: 'low-priority' };
const STATUS_WORD: Record<string, string> = { open: 'open', new: 'new', in_progress: 'in-progress', waiting: 'waiting', resolved: 'resolved', closed: 'closed' };
const OS_WORD: Record<string, string> = { windows: 'Windows', macos: 'macOS', linux: 'Linux' };

/** "open critical tickets of Contoso Ltd opened since 2026-11-01": the filters, in words. */
function describe(q: AskQuery, def: AskResourceDef, plural: boolean, company: string | null): string {
  const f = q.filters;
  const adjectives = [
    f.status ? STATUS_WORD[f.status] : null, f.priority ? PRIORITY_WORD[f.priority] : null,
    f.agreement_status ?? null, f.online === false ? 'offline' : f.online === true ? 'online' : null,
    f.os ? OS_WORD[f.os] : null,
  ].filter(Boolean);
  const parts = [...adjectives, def.noun[plural ? 1 : 0]];
  if (f.name) parts.push(`named like "${f.name}"`);
  const who = company ?? f.company;
  if (who) parts.push(q.resource === 'applications' || q.resource === 'incidents' ? `on devices of ${who}` : `of ${who}`);
  if (f.needs_attention === true) parts.push('needing attention');
  if (f.needs_attention === false) parts.push('not needing attention');
  if (f.patches_pending === true) parts.push('with pending patches');
  if (f.patches_pending === false) parts.push('with no pending patches');
  const verb = q.resource === 'applications' ? 'installed' : q.resource === 'agreements' ? 'starting' : 'opened';
  if (f.opened_since && f.opened_before) parts.push(`${verb} from ${f.opened_since} to before ${f.opened_before}`);
  else if (f.opened_since) parts.push(`${verb} since ${f.opened_since}`);
  else if (f.opened_before) parts.push(`${verb} before ${f.opened_before}`);
  return parts.join(' ');
}

function wordAnswer(
  q: AskQuery, def: AskResourceDef, count: number, labels: string[], groups: { name: string; count: number }[],
  company: string | null, capped: boolean,
): string {
  const capNote = capped ? ` The first ${labels.length} of the ${count} records are cited.` : '';
  if (q.aggregate === 'count') {
    if (count === 0) return `There are no ${describe(q, def, true, company)}.`;
    return `There ${count === 1 ? 'is' : 'are'} ${count} ${describe(q, def, count !== 1, company)}.${capNote}`;
  }
  if (q.aggregate === 'top') {
    const by = q.group_by === 'name' ? 'applications' : 'companies';
    if (groups.length === 0) return `There are no ${describe(q, def, true, company)} to rank ${by} by.`;
    return `Top ${groups.length} ${groups.length === 1 ? by.replace(/ies$/, 'y').replace(/s$/, '') : by} by ${describe(q, def, true, company)}: `
      + `${groups.map((g) => `${g.name} (${g.count})`).join(', ')}.${capNote}`;
  }
  if (count === 0) return `There are no ${describe(q, def, true, company)}.`;
  const shown = labels.length < count ? ` (the first ${labels.length} shown)` : '';
  return `${count} ${describe(q, def, count !== 1, company)}${shown}: ${labels.join('; ')}.`;
}
