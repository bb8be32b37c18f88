/**
 * Change detection rules that the end-to-end tests (test/events-*.test.ts) cannot reach through
 * the sandbox: vendors without a sandbox tenant, payloads as jsonb hands them back, forced rewrites.
 */
import type { FetchedRecord } from '../connectors/types';
import { createHash } from 'node:crypto';
import type { PageWriteResult, StoredRow } from '../sync/record-writer';
import { ChangeDetector } from './change-detector';

const ticketFields = (over: Partial<FetchedRecord<'tickets'>['fields']> = {}): FetchedRecord<'tickets'>['fields'] => ({
  summary: 'Printer offline', description: null, status: 'new', nativeStatus: 'New', statusSourceId: '1', priority: 'medium',
  nativePriority: 'Medium', prioritySourceId: '2', boardSourceId: '1', boardName: 'Service Desk', companyName: 'Contoso',
  companySourceId: '5', projectSourceId: null, recordType: 'ServiceTicket', closed: false, noteCount: 0,
  openedAt: new Date('2026-11-01T09:00:00Z'), closedAt: null, ...over,
});

/** A clean payload's hash as the writer stores it (raw_hash): its JSON text's sha256. */
const payloadHash = (native: Record<string, unknown>) => createHash('sha256').update(JSON.stringify(native)).digest('hex');

/** A record as the page's write reports it: with its payload's hash. */
const written = <R extends FetchedRecord>(record: R) => ({ record, hash: payloadHash(record.native) });

/** The stored row of a fetched ticket, as the store hands it back (snake_case, jsonb key order). */
function stored(rec: FetchedRecord<'tickets'>, raw: Record<string, unknown> = rec.native): StoredRow {
  const row: StoredRow = { id: 'row-1', source_id: rec.sourceId, raw_hash: payloadHash(rec.native), raw };
  for (const [k, v] of Object.entries(rec.fields)) row[k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)] = v;
  return row;
}

function detect(connector: string, kind: 'psa' | 'distributor', resource: 'tickets' | 'companies', result: PageWriteResult) {
  return new ChangeDetector({
    tenantId: 't', resource,
    connection: { id: 'c', kind, connector: connector as never, baseUrl: 'https://webservices5.autotask.net/atservicesrest/v1.0' },
  }).detect(result);
}

describe('change detection', () => {
  const native = { id: 9, title: 'Printer offline', status: 1, meta: { a: 1, b: 2 }, lastActivityDate: '2026-11-20T10:00:00Z' };
  const before: FetchedRecord<'tickets'> = { sourceId: '9', native, vendorUpdatedAt: null, fields: ticketFields() };

  it('a forced rewrite of an unchanged payload is no event', () => {
    expect(detect('autotask', 'psa', 'tickets', { created: [], updated: [{ ...written(before), id: 'row-1', before: stored(before) }], unchanged: 0 })).toEqual([]);
  });

  it('a payload whose objects come back from the store with reordered keys is not a change', () => {
    const touched = { ...before, native: { ...native, lastActivityDate: '2026-11-21T10:00:00Z' } };
    const reordered = { ...native, meta: { b: 2, a: 1 } };
    expect(detect('autotask', 'psa', 'tickets', { created: [], updated: [{ ...written(touched), id: 'row-1', before: stored(before, reordered) }], unchanged: 0 })).toEqual([]);
  });

  it('a connector that always counts notes (Autotask) reports a new note next to other changes', () => {
    const after = { ...before, native: { ...native, status: 5 }, fields: ticketFields({ status: 'in_progress', nativeStatus: 'In Progress', statusSourceId: '5', noteCount: 1 }) };
    const [e] = detect('autotask', 'psa', 'tickets', { created: [], updated: [{ ...written(after), id: 'row-1', before: stored(before) }], unchanged: 0 });
    expect(e).toMatchObject({ kind: 'ticket.updated', previousStatus: 'new', newStatus: 'in_progress', vendorUrl: 'https://ww5.autotask.net/Mvc/ServiceDesk/TicketDetail.mvc?ticketId=9' });
    expect(e.detail).toEqual({ changed: ['status', 'native_status', 'status_source_id', 'notes'], vendor_fields: ['status'] });
  });

  it('a distributor company (Pax8) is not a company event: company events are PSA companies', () => {
    const company: FetchedRecord<'companies'> = { sourceId: 'p1', native: { id: 'p1', name: 'Contoso' }, vendorUpdatedAt: null, fields: { name: 'Contoso', identifier: null } };
    expect(detect('pax8', 'distributor', 'companies', { created: [{ ...written(company), id: 'row-2' }], updated: [], unchanged: 0 })).toEqual([]);
  });
});

