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
 *   `conditions=detailDescriptionFlag = true`, `orderBy=id asc`, `pageSize=1`; a ticket without one has
 *   a null description. Note counts: `/service/tickets/{id}/notes/count`. ConnectWise has notes only
 *   per ticket (no endpoint lists the notes of many tickets), so both are one call per ticket, made only
 *   where they can tell something (`readTickets`):
 *   - A ticket whose list record moved only in `_info` (the bookkeeping field, capabilities.ts) was
 *     touched by a note: adding one bumps `_info.lastUpdated` and nothing else of the record. Its notes
 *     are counted (service tickets) and its description read again, so change detection tells a new
 *     note (ticket.noted) from another touch.
 *   - A ticket whose other fields moved was edited: its event is ticket.updated whatever its notes did,
 *     and no call is made. Its count and description stay as stored (unmeasured), so a note added at
 *     the same time shows as a grown count at the ticket's next note-only touch. (Except an edit this
 *     sync stores within its stamp's second: its notes are counted, within a per-sync allowance, since a
 *     note added later in that second leaves the record as stored, and shows only as a grown count.)
 *   - A new ticket after the baseline gets both calls: its description is there with ticket.created,
 *     and a later note-only touch compares with a real count (not an uncounted 0 that any touch grows).
 *   - The baseline (the resource's first sync, an import that raises no events) makes none: 50,000
 *     tickets would cost 50,000 description reads, five hours of the default budget, before the first
 *     sync could end. Its tickets keep a null description and an uncounted 0 until a note touches them
 *     (`notes.counted: 'sometimes'`: a stored 0 may mean "not counted").
 *   - A ticket stored exactly as fetched costs nothing (the inclusive watermark re-reads such tickets),
 *     except one stored within its stamp's second (unsettled: a note in that second leaves the record
 *     identical), read like a touched one within a per-sync allowance.
 * - Statuses are read per board, agreement lines (additions) per agreement.
 * - Products: the catalogue (`/procurement/catalog`, docs/vendors.md), read whole; additions name their
 *   product by catalogue id (`product.id`), which is the product record's source id.
 * - A baseline project is one whose project type is named "Baseline" (`type.name`).
 */
import type { FetchedRecord, ReadConnector, RecordFieldsByResource, StoredComparison, SyncContext, SyncResource } from '../types';
import { connectwiseCapabilities } from './capabilities';
import { cwAll, cwDate, cwPages, cwProfile, type CwNative } from './client';
import { vendorSession } from '../vendor-session';
import { pageToComplete } from '../read-dispatch';
import { mapLimit } from '../map-limit';
import {
  mapAddition, mapAgreement, mapBoard, mapCatalogItem, mapCompany, mapContact, mapMember, mapPriority, mapProject, mapStatus, mapTicket,
  vendorUpdatedAt,
} from './mapping';
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

/** Parallel per-ticket calls per page without a connection budget (tests of the connector alone). */
const PER_TICKET_CONCURRENCY = 4;

/**
 * Tickets read for a change in their stamp's second, per sync of the tickets: unsettled re-reads (stored
 * within their stamp's second, payload unchanged), and edits this sync stores within theirs (their notes
 * are counted, so that a note added later in that second shows as a grown count, not as a first count).
 * A note in that second hides behind an identical payload, but a bulk edit can leave thousands of such
 * tickets, and reading them all would spend the connection's hourly budget on a rare case. Past the
 * allowance they are taken as unchanged.
 */
const SAME_SECOND_READS_PER_SYNC = 100;

const NOTHING_STORED: StoredComparison = { settled: new Set(), unsettled: new Set(), touched: new Set(), edited: new Set(), editedUnsettled: new Set() };

/** Marks `field` of a record as filled (or not) by a call of the connector's own. */
function measuredField(rec: FetchedRecord<'tickets'>, field: string, filled: boolean): void {
  const list = filled ? 'measured' : 'unmeasured';
  rec[list] = [...(rec[list] ?? []), field];
}

/** Project ticket notes are not counted (a project ticket is not watched for notes). */
const countsNotes = (path: string) => path === '/service/tickets';

/** What a ticket's per-ticket calls read: its description and note count, or its note count only. */
type Reads = 'both' | 'count';

