/**
 * Kaseya BMS read connector (BMS API 2.0; every path below is in its OpenAPI, fixtures/vendor-api/kaseyabms):
 *   companies   GET /v2/crm/accounts/summary          Filter.ModifiedOnFrom (incremental)
 *   contacts    GET /v2/crm/contacts/summary          Filter.ModifiedOnFrom (incremental)
 *   members     GET /v2/hr/employees/lookup           (id and name)
 *   boards      GET /v2/system/queues/lookup          (queues)
 *   statuses    GET /v2/system/statuses/lookup        (TypeId 3: completed, see mapping.ts)
 *   priorities  GET /v2/system/priorities/lookup
 *   tickets     GET /v2/servicedesk/tickets           Filter.LastActivityUpdateFrom (incremental: BMS moves it on every change)
 *   agreements  GET /v2/finance/contracts/summary     read whole (no change filter)
 *   products    GET /v2/admin/finance/services/lookup the service catalogue a recurring service names
 *   projects    GET /v2/project/projects/summary
 * Agreement lines are not synced: BMS API 2.0 documents adding recurring services to a contract
 * (POST .../recurringservices/{contractId}/services) but no operation that reads them back.
 */
import type { FetchedRecord, ReadConnector, RecordFieldsByResource, SyncContext, SyncResource } from '../types';
import { bmsGet, bmsPages, parseBmsTime, type BmsRecord } from './client';
import {
  agreementFields, boardFields, companyFields, contactFields, memberFields, priorityFields, productFields, projectFields,
  statusFields, statusIndex, ticketFields,
} from './mapping';

type Fetched<R extends SyncResource> = FetchedRecord<R>;

function record<R extends SyncResource>(native: BmsRecord, updated: unknown, fields: RecordFieldsByResource[R]): Fetched<R> {
  return { sourceId: String(native.Id), native, vendorUpdatedAt: parseBmsTime(updated), fields };
}

/** A row BMS keys by its integer `Id`; anything else (null, not an object, no id) has nothing to key it by. */
const keyed = (r: unknown): r is BmsRecord => !!r && typeof r === 'object' && !Array.isArray(r) && Number.isInteger((r as BmsRecord).Id);

/** Each list's pages as records: a row without an id is skipped, the rest of the page goes on. */
async function* recordsOf<R extends SyncResource>(rows: AsyncIterable<BmsRecord[]>, map: (r: BmsRecord) => Fetched<R>): AsyncGenerator<Fetched<R>[]> {
  for await (const page of rows) {
    const mapped = page.filter(keyed).map(map);
    if (mapped.length > 0) yield mapped;
  }
}

/** BMS's date-time filters take ISO 8601. */
const sinceQuery = (ctx: SyncContext, filter: string): Record<string, string> => (ctx.since ? { [filter]: ctx.since.toISOString() } : {});

async function lookupList(ctx: SyncContext, path: string): Promise<BmsRecord[]> {
  const rows = await bmsGet<unknown>(ctx, path);
  if (!Array.isArray(rows)) throw new Error(`Kaseya BMS ${path} did not answer a list`);
  return rows.filter(keyed);
}

async function* tickets(ctx: SyncContext): AsyncGenerator<Fetched<'tickets'>[]> {
  const statuses = statusIndex(await lookupList(ctx, '/v2/system/statuses/lookup'));
  yield* recordsOf(bmsPages(ctx, '/v2/servicedesk/tickets', sinceQuery(ctx, 'Filter.LastActivityUpdateFrom')),
    (t) => record<'tickets'>(t, t.LastActivityUpdate ?? t.ModifiedOn, ticketFields(t, statuses, ctx.statusMapping)));
}

async function* companies(ctx: SyncContext): AsyncGenerator<Fetched<'companies'>[]> {
  yield* recordsOf(bmsPages(ctx, '/v2/crm/accounts/summary', sinceQuery(ctx, 'Filter.ModifiedOnFrom')), (a) => record<'companies'>(a, a.ModifiedOn, companyFields(a)));
}

