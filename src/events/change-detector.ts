/**
 * Change detection: what a synced page changed, as events (docs/architecture.md, Events and webhooks). Pure: it gets the
 * stored row before the write and the fetched record after it, and says which event (if any) each
 * change is. Only changes a consumer could notice count: a canonical field, a vendor field that is
 * not bookkeeping (last-updated stamps, heartbeats), or a new note.
 */
import { createHash } from 'node:crypto';
import type { Connection } from '../../entities';
import type { FetchedRecord, SyncResource } from '../connectors/types';
import type { PageWriteResult, StoredRow } from '../sync/record-writer';
import type { EventKind, HealthType } from '../access/event-kinds';
import type { ConnectorCapabilities, LinkedRecord } from '../connectors/capabilities';
import { capabilitiesOf, recordUrl } from '../connectors/registry';
import { movedKeys, sameJson } from '../shared/same-json';

/** An event ready to insert (the events table's columns, camelCase). */
export interface EventDraft {
  connectionId: string | null;
  kind: EventKind;
  type: HealthType | null;
  dedupeKey: string;
  occurredAt: Date;
  actor: string | null;
  summary: string;
  subjectRef: string | null;
  incidentId: string | null;
  canonicalTicketId: string | null;
  canonicalDeviceId: string | null;
  canonicalCompanyId: string | null;
  previousStatus: string | null;
  newStatus: string | null;
  vendor: string | null;
  vendorId: string | null;
  vendorUrl: string | null;
  detail: Record<string, unknown>;
}

/** A draft with every optional field null: for events written outside change detection. */
export function eventDraft(d: Pick<EventDraft, 'kind' | 'dedupeKey' | 'summary'> & Partial<EventDraft>): EventDraft {
  return {
    connectionId: null, type: null, occurredAt: new Date(), actor: null, subjectRef: null, incidentId: null,
    canonicalTicketId: null, canonicalDeviceId: null, canonicalCompanyId: null, previousStatus: null, newStatus: null,
    vendor: null, vendorId: null, vendorUrl: null, detail: {}, ...d,
  };
}

/** Canonical fields that are bookkeeping too (or, for notes, judged on their own). */
const IGNORED_FIELDS: Partial<Record<SyncResource, ReadonlySet<string>>> = {
  tickets: new Set(['noteCount']),
  devices: new Set(['lastContactAt']),
};

const SNAKE = new Map<string, string>();
const snake = (prop: string) => {
  let column = SNAKE.get(prop);
  if (column === undefined) SNAKE.set(prop, (column = prop.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)));
  return column;
};

/** Equality of a fetched field and its stored column (timestamps as instants, numerics as numbers). */
function sameValue(next: unknown, stored: unknown): boolean {
  if (next == null || stored == null) return (next == null) === (stored == null);
  if (next instanceof Date || stored instanceof Date) {
    const a = new Date(next as Date | string).getTime();
    const b = new Date(stored as Date | string).getTime();
    return a === b;
  }
  if (typeof next === 'number' && typeof stored === 'string') return next === Number(stored);
  if (typeof next === 'object' || typeof stored === 'object') return sameJson(next, stored);
  return next === stored;
}

/**
 * The canonical fields that moved. A field this read did not measure (FetchedRecord.unmeasured) is stored
 * as it was, so it did not move; one measured now but stored null was not measured before (a
 * description after the baseline), so its first measurement is not a change either.
 */
function changedFields(resource: SyncResource, record: FetchedRecord, before: StoredRow): string[] {
  const ignored = IGNORED_FIELDS[resource];
  const fields = record.fields as unknown as Record<string, unknown>;
  const out: string[] = [];
  for (const prop in fields) {
    if (ignored?.has(prop) || record.unmeasured?.includes(prop)) continue;
    const column = snake(prop);
    if (sameValue(fields[prop], before[column])) continue;
    if (before[column] == null && record.measured?.includes(prop)) continue;
    out.push(column);
  }
  return out;
}

/**
 * A new note on the ticket: the connector's note count grew, or (a connector whose ticket list has no
 * count) the stamp field it declares moved, which its vendor sets only when a note is added.
 * A count that grew from a 0 that may be uncounted is believed only when the payload moved and
 * nothing else on the ticket changed: then the ticket was touched by something invisible on it, and
 * that something was a note. (An unmoved payload whose count grew from 0 is a first count, not a note.)
 */
