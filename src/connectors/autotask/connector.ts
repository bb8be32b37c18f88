/**
 * Autotask PSA read connector (REST API v1.0).
 *
 * - boards, statuses, priorities: the queueID, status and priority picklists of
 *   `GET Tickets/entityInformation/fields` (sourceId = picklist value, native = the picklist value).
 * - members: Resources (memberRef = resource id, what TimeEntries.resourceID takes).
 * - companies, contacts, tickets, projects, agreements (Contracts), agreement_lines (ContractServices):
 *   `POST <Entity>/query` with MaxRecords 500, then each `nextPageUrl` through the vendor session until
 *   there is none (see client.ts).
 * - products: Services, the recurring services contracts bill (ContractServices.serviceID).
 * - Incremental: tickets and companies with `lastActivityDate gte <since>` (Autotask bumps it on every
 *   change, note and time entry); everything else is read in full.
 * - Lookups per page, so a page needs a bounded number of extra calls: company names (Companies by
 *   id), ticket note counts (TicketNotes by ticketID), service names and current units
 *   (Services, ContractServiceUnits).
 */
import type { FetchedRecord, ReadConnector, SyncContext, SyncResource } from '../types';
import { unsupportedResource } from '../read-dispatch';
import { ALL, entityFields, picklist, probeQuery, queryIn, queryPages, type FilterItem, type Native, type PicklistValue } from './client';
import {
  isCurrentPeriod, mapAgreement, mapAgreementLine, mapBoard, mapCompany, mapContact, mapMember, mapPriority, mapProject,
  mapService, mapStatus, mapTicket,
} from './mapping';
import { autotaskChangedSince } from './changes';

const sinceFilter = (ctx: SyncContext, field: string): FilterItem[] =>
  ctx.since ? [{ op: 'gte', field, value: ctx.since.toISOString() }] : ALL;

async function companyNames(ctx: SyncContext, rows: Native[]): Promise<Map<string, string>> {
  const found = await queryIn(ctx, 'Companies', 'id', rows.map((r) => r.companyID), ['id', 'companyName']);
  return new Map(found.map((c) => [String(c.id), String(c.companyName ?? '')]));
}

function groupBy(rows: Native[], key: string): Map<string, Native[]> {
  const out = new Map<string, Native[]>();
  for (const r of rows) {
    const k = String(r[key]);
    const list = out.get(k);
    if (list) list.push(r);
    else out.set(k, [r]);
  }
  return out;
}

async function* picklistResource<R extends 'boards' | 'statuses' | 'priorities'>(
  ctx: SyncContext,
  field: string,
  map: (p: PicklistValue) => FetchedRecord<R>,
): AsyncGenerator<FetchedRecord<R>[]> {
  const values = [...picklist(await entityFields(ctx, 'Tickets'), field).values()];
  if (values.length) yield values.map(map);
}

async function* fetchTickets(ctx: SyncContext): AsyncGenerator<FetchedRecord<'tickets'>[]> {
  const fields = await entityFields(ctx, 'Tickets');
  const base = {
    statuses: picklist(fields, 'status'),
    priorities: picklist(fields, 'priority'),
    queues: picklist(fields, 'queueID'),
    ticketTypes: picklist(fields, 'ticketType'),
    statusMapping: ctx.statusMapping,
  };
  for await (const page of queryPages(ctx, 'Tickets', sinceFilter(ctx, 'lastActivityDate'))) {
    const notes = await queryIn(ctx, 'TicketNotes', 'ticketID', page.map((t) => t.id), ['id', 'ticketID']);
    const noteCounts = new Map<string, number>();
    for (const n of notes) noteCounts.set(String(n.ticketID), (noteCounts.get(String(n.ticketID)) ?? 0) + 1);
    const lookups = { ...base, companyNames: await companyNames(ctx, page), noteCounts };
    yield page.map((t) => mapTicket(t, lookups));
  }
}