async function* contacts(ctx: SyncContext): AsyncGenerator<Fetched<'contacts'>[]> {
  yield* recordsOf(bmsPages(ctx, '/v2/crm/contacts/summary', sinceQuery(ctx, 'Filter.ModifiedOnFrom')), (c) => record<'contacts'>(c, c.ModifiedOn, contactFields(c)));
}

async function* members(ctx: SyncContext): AsyncGenerator<Fetched<'members'>[]> {
  yield* recordsOf(bmsPages(ctx, '/v2/hr/employees/lookup'), (e) => record<'members'>(e, null, memberFields(e)));
}

async function* boards(ctx: SyncContext): AsyncGenerator<Fetched<'boards'>[]> {
  yield (await lookupList(ctx, '/v2/system/queues/lookup')).map((q) => record<'boards'>(q, null, boardFields(q)));
}

async function* statuses(ctx: SyncContext): AsyncGenerator<Fetched<'statuses'>[]> {
  yield (await lookupList(ctx, '/v2/system/statuses/lookup')).map((s) => record<'statuses'>(s, null, statusFields(s, ctx.statusMapping)));
}

async function* priorities(ctx: SyncContext): AsyncGenerator<Fetched<'priorities'>[]> {
  yield (await lookupList(ctx, '/v2/system/priorities/lookup')).map((p, i) => record<'priorities'>(p, null, priorityFields(p, i + 1)));
}

/** Account name -> id over every account (names only: the contract summary names its account by name). */
async function accountIdsByName(ctx: SyncContext): Promise<Map<string, string>> {
  const ids = new Map<string, string>();
  const seen = new Set<string>();
  for await (const page of bmsPages(ctx, '/v2/crm/accounts/summary')) {
    for (const a of page.filter(keyed)) {
      if (typeof a.AccountName !== 'string') continue;
      // Two accounts of one name name no company: the contract stays without one.
      if (seen.has(a.AccountName)) ids.delete(a.AccountName);
      else ids.set(a.AccountName, String(a.Id));
      seen.add(a.AccountName);
    }
  }
  return ids;
}

async function* agreements(ctx: SyncContext): AsyncGenerator<Fetched<'agreements'>[]> {
  const accountIds = await accountIdsByName(ctx);
  yield* recordsOf(bmsPages(ctx, '/v2/finance/contracts/summary'), (c) => record<'agreements'>(c, null, agreementFields(c, accountIds)));
}

async function* products(ctx: SyncContext): AsyncGenerator<Fetched<'products'>[]> {
  yield* recordsOf(bmsPages(ctx, '/v2/admin/finance/services/lookup'), (s) => record<'products'>(s, null, productFields(s)));
}

async function* projects(ctx: SyncContext): AsyncGenerator<Fetched<'projects'>[]> {
  yield* recordsOf(bmsPages(ctx, '/v2/project/projects/summary'), (p) => record<'projects'>(p, p.CreatedOn, projectFields(p)));
}

const FETCHERS: { [R in SyncResource]?: (ctx: SyncContext) => AsyncGenerator<Fetched<R>[]> } = {
  companies, contacts, members, boards, statuses, priorities, tickets, agreements, products, projects,
};

export const kaseyaBmsConnector: ReadConnector = {
  name: 'kaseyabms',
  kind: 'psa',
  resources: ['companies', 'contacts', 'members', 'boards', 'statuses', 'priorities', 'tickets', 'agreements', 'products', 'projects'],
  incremental: ['companies', 'contacts', 'tickets'],
  // The token, then GET /v2/system/statuses/lookup (a short list the ticket sync reads first).
  async probe(ctx: SyncContext): Promise<void> {
    await lookupList(ctx, '/v2/system/statuses/lookup');
  },
  fetch<R extends SyncResource>(resource: R, ctx: SyncContext): AsyncIterable<FetchedRecord<R>[]> {
    const fetcher = FETCHERS[resource] as ((c: SyncContext) => AsyncGenerator<FetchedRecord<R>[]>) | undefined;
    if (!fetcher) throw new Error(`the Kaseya BMS connector does not sync ${resource}`);
    return fetcher(ctx);
  },
};