function noteAdded({ notes }: ConnectorCapabilities, record: FetchedRecord<'tickets'>, before: StoredRow, otherChanges: boolean, payloadMoved: boolean): boolean {
  const was = Number(before.note_count ?? 0);
  if (notes.counted !== 'never' && record.fields.noteCount > was) {
    if (notes.counted !== 'sometimes' || was > 0) return true;
    return !otherChanges && payloadMoved;
  }
  if (notes.stampField) {
    const stamp = (before.raw as Record<string, unknown> | undefined)?.[notes.stampField];
    const now = record.native[notes.stampField];
    return typeof now === 'string' && now !== stamp;
  }
  return false;
}

/** A written record with its payload's hash as stored (PageWriteResult): what an event's dedupe key is made of. */
type Written<R extends SyncResource = SyncResource> = { record: FetchedRecord<R>; hash: string };
/** An update of a page's write, its record of one resource. */
type Updated<R extends SyncResource> = Omit<PageWriteResult['updated'][number], 'record'> & { record: FetchedRecord<R> };

export interface DetectScope {
  tenantId: string;
  connection: Pick<Connection, 'id' | 'kind' | 'connector' | 'baseUrl'>;
  resource: SyncResource;
}

export class ChangeDetector {
  constructor(private readonly scope: DetectScope, private readonly now: Date = new Date()) {}

  private capabilities?: ConnectorCapabilities;
  private skip?: ReadonlySet<string>;
  private linkBaseUrl?: URL | null;

  /** The connector's capabilities (its notes, bookkeeping keys, actor and record links), asked of the registry once per page. */
  private caps(): ConnectorCapabilities {
    return (this.capabilities ??= capabilitiesOf(this.scope.connection.connector));
  }

  /** The connector's bookkeeping keys (capabilities), once per page. */
  private bookkeeping(): ReadonlySet<string> {
    return (this.skip ??= new Set(this.caps().bookkeepingFields));
  }

  /** The connection's base URL, parsed once per page for the events' record links. */
  private linkBase(): URL | null {
    if (this.linkBaseUrl === undefined) {
      try { this.linkBaseUrl = new URL(this.scope.connection.baseUrl); } catch { this.linkBaseUrl = null; }
    }
    return this.linkBaseUrl;
  }

  detect(result: PageWriteResult): EventDraft[] {
    const out: EventDraft[] = [];
    if (!this.watched()) return out;
    out.push(...this.detectCreated(result.created));
    out.push(...this.detectUpdated(result.updated));
    for (const d of result.deleted ?? []) out.push(this.deleted(d));
    return out;
  }

  /** The events of a page's new records alone, in their order. */
  detectCreated(created: PageWriteResult['created']): EventDraft[] {
    return this.watched() ? created.flatMap((c) => this.created(c)) : [];
  }

  /** The events of a page's updates alone: what detect says of them, in their order (also before the write: RecordWriter.expect). */
  detectUpdated(updated: PageWriteResult['updated']): EventDraft[] {
    const out: EventDraft[] = [];
    if (!this.watched()) return out;
    for (const u of updated) {
      // A forced full sync rewrites unchanged rows too; the payload (or a measured field) decides whether anything changed.
      // The hash is the one the page's plan stored (PageWriteResult): the writer is not asked again.
      const payloadMoved = u.before.raw_hash !== u.hash;
      if (!payloadMoved && !u.measuredChanged) continue;
      out.push(...this.updated(u, payloadMoved));
    }
    return out;
  }

  /** Whether the resource raises events on this kind of connection. */
  private watched(): boolean {
    const { resource, connection } = this.scope;
    return (resource === 'tickets' || resource === 'companies') ? connection.kind === 'psa'
      : resource === 'devices' ? connection.kind === 'rmm' : false;
  }

