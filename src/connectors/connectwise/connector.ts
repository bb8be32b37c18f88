/**
 * ConnectWise PSA (Manage) read connector, REST API 3.0.
 *
 * - Pages of 1000 (ConnectWise's maximum), ordered by id, following the Link header's rel="next".
 * - Incremental (tickets, companies, contacts, projects, agreements): `lastUpdated >= [since]`.
 *   Inclusive on purpose: ConnectWise timestamps have whole seconds, so a record changed in the
 *   same second as the watermark would be lost with `>`; records read twice are dropped by the
 *   sync engine's raw-hash comparison.
 * - Tickets are service tickets (/service/tickets) then project tickets (/project/tickets); both
 *   share ConnectWise's ticket id space. Notes are not fetched per ticket: `description` is null and
 *   `noteCount` 0.
 * - Statuses are read per board, agreement lines (additions) per agreement.
 * - A baseline project is one whose project type is named "Baseline" (`type.name`).
 */
import type { FetchedRecord, ReadConnector, RecordFieldsByResource, SyncContext, SyncResource } from '../types';
import { cwAll, cwDate, cwPages, type CwNative } from './client';
import {
  mapAddition, mapAgreement, mapBoard, mapCompany, mapContact, mapMember, mapPriority, mapProject, mapStatus, mapTicket,
  vendorUpdatedAt,
} from './mappers';

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

async function* tickets(ctx: SyncContext): AsyncGenerator<Page<'tickets'>> {
  const conditions = sinceCondition('tickets', ctx);
  for (const path of ['/service/tickets', '/project/tickets']) {
    for await (const page of cwPages(ctx, path, conditions)) yield toPage<'tickets'>(page, (t) => mapTicket(t, ctx.statusMapping));
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
    default: throw new Error(`connectwise does not sync ${resource}`);
  }
}

export const connectwiseConnector: ReadConnector = {
  name: 'connectwise',
  kind: 'psa',
  resources: ['boards', 'statuses', 'priorities', 'members', 'companies', 'contacts', 'tickets', 'projects', 'agreements', 'agreement_lines'],
  incremental: INCREMENTAL,
  fetch<R extends SyncResource>(resource: R, ctx: SyncContext): AsyncIterable<FetchedRecord<R>[]> {
    return fetchResource(resource, ctx) as AsyncIterable<FetchedRecord<R>[]>;
  },
};
