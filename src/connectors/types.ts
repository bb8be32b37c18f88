/**
 * The contract between the sync engine and each vendor connector (read side).
 * A connector is a real HTTP client of its vendor's API: it authenticates, pages with the largest
 * page the vendor allows, applies the vendor's last-updated filter when `since` is set, and maps each
 * native record to canonical fields while handing the native payload back untouched.
 */
import type { ConnectionKind, ConnectorName } from '../../entities/tenancy';
import type {
  AgreementLineRecord, AgreementRecord, BoardRecord, CompanyRecord, ContactRecord, DeviceRecord,
  IncidentRecord, InstalledApplicationRecord, MemberRecord, PackageRecord, PriorityRecord, ProductRecord, ProjectRecord, StatusRecord,
  SubscriptionRecord, TicketRecord,
} from '../../entities/records';
import type { SyncedRecord } from '../../entities/base';
import type { VendorHttpClient } from './vendor-http';

type FieldsOf<T> = Omit<T, keyof SyncedRecord>;

export interface RecordFieldsByResource {
  tickets: FieldsOf<TicketRecord>;
  companies: FieldsOf<CompanyRecord>;
  contacts: FieldsOf<ContactRecord>;
  members: FieldsOf<MemberRecord>;
  boards: FieldsOf<BoardRecord>;
  statuses: FieldsOf<StatusRecord>;
  priorities: FieldsOf<PriorityRecord>;
  devices: FieldsOf<DeviceRecord>;
  applications: FieldsOf<InstalledApplicationRecord>;
  incidents: FieldsOf<IncidentRecord>;
  agreements: FieldsOf<AgreementRecord>;
  agreement_lines: FieldsOf<AgreementLineRecord>;
  projects: FieldsOf<ProjectRecord>;
  products: FieldsOf<ProductRecord>;
  subscriptions: FieldsOf<SubscriptionRecord>;
  packages: FieldsOf<PackageRecord>;
}
export type SyncResource = keyof RecordFieldsByResource;

export interface FetchedRecord<R extends SyncResource = SyncResource> {
  /** The record's id in the vendor system, as a string. */
  sourceId: string;
  /** The vendor payload exactly as the vendor returned it (never modified). */
  native: Record<string, unknown>;
  /** The vendor's last-updated time of this record, if it has one. */
  vendorUpdatedAt: Date | null;
  fields: RecordFieldsByResource[R];
  /**
   * Fields the connector filled with calls of their own (a note count) rather than from `native`: a
   * change in one of them is a change even when the payload is byte-identical (a note added in the
   * same second as the stored edit). Absent when the read did not fill them (the store keeps its own).
   */
  measured?: readonly string[];
  /** Fields this read could not fill (a full read counts no notes): a stored row keeps its own values. */
  unmeasured?: readonly string[];
}

export interface SyncContext {
  /** Connection base URL, e.g. https://host/v4_6_release/apis/3.0 (no trailing slash). */
  baseUrl: string;
  /** Decrypted credentials; never log them. */
  credentials: Record<string, string>;
  /** Vendor status name -> canonical status, from the connection. */
  statusMapping: Record<string, string>;
  /** Incremental watermark for this resource: only records updated at or after it. Null: full sync. */
  since: Date | null;
  http: VendorHttpClient;
  /** The vendor's day, as ms since the epoch (default the wall clock; tests fix it so no mapping depends on when they run). */
  now?: () => number;
  /** Calls the connection's budget lets run at once: the bound for per-record calls (note counts). */
  concurrency?: number;
  /**
   * The resource's first sync (sync.service.ts): an import that raises no events, so a connector may skip
   * per-record calls whose only use is telling one change from another (ConnectWise's note counts).
   */
  baseline?: boolean;
  /**
   * A read the resources of one sync share (sync.service.ts): the first resource to ask runs `read`, the
   * later ones in that sync get its answer. Use through `readOnce` (read-dispatch.ts).
   */
  shared?: <T>(key: string, read: () => Promise<T>) => Promise<T>;
}

/**
 * What a page still needs once the sync knows how its records stand against the store: a connector that
 * spends per-record calls only where they can tell something (ConnectWise's note counts) returns its page
 * with this, and the sync pipeline compares the page with the store (record-writer.ts `compareStored`)
 * and completes it before preparing it, so no connector reads the store in the middle of a fetch.
 */
export interface PageCompletion {
  /** The native keys that moving alone does not make a change (the connector's `bookkeepingFields`). */
  bookkeeping: readonly string[];
  /** Fills what the page lacks; `stored` null: nothing to compare with (every record is taken as new). */
  complete(stored: StoredComparison | null): Promise<void>;
}

/** A page of a fetch: its records, and what completes them where the connector needs the store's answer. */
export type FetchedPage<R extends SyncResource = SyncResource> = FetchedRecord<R>[] & { readonly completion?: PageCompletion };

/**
 * Source ids of a page by how each record stands against the store; a record in none of the sets is new.
 * - `settled`: stored exactly as fetched, late enough after its vendor stamp that a later change would
 *   show: it did not change at the vendor.
 * - `unsettled`: stored exactly as fetched, but less than SETTLED_AFTER_MS past its stamp (or without
 *   one): vendor stamps have whole seconds, so a change made in the same second as the stored one (a
 *   note added right after an edit) leaves the payload identical; only a per-record call can tell.
 * - `touched`: only bookkeeping keys moved (a ConnectWise ticket a note was added to: `_info` alone).
 * - `edited`: a key that is not bookkeeping moved; `editedUnsettled` the edited ones this sync reads within
 *   SETTLED_AFTER_MS of their stamp, whose new copy will be stored unsettled (a change later in the
 *   same second will leave them as stored).
 */
export interface StoredComparison {
  settled: Set<string>;
  unsettled: Set<string>;
  touched: Set<string>;
  edited: Set<string>;
  editedUnsettled: Set<string>;
}

export interface ReadConnector {
  readonly name: ConnectorName;
  readonly kind: ConnectionKind;
  /** Resources this connector syncs, in the order they must be synced. */
  readonly resources: readonly SyncResource[];
  /** The subset of `resources` whose fetch honours `ctx.since` (the vendor has a last-updated filter). */
  readonly incremental: readonly SyncResource[];
  /** Pages of mapped records. Each yielded array is one vendor page. */
  fetch<R extends SyncResource>(resource: R, ctx: SyncContext): AsyncIterable<FetchedRecord<R>[]>;
  /**
   * One authenticated call the vendor documents, answering the smallest thing it can: how a new
   * connection is tested before it is saved. Throws the vendor's refusal (VendorHttpError) as it came.
   */
  probe(ctx: SyncContext): Promise<void>;
  /**
   * "Anything changed since?" (src/sync/freshness.ts): whether the vendor holds a record of `resource`
   * stamped strictly after `ctx.since`, in one cheap documented call per listing (a count on the
   * last-updated filter). Null where the vendor has none for the resource or `ctx.since` is null: the
   * scheduler then reads the resource's incremental pages.
   */
  changedSince?(resource: SyncResource, ctx: SyncContext): Promise<boolean> | null;
  /**
   * Pages of every id of a resource, where the vendor documents a cheap id-only listing (the deletion
   * scan, src/sync/deletions.ts); null for a resource without one (the scan then lists whole records).
   */
  listIds?(resource: SyncResource, ctx: SyncContext): AsyncIterable<string[]> | null;
}