  /** A record the vendor no longer lists (sync/deletions.ts): `<family>.deleted`, same grants as its family. */
  private deleted(row: StoredRow): EventDraft {
    const { connection, resource } = this.scope;
    const family = resource === 'tickets' ? 'ticket' : resource === 'devices' ? 'device' : 'company';
    const label = resource === 'devices' ? String(row.hostname ?? row.source_id) : resource === 'companies' ? String(row.name ?? row.source_id) : row.source_id;
    return {
      connectionId: connection.id, type: null, occurredAt: this.now, actor: null, subjectRef: row.source_id, incidentId: null,
      canonicalTicketId: family === 'ticket' ? row.id : null,
      canonicalDeviceId: family === 'device' ? row.id : null,
      canonicalCompanyId: family === 'company' ? row.id : null,
      previousStatus: family === 'ticket' ? ((row.status as string | null) ?? null) : null, newStatus: null,
      vendor: connection.connector, vendorId: row.source_id, vendorUrl: null,
      kind: `${family}.deleted`,
      // One deletion per stored row: the row's id is unique, so a retried pass finds its event taken.
      dedupeKey: `${connection.id}:${row.source_id}:${row.id}:${family}.deleted`,
      summary: `${family === 'ticket' ? 'Ticket' : family === 'device' ? 'Device' : 'Company'} ${label} deleted`,
      detail: { changed: [] },
    };
  }

  private base(record: FetchedRecord, linked: LinkedRecord, created: boolean, ids: Partial<EventDraft>) {
    const { connection } = this.scope;
    return {
      connectionId: connection.id,
      type: null,
      occurredAt: record.vendorUpdatedAt ?? this.now,
      // Who made the change, when the vendor says so (the connector declares how).
      actor: this.caps().actor?.(record.native, created) ?? null,
      subjectRef: record.sourceId,
      incidentId: null,
      canonicalTicketId: null,
      canonicalDeviceId: null,
      canonicalCompanyId: null,
      previousStatus: null,
      newStatus: null,
      vendor: connection.connector,
      vendorId: record.sourceId,
      vendorUrl: recordUrl(connection.connector, this.linkBase(), linked, record.sourceId),
      ...ids,
    };
  }

  /**
   * `${connection_id}:${source_id}:${raw_hash}:${kind}`, then a hash of the measured fields' values when
   * the read measured any (a note in the same second leaves the payload as it was): a repeated or retried
   * sync finds it taken. A hash, not the values: a measured description can be longer than a unique
   * index entry may be.
   */
  private dedupeKey({ record, hash }: Written, kind: string): string {
    const key = `${this.scope.connection.id}:${record.sourceId}:${hash}:${kind}`;
    if (!record.measured?.length) return key;
    const fields = record.fields as unknown as Record<string, unknown>;
    const measured = JSON.stringify(record.measured.map((f) => fields[f] ?? null));
    return `${key}:${createHash('sha256').update(measured).digest('hex').slice(0, 32)}`;
  }

  private created(written: Written & { id: string }): EventDraft[] {
    const { record, id } = written;
    switch (this.scope.resource) {
      case 'tickets': {
        const t = record as FetchedRecord<'tickets'>;
        return [{
          ...this.base(record, 'ticket', true, { canonicalTicketId: id, newStatus: t.fields.status }),
          kind: 'ticket.created', dedupeKey: this.dedupeKey(written, 'ticket.created'),
          summary: `Ticket ${record.sourceId} created`, detail: { changed: [] },
        }];
      }
      case 'devices': {
        const d = record as FetchedRecord<'devices'>;
        const events: EventDraft[] = [{
          ...this.base(record, 'device', true, { canonicalDeviceId: id }),
          kind: 'device.created', dedupeKey: this.dedupeKey(written, 'device.created'),
          summary: `Device ${d.fields.hostname} created`, detail: { changed: [] },
        }];
        // A device that arrives needing attention starts needing it now, as far as the feed knows.
        if (d.fields.needsAttention) events.push(this.health({ ...written, record: d }, id, 'attention_needed'));
        return events;
      }
      case 'companies': {
        const c = record as FetchedRecord<'companies'>;
        return [{
          ...this.base(record, 'company', true, { canonicalCompanyId: id }),
          kind: 'company.created', dedupeKey: this.dedupeKey(written, 'company.created'),
          summary: `Company ${c.fields.name} created`, detail: { changed: [] },
        }];
      }
      default:
        return [];
    }
  }

