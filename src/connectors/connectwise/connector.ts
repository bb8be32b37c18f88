/**
 * ConnectWise PSA (Manage) read connector, REST API 3.0.
 *
 * - Pages of 1000 (ConnectWise's maximum), ordered by id, following the Link header's rel="next".
 * - Incremental (tickets, companies, contacts, projects, agreements): `lastUpdated >= [since]`.
 *   Inclusive on purpose: ConnectWise timestamps have whole seconds, so a record changed in the
 *   same second as the watermark would be lost with `>`; records read twice are dropped by the
 *   sync engine's raw-hash comparison.
 * - Tickets are service tickets (/service/tickets) then project tickets (/project/tickets); both
 *   share ConnectWise's ticket id space.
 * - Descriptions: a ConnectWise ticket has no description field on read; `initialDescription` is
 *   write-only and ConnectWise keeps it as the ticket's first note flagged `detailDescriptionFlag`
 *   (ServiceNote / ProjectTicketNote models: connectwise-rest ManageTypes.d.ts, sowderca/
 *   connectwise-ruby-sdk docs/ServiceNote.md). So a ticket's description is the text of its first such
 *   note: `GET /service/tickets/{id}/notes` (or /project/tickets/{id}/notes) with
 *   `conditions=detailDescriptionFlag = true`, `orderBy=id asc`, `pageSize=1`. One call per ticket, so
 *   only for tickets that are new or changed since they were stored (a stored ticket keeps its own);
 *   a ticket without one has a null description.
 * - Note counts: a ticket's list record says nothing about its notes (adding one only bumps
 *   `_info.lastUpdated`), so on incremental reads, which return only the tickets changed since the
 *   watermark, each changed service ticket's notes are counted (`/service/tickets/{id}/notes/count`)
 *   for change detection to tell a new note from another edit. Full reads count nothing rather than
 *   make one call per ticket of the whole board: a stored ticket keeps its count, a new one has 0.
 * - Statuses are read per board, agreement lines (additions) per agreement.
 * - Products: the catalogue (`/procurement/catalog`, docs/vendors.md), read whole; additions name their
 *   product by catalogue id (`product.id`), which is the product record's source id.
 * - A baseline project is one whose project type is named "Baseline" (`type.name`).
 */
import type { FetchedRecord, ReadConnector, RecordFieldsByResource, SyncContext, SyncResource } from '../types';
import { cwAll, cwDate, cwHeaders, cwPages, type CwNative } from './client';
import {
  mapAddition, mapAgreement, mapBoard, mapCatalogItem, mapCompany, mapContact, mapMember, mapPriority, mapProject, mapStatus, mapTicket,
  vendorUpdatedAt,
} from './mappers';
import { connectwiseChangedSince } from './changes';

type Page<R extends SyncResource> = FetchedRecord<R>[];

function toPage<R extends SyncResource>(page: CwNative[], map: (rec: CwNative) => RecordFieldsByResource[R]): Page<R> {
  return page.map((rec) => ({ sourceId: String(rec.id), native: rec, vendorUpdatedAt: vendorUpdatedAt(rec), fields: map(rec) }));
}

const INCREMENTAL: readonly SyncResource[] = ['tickets', 'companies', 'contacts', 'projects', 'agreements'];

/** The last-updated condition for an incremental read, or undefined for a full read. */
function sinceCondition(resource: SyncResource, ctx: SyncContext): string | undefined {
  return ctx.since && INCREMENTAL.includes(resource) ? `lastUpdated >= ${cwDate(ctx.since)}` : undefined;
}

async function* simpleList<R extends SyncResource>(
  resource: R, path: string, ctx: SyncContext, map: (rec: CwNative) => RecordFieldsByResource[R],
): AsyncGenerator<Page<R>> {
  for await (const page of cwPages(ctx, path, sinceCondition(resource, ctx))) yield toPage<R>(page, map);
}

async function* statuses(ctx: SyncContext): AsyncGenerator<Page<'statuses'>> {
  for (const board of await cwAll(ctx, '/service/boards')) {
    const boardId = String(board.id);
    for await (const page of cwPages(ctx, `/service/boards/${board.id}/statuses`)) {
      yield toPage<'statuses'>(page, (s) => mapStatus(s, boardId, ctx.statusMapping));
    }
  }
}