/**
 * The tickets of a page that get per-ticket calls (see the header): new ones, the ones a note touched (only
 * `_info` moved), and within the sync's same-second allowance unsettled re-reads (both calls) and edits
 * stored within their second (service tickets: the count); none on the baseline. Another edited ticket (a
 * field that is not bookkeeping moved) gets none: its event is ticket.updated whatever its notes did, and
 * its count and description stay as stored.
 */
function ticketsToRead(page: Page<'tickets'>, stored: StoredComparison, counted: boolean, allowance: { sameSecond: number }): Map<FetchedRecord<'tickets'>, Reads> {
  const out = new Map<FetchedRecord<'tickets'>, Reads>();
  const spend = () => allowance.sameSecond > 0 && allowance.sameSecond-- > 0;
  for (const r of page) {
    const id = r.sourceId;
    if (stored.settled.has(id)) continue;
    if (stored.edited.has(id)) {
      if (counted && stored.editedUnsettled.has(id) && spend()) out.set(r, 'count');
    } else if (!stored.unsettled.has(id) || spend()) out.set(r, 'both');
  }
  return out;
}

/**
 * The per-ticket calls of one page: for each ticket to read, its description (its first detail-description
 * note, both ticket kinds) and, for a service ticket, its note count; what is not read is marked unmeasured
 * (the store keeps its own).
 */
async function readTickets(ctx: SyncContext, path: string, page: Page<'tickets'>, wanted: Map<FetchedRecord<'tickets'>, Reads>): Promise<void> {
  const session = vendorSession(cwProfile, ctx);
  const counted = countsNotes(path);
  const calls: (() => Promise<void>)[] = [];
  for (const rec of page) {
    const reads = wanted.get(rec);
    if (reads === 'both') {
      calls.push(async () => {
        const res = await session.request<unknown>({
          path: `${path}/${rec.sourceId}/notes`,
          query: { conditions: 'detailDescriptionFlag = true', orderBy: 'id asc', pageSize: 1, page: 1 },
        });
        const notes = Array.isArray(res.body) ? (res.body as CwNative[]) : null;
        if (notes) rec.fields.description = typeof notes[0]?.text === 'string' ? notes[0].text : null;
        measuredField(rec, 'description', notes !== null);
      });
    } else measuredField(rec, 'description', false);
    if (reads && counted) {
      calls.push(async () => {
        const res = await session.request<{ count?: unknown }>({ path: `${path}/${rec.sourceId}/notes/count` });
        const count = res.body?.count;
        const filled = typeof count === 'number' && Number.isFinite(count);
        if (filled) rec.fields.noteCount = count;
        measuredField(rec, 'noteCount', filled);
      });
    } else measuredField(rec, 'noteCount', false);
  }
  // As many at once as the connection's budget admits (its concurrent limit); the budget keeps the total there.
  await mapLimit(calls, ctx.concurrency ?? PER_TICKET_CONCURRENCY, (call) => call());
}

async function* tickets(ctx: SyncContext): AsyncGenerator<Page<'tickets'>> {
  const conditions = sinceCondition('tickets', ctx);
  const allowance = { sameSecond: SAME_SECOND_READS_PER_SYNC };
  for (const path of ['/service/tickets', '/project/tickets']) {
    for await (const page of cwPages(ctx, path, conditions)) {
      const mapped = toPage<'tickets'>(page, (t) => mapTicket(t, ctx.statusMapping));
      if (ctx.baseline) {
        // The baseline makes no per-ticket call (see the header): nothing to complete.
        await readTickets(ctx, path, mapped, new Map());
        yield mapped;
        continue;
      }
      // The pipeline compares the page with the store, then completes it (types.ts, PageCompletion).
      yield pageToComplete(mapped, {
        bookkeeping: connectwiseCapabilities.bookkeepingFields,
        complete: (stored) => readTickets(ctx, path, mapped, ticketsToRead(mapped, stored ?? NOTHING_STORED, countsNotes(path), allowance)),
      });
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
    await vendorSession(cwProfile, ctx).send({ path: '/service/boards', query: { pageSize: 1 }, read: false });
  },
  fetch<R extends SyncResource>(resource: R, ctx: SyncContext): AsyncIterable<FetchedRecord<R>[]> {
    return fetchResource(resource, ctx) as AsyncIterable<FetchedRecord<R>[]>;
  },
  listIds(resource: SyncResource, ctx: SyncContext): AsyncIterable<string[]> | null {
    const paths = ID_LISTS[resource];
    return paths ? idPages(ctx, paths) : null;
  },
};