  private updated(written: PageWriteResult['updated'][number], payloadMoved: boolean): EventDraft[] {
    const { record, id, before } = written;
    const changed = changedFields(this.scope.resource, record, before);
    const vendorFields = movedKeys(record.native, before.raw, this.bookkeeping());
    switch (this.scope.resource) {
      case 'tickets': return this.ticketUpdated({ ...written, record: record as FetchedRecord<'tickets'> }, changed, vendorFields, payloadMoved);
      case 'devices': return this.deviceUpdated({ ...written, record: record as FetchedRecord<'devices'> }, changed, vendorFields);
      case 'companies': {
        if (changed.length === 0 && vendorFields.length === 0) return [];
        const c = record as FetchedRecord<'companies'>;
        const renamed = changed.includes('name');
        return [{
          ...this.base(record, 'company', false, { canonicalCompanyId: id }),
          kind: 'company.updated', dedupeKey: this.dedupeKey(written, 'company.updated'),
          summary: renamed ? `Company ${String(before.name)} renamed to ${c.fields.name}` : `Company ${c.fields.name} updated`,
          detail: { changed, vendor_fields: vendorFields },
        }];
      }
      default:
        return [];
    }
  }

  /**
   * One event per ticket per sync: closing or reopening wins, then a note that is the only change,
   * then any other change. The detail lists every change (a closing note shows as `notes` too).
   */
  private ticketUpdated(
    written: Updated<'tickets'>, changed: string[], vendorFields: string[], payloadMoved: boolean,
  ): EventDraft[] {
    const { record, id, before } = written;
    const noted = noteAdded(this.caps(), record, before, changed.length > 0 || vendorFields.length > 0, payloadMoved);
    if (changed.length === 0 && vendorFields.length === 0 && !noted) return [];
    const wasClosed = before.closed === true;
    const isClosed = record.fields.closed;
    const n = record.sourceId;
    let kind: EventKind;
    let summary: string;
    if (!wasClosed && isClosed) {
      kind = 'ticket.closed';
      summary = `Ticket ${n} closed`;
    } else if (wasClosed && !isClosed) {
      kind = 'ticket.reopened';
      summary = `Ticket ${n} reopened`;
    } else if (noted && changed.length === 0 && vendorFields.length === 0) {
      kind = 'ticket.noted';
      summary = `Note added to ticket ${n}`;
    } else {
      kind = 'ticket.updated';
      const prev = before.status as string | null;
      const next = record.fields.status;
      summary = changed.includes('status') ? `Ticket ${n} moved from ${prev ?? 'unmapped'} to ${next ?? 'unmapped'}` : `Ticket ${n} updated`;
    }
    return [{
      ...this.base(record, 'ticket', false, {
        canonicalTicketId: id, previousStatus: (before.status as string | null) ?? null, newStatus: record.fields.status,
      }),
      kind, dedupeKey: this.dedupeKey(written, kind), summary,
      detail: { changed: noted ? [...changed, 'notes'] : changed, vendor_fields: vendorFields },
    }];
  }

  private deviceUpdated(written: Updated<'devices'>, changed: string[], vendorFields: string[]): EventDraft[] {
    const { record, id, before } = written;
    if (changed.length === 0 && vendorFields.length === 0) return [];
    const f = record.fields;
    const wasAttention = before.needs_attention === true;
    let summary = `Device ${f.hostname} updated`;
    if (changed.includes('online')) summary = f.online ? `Device ${f.hostname} came online` : `Device ${f.hostname} went offline`;
    else if (changed.includes('needs_attention')) summary = f.needsAttention ? `Device ${f.hostname} needs attention` : `Device ${f.hostname} no longer needs attention`;
    const events: EventDraft[] = [{
      ...this.base(record, 'device', false, { canonicalDeviceId: id }),
      kind: 'device.updated', dedupeKey: this.dedupeKey(written, 'device.updated'), summary,
      detail: { changed, vendor_fields: vendorFields },
    }];
    if (!wasAttention && f.needsAttention) events.push(this.health(written, id, 'attention_needed'));
    if (wasAttention && !f.needsAttention) events.push(this.health(written, id, 'resolved'));
    return events;
  }

  private health(written: Written<'devices'>, id: string, type: HealthType): EventDraft {
    const { record } = written;
    const host = record.fields.hostname;
    return {
      ...this.base(record, 'device', false, { canonicalDeviceId: id }),
      actor: null,
      kind: 'health', type,
      dedupeKey: this.dedupeKey(written, `health.${type}`),
      summary: type === 'attention_needed' ? `Device ${host} needs attention` : `Device ${host} no longer needs attention`,
      detail: { source: 'device' },
    };
  }
}