async function* fetchProjects(ctx: SyncContext): AsyncGenerator<FetchedRecord<'projects'>[]> {
  const fields = await entityFields(ctx, 'Projects');
  const base = { statuses: picklist(fields, 'status'), types: picklist(fields, 'projectType') };
  for await (const page of queryPages(ctx, 'Projects', ALL)) {
    const lookups = { ...base, companyNames: await companyNames(ctx, page) };
    yield page.map((p) => mapProject(p, lookups));
  }
}

async function* fetchAgreements(ctx: SyncContext): AsyncGenerator<FetchedRecord<'agreements'>[]> {
  const periodTypes = picklist(await entityFields(ctx, 'Contracts'), 'contractPeriodType');
  const now = ctx.now?.() ?? Date.now();
  for await (const page of queryPages(ctx, 'Contracts', ALL)) {
    const units = await queryIn(ctx, 'ContractServiceUnits', 'contractID', page.map((c) => c.id));
    // Per contract: the rows of the billing period covering today (ended contracts have none).
    const currentUnits = new Map<string, Native[]>();
    for (const [contractId, rows] of groupBy(units, 'contractID')) currentUnits.set(contractId, rows.filter((r) => isCurrentPeriod(r, now)));
    const lookups = { periodTypes, companyNames: await companyNames(ctx, page), currentUnits };
    yield page.map((c) => mapAgreement(c, lookups));
  }
}

async function* fetchAgreementLines(ctx: SyncContext): AsyncGenerator<FetchedRecord<'agreement_lines'>[]> {
  const now = ctx.now?.() ?? Date.now();
  for await (const page of queryPages(ctx, 'ContractServices', ALL)) {
    const services = await queryIn(ctx, 'Services', 'id', page.map((s) => s.serviceID), ['id', 'name']);
    const units = await queryIn(ctx, 'ContractServiceUnits', 'contractServiceID', page.map((s) => s.id));
    const lookups = {
      serviceNames: new Map(services.map((s) => [String(s.id), String(s.name ?? '')])),
      units: groupBy(units, 'contractServiceID'),
      now,
    };
    yield page.map((s) => mapAgreementLine(s, lookups));
  }
}

async function* simple<R extends SyncResource>(
  ctx: SyncContext,
  entity: string,
  filter: FilterItem[],
  map: (n: Native) => FetchedRecord<R>,
): AsyncGenerator<FetchedRecord<R>[]> {
  for await (const page of queryPages(ctx, entity, filter)) yield page.map(map);
}


function fetchResource(resource: SyncResource, ctx: SyncContext): AsyncIterable<FetchedRecord[]> {
  switch (resource) {
    case 'boards': return picklistResource(ctx, 'queueID', mapBoard);
    case 'statuses': return picklistResource(ctx, 'status', (p) => mapStatus(p, ctx.statusMapping));
    case 'priorities': return picklistResource(ctx, 'priority', mapPriority);
    case 'members': return simple(ctx, 'Resources', ALL, mapMember);
    case 'companies': return simple(ctx, 'Companies', sinceFilter(ctx, 'lastActivityDate'), mapCompany);
    case 'contacts': return simple(ctx, 'Contacts', ALL, mapContact);
    case 'tickets': return fetchTickets(ctx);
    case 'projects': return fetchProjects(ctx);
    case 'agreements': return fetchAgreements(ctx);
    case 'agreement_lines': return fetchAgreementLines(ctx);
    case 'products': return simple(ctx, 'Services', ALL, mapService);
    default: return unsupportedResource('autotask', resource);
  }
}

export const autotaskConnector: ReadConnector = {
  name: 'autotask',
  kind: 'psa',
  resources: ['boards', 'statuses', 'priorities', 'members', 'companies', 'contacts', 'tickets', 'projects', 'agreements', 'agreement_lines', 'products'],
  incremental: ['companies', 'tickets'],
  changedSince: autotaskChangedSince,
  probe: probeQuery,
  fetch<R extends SyncResource>(resource: R, ctx: SyncContext): AsyncIterable<FetchedRecord<R>[]> {
    return fetchResource(resource, ctx) as AsyncIterable<FetchedRecord<R>[]>;
  },
};
