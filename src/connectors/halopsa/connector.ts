/**
 * HaloPSA read connector: the limited PSA connector of rule 14 of the interface document. It syncs
 * companies, contacts, tickets, projects, agreements and agreement lines, and on purpose no boards,
 * statuses, priorities or members (statuses and priorities are read internally, only to name what a
 * ticket carries as ids).
 *
 * Paging: `pageinate=true&page_size=100&page_no=N` (100 is Halo's documented maximum), in id order.
 * Incremental: `lastupdatefromdate` on Tickets, Projects, Client and Users; ClientContract and
 * RecurringInvoice have no last-updated filter, so agreements and their lines are read whole.
 * Agreement lines: Halo keeps a contract's priced recurring lines on the recurring invoices linked
 * to it (`contract_id`), read with `includelines=true`; each line is yielded with the line object as
 * its native payload.
 * Products: the item catalogue (`/api/Item`), read whole. A line names its item by `item_code` (the
 * item's code, its `sku` here); the line's `product_source_id` is that item's id, looked up once per
 * sync, so it is the product record's source id as on the other PSAs.
 */
import type { FetchedRecord, ReadConnector, RecordFieldsByResource, SyncContext, SyncResource } from '../types';
import { haloArray, haloGet, haloPages, haloQueryTime, parseHaloTime, type HaloRecord } from './client';
import {
  agreementFields, agreementLineFields, buildLookups, companyFields, contactFields, productFields, projectFields, ticketFields,
  type HaloLookups,
} from './mapping';
import { haloPsaChangedSince } from './changes';

type Fetched<R extends SyncResource> = FetchedRecord<R>;

function record<R extends SyncResource>(native: HaloRecord, updated: unknown, fields: RecordFieldsByResource[R]): Fetched<R> {
  return { sourceId: String(native.id), native, vendorUpdatedAt: parseHaloTime(updated), fields };
}

function sinceQuery(ctx: SyncContext): Record<string, string> {
  return ctx.since ? { lastupdatefromdate: haloQueryTime(ctx.since) } : {};
}

async function lookups(ctx: SyncContext): Promise<HaloLookups> {
  const [statuses, priorities] = await Promise.all([haloArray(ctx, 'Status'), haloArray(ctx, 'Priority')]);
  return buildLookups(statuses, priorities);
}

async function* tickets(ctx: SyncContext): AsyncGenerator<Fetched<'tickets'>[]> {
  const names = await lookups(ctx);
  for await (const page of haloPages(ctx, 'Tickets', 'tickets', sinceQuery(ctx))) {
    yield page.map((t) => record<'tickets'>(t, t.last_update ?? t.lastactiondate, ticketFields(t, names, ctx.statusMapping)));
  }
}

async function* projects(ctx: SyncContext): AsyncGenerator<Fetched<'projects'>[]> {
  const names = await lookups(ctx);
  for await (const page of haloPages(ctx, 'Projects', 'tickets', sinceQuery(ctx))) {
    yield page.map((p) => record<'projects'>(p, p.last_update ?? p.lastactiondate, projectFields(p, names)));
  }
}

async function* companies(ctx: SyncContext): AsyncGenerator<Fetched<'companies'>[]> {
  const query = { includeactive: true, includeinactive: true, ...sinceQuery(ctx) };
  for await (const page of haloPages(ctx, 'Client', 'clients', query)) {
    yield page.map((c) => record<'companies'>(c, c.alastupdate, companyFields(c)));
  }
}

async function* contacts(ctx: SyncContext): AsyncGenerator<Fetched<'contacts'>[]> {
  const query = { includeactive: true, includeinactive: true, ...sinceQuery(ctx) };
  for await (const page of haloPages(ctx, 'Users', 'users', query)) {
    yield page.map((u) => record<'contacts'>(u, u.ulastupdate, contactFields(u)));
  }
}

async function* agreements(ctx: SyncContext): AsyncGenerator<Fetched<'agreements'>[]> {
  for await (const page of haloPages(ctx, 'ClientContract', 'contracts', { includeinactive: true })) {
    yield page.map((c) => record<'agreements'>(c, c.last_modified, agreementFields(c)));
  }
}

/** Item code -> item id over the whole catalogue (inactive items too: old lines may bill them). */
async function itemIdsByCode(ctx: SyncContext): Promise<Map<string, string>> {
  const ids = new Map<string, string>();
  for await (const page of haloPages(ctx, 'Item', 'items', { includeactive: true, includeinactive: true })) {
    for (const i of page) if (typeof i.internalreference === 'string' && i.internalreference) ids.set(i.internalreference, String(i.id));
  }
  return ids;
}

async function* agreementLines(ctx: SyncContext): AsyncGenerator<Fetched<'agreement_lines'>[]> {
  const itemIds = await itemIdsByCode(ctx);
  for await (const invoices of haloPages(ctx, 'RecurringInvoice', 'invoices', { includelines: true })) {
    const lines: Fetched<'agreement_lines'>[] = [];
    for (const invoice of invoices) {
      for (const line of Array.isArray(invoice.lines) ? (invoice.lines as HaloRecord[]) : []) {
        const contractId = line.contract_id || invoice.contract_id;
        // A recurring invoice not tied to a contract bills no agreement.
        if (!contractId) continue;
        lines.push(record<'agreement_lines'>(line, invoice.last_modified, agreementLineFields(line, String(contractId), itemIds)));
      }
    }
    yield lines;
  }
}

async function* products(ctx: SyncContext): AsyncGenerator<Fetched<'products'>[]> {
  for await (const page of haloPages(ctx, 'Item', 'items', { includeactive: true, includeinactive: true })) {
    yield page.map((i) => record<'products'>(i, i.lastmodified, productFields(i)));
  }
}

const FETCHERS: { [R in SyncResource]?: (ctx: SyncContext) => AsyncGenerator<Fetched<R>[]> } = {
  companies, contacts, tickets, projects, agreements, agreement_lines: agreementLines, products,
};

export const haloPsaConnector: ReadConnector = {
  name: 'halopsa',
  kind: 'psa',
  resources: ['companies', 'contacts', 'tickets', 'projects', 'agreements', 'agreement_lines', 'products'],
  incremental: ['companies', 'contacts', 'tickets', 'projects'],
  changedSince: haloPsaChangedSince,
  // The client-credentials token, then GET /api/Status (the ticket statuses the sync reads first; a short list).
  async probe(ctx: SyncContext): Promise<void> {
    await haloGet(ctx, 'Status');
  },
  fetch<R extends SyncResource>(resource: R, ctx: SyncContext): AsyncIterable<FetchedRecord<R>[]> {
    const fetcher = FETCHERS[resource] as ((c: SyncContext) => AsyncGenerator<FetchedRecord<R>[]>) | undefined;
    if (!fetcher) throw new Error(`the HaloPSA connector does not sync ${resource}`);
    return fetcher(ctx);
  },
};