/** Parallel note counts per page without a connection budget (tests of the connector alone). */
const NOTE_COUNT_CONCURRENCY = 4;

/**
 * Unsettled tickets (stored within their stamp's second, payload unchanged) counted per sync of the
 * tickets: a note in that second hides behind an identical payload, but a bulk edit can leave thousands
 * of them, and counting them all would spend the connection's hourly budget on a rare case. Past the
 * allowance they are taken as unchanged, as every re-read ticket was before.
 */
const UNSETTLED_COUNTS_PER_SYNC = 100;

/** Fills `noteCount` of each service ticket of an incremental page (see the header comment). */
async function countNotes(ctx: SyncContext, all: Page<'tickets'>, allowance: { unsettled: number }): Promise<void> {
  const headers = cwHeaders(ctx.credentials);
  // Adding a note bumps `_info.lastUpdated`, so a ticket stored exactly as fetched has no new note:
  // the inclusive watermark re-reads such tickets, and they cost no count (the store keeps theirs).
  // A ticket stored within its stamp's second is counted again, within the allowance: a note added in
  // that second leaves the record identical (whole-second stamps).
  const stored = ctx.storedAsFetched ? await ctx.storedAsFetched(all) : { settled: new Set<string>(), unsettled: new Set<string>() };
  const page = all.filter((r) => {
    if (stored.settled.has(r.sourceId)) return false;
    if (!stored.unsettled.has(r.sourceId)) return true;
    if (allowance.unsettled <= 0) return false;
    allowance.unsettled--;
    return true;
  });
  let next = 0;
  const worker = async () => {
    while (next < page.length) {
      const rec = page[next++];
      const res = await ctx.http.request<{ count?: unknown }>({ url: `${ctx.baseUrl}/service/tickets/${rec.sourceId}/notes/count`, headers });
      const count = res.body?.count;
      if (typeof count === 'number' && Number.isFinite(count)) {
        rec.fields.noteCount = count;
        rec.measured = ['noteCount'];
      } else {
        rec.unmeasured = ['noteCount'];
      }
    }
  };
  // As many at once as the connection's budget admits (its concurrent limit); the budget keeps the total there.
  await Promise.all(Array.from({ length: Math.min(ctx.concurrency ?? NOTE_COUNT_CONCURRENCY, page.length) }, worker));
}

/** Marks `field` of a record as filled (or not) by a call of the connector's own. */
function measuredField(rec: FetchedRecord<'tickets'>, field: string, filled: boolean): void {
  const list = filled ? 'measured' : 'unmeasured';
  rec[list] = [...(rec[list] ?? []), field];
}

/** Fills `description` of each new or changed ticket of a page from its first detail-description note (see the header). */
async function readDescriptions(ctx: SyncContext, path: string, page: Page<'tickets'>): Promise<void> {
  const headers = cwHeaders(ctx.credentials);
  const stored = ctx.storedAsFetched ? await ctx.storedAsFetched(page) : { settled: new Set<string>(), unsettled: new Set<string>() };
  const wanted = page.filter((r) => !stored.settled.has(r.sourceId));
  for (const r of page) if (stored.settled.has(r.sourceId)) measuredField(r, 'description', false);
  let next = 0;
  const worker = async () => {
    while (next < wanted.length) {
      const rec = wanted[next++];
      const res = await ctx.http.request<unknown>({
        url: `${ctx.baseUrl}${path}/${rec.sourceId}/notes`, headers,
        query: { conditions: 'detailDescriptionFlag = true', orderBy: 'id asc', pageSize: 1, page: 1 },
      });
      const notes = Array.isArray(res.body) ? (res.body as CwNative[]) : null;
      if (!notes) {
        measuredField(rec, 'description', false);
        continue;
      }
      rec.fields.description = typeof notes[0]?.text === 'string' ? notes[0].text : null;
      measuredField(rec, 'description', true);
    }
  };
  await Promise.all(Array.from({ length: Math.min(ctx.concurrency ?? NOTE_COUNT_CONCURRENCY, wanted.length) }, worker));
}

async function* tickets(ctx: SyncContext): AsyncGenerator<Page<'tickets'>> {
  const conditions = sinceCondition('tickets', ctx);
  const allowance = { unsettled: UNSETTLED_COUNTS_PER_SYNC };
  for (const path of ['/service/tickets', '/project/tickets']) {
    for await (const page of cwPages(ctx, path, conditions)) {
      const mapped = toPage<'tickets'>(page, (t) => mapTicket(t, ctx.statusMapping));
      // Project ticket notes live elsewhere (/project/tickets/{id}/notes); they are not counted.
      if (ctx.since && path === '/service/tickets') await countNotes(ctx, mapped, allowance);
      else if (path === '/service/tickets') for (const rec of mapped) rec.unmeasured = ['noteCount'];
      await readDescriptions(ctx, path, mapped);
      yield mapped;
    }
  }
}

async function* agreementLines(ctx: SyncContext): AsyncGenerator<Page<'agreement_lines'>> {
  for (const agreement of await cwAll(ctx, '/finance/agreements')) {
    const agreementId = String(agreement.id);
    for await (const page of cwPages(ctx, `/finance/agreements/${agreement.id}/additions`)) {
      yield toPage<'agreement_lines'>(page, (x) => mapAddition(x, agreementId));
    }
  }
}

function fetchResource(resource: SyncResource, ctx: SyncContext): AsyncIterable<FetchedRecord[]> {
  switch (resource) {
    case 'boards': return simpleList('boards', '/service/boards', ctx, mapBoard);
    case 'statuses': return statuses(ctx);
    case 'priorities': return simpleList('priorities', '/service/priorities', ctx, mapPriority);
    case 'members': return simpleList('members', '/system/members', ctx, mapMember);
    case 'companies': return simpleList('companies', '/company/companies', ctx, mapCompany);
    case 'contacts': return simpleList('contacts', '/company/contacts', ctx, mapContact);
    case 'tickets': return tickets(ctx);
    case 'projects': return simpleList('projects', '/project/projects', ctx, mapProject);
    case 'agreements': return simpleList('agreements', '/finance/agreements', ctx, mapAgreement);
    case 'agreement_lines': return agreementLines(ctx);
    case 'products': return simpleList('products', '/procurement/catalog', ctx, mapCatalogItem);
    default: throw new Error(`connectwise does not sync ${resource}`);
  }
}

/** Lists whose every record is one row of ours (agreement lines are fetched per agreement: no cheap listing). */
const ID_LISTS: Partial<Record<SyncResource, readonly string[]>> = {
  companies: ['/company/companies'], contacts: ['/company/contacts'], tickets: ['/service/tickets', '/project/tickets'],
  projects: ['/project/projects'], agreements: ['/finance/agreements'],
};

/** Every id of a list: the `fields=id` projection ConnectWise documents for GET lists (developer docs, "PSA API Requests", query parameter `fields`). */
async function* idPages(ctx: SyncContext, paths: readonly string[]): AsyncGenerator<string[]> {
  for (const path of paths) {
    for await (const page of cwPages(ctx, path, undefined, 'id')) yield page.map((r) => String(r.id));
  }
}

export const connectwiseConnector: ReadConnector = {
  name: 'connectwise',
  kind: 'psa',
  resources: ['boards', 'statuses', 'priorities', 'members', 'companies', 'contacts', 'tickets', 'projects', 'agreements', 'agreement_lines', 'products'],
  incremental: INCREMENTAL,
  changedSince: connectwiseChangedSince,
  // GET /service/boards (Service > Boards, REST API 3.0) with pageSize=1: any API member may read it.
  async probe(ctx: SyncContext): Promise<void> {
    await ctx.http.request({ url: `${ctx.baseUrl}/service/boards`, headers: cwHeaders(ctx.credentials), query: { pageSize: 1 }, retry: false });
  },
  fetch<R extends SyncResource>(resource: R, ctx: SyncContext): AsyncIterable<FetchedRecord<R>[]> {
    return fetchResource(resource, ctx) as AsyncIterable<FetchedRecord<R>[]>;
  },
  listIds(resource: SyncResource, ctx: SyncContext): AsyncIterable<string[]> | null {
    const paths = ID_LISTS[resource];
    return paths ? idPages(ctx, paths) : null;
  },
};
