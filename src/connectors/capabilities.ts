/**
 * What a connector can do, declared by the connector itself (docs/architecture.md, The picture), so that nothing
 * outside src/connectors/<vendor>/ branches on a vendor's name: its lists come from its read side,
 * and this says which writes it makes, whether it commits live or only on its fixture host (the
 * limited PSA connector of rule 14), its page size, how a new note shows on a ticket, who made a
 * change, the link to a record in the vendor's UI and the credentials a connection needs.
 */
import type { SyncResource } from './types';

/**
 * What a connector declares it writes; each vendor write needs one (vendor-writes.ts, WRITE_CAPABILITY).
 * `charge.approve`: an approved charge rewrites the agreement line's quantity at this PSA (docs/architecture.md,
 * Agreements and billing), with its `agreement.write`.
 */
export type WriteCapability = 'ticket.create' | 'ticket.update' | 'time.create' | 'project.write' | 'agreement.write' | 'company.create' | 'device.deploy' | 'charge.approve';

export type LinkedRecord = 'ticket' | 'device' | 'company';

export interface ConnectorCapabilities {
  writes: readonly WriteCapability[];
  /** `live`: commits on any host; `fixture_only`: the limited connector, commits only on its fixture host. */
  commits: 'live' | 'fixture_only';
  /**
   * Resources it syncs for its writes but serves no list of (the limited connector's agreements: 501
   * `not_supported` on the list, as the interface's Errors table says).
   */
  unlisted?: readonly SyncResource[];
  /** The largest page the vendor serves. */
  pageSize: number;
  /** Credential names a connection of this connector needs (all strings). */
  credentials: readonly string[];
  /** Credential names a connection may also hold (NinjaOne's refresh token of an authorisation). */
  optionalCredentials?: readonly string[];
  /**
   * How findings routed to `project` land: a project ticket on the project (`project_ticket`) or a
   * note on the project the caller names in project_source_id (`project_note`).
   */
  projectWrite: 'project_ticket' | 'project_note' | null;
  /**
   * How a new note shows on a synced ticket: its note count grows (counted on every read, or only on
   * incremental reads, so a stored 0 may mean "not counted"), and/or a stamp field moves.
   */
  notes: { counted: 'always' | 'incremental' | 'never'; stampField?: string };
  /**
   * The default API budget of one connection (docs/architecture.md, Vendor API budget), from the vendor's published
   * limits; a connection's settings.budget or the operator's VENDOR_BUDGET may override it.
   */
  budget: { requestsPerHour: number; concurrent: number };
  /**
   * Native keys the vendor stamps on every edit (or the agent on every check-in): a change to these
   * alone is not a change to the record.
   */
  bookkeepingFields: readonly string[];
  /** Who made the change, when the vendor says so. */
  actor?(native: Record<string, unknown>, created: boolean): string | null;
  /**
   * The canonical OS family (windows, mac, linux) of a synced device, from its native payload: what a
   * deploy compares with the packages' operating systems and `target_os`. RMM connectors only.
   */
  deviceOs?(native: Record<string, unknown>): string | null;
  /** A deep link into the vendor's UI, derived from the connection's API base URL. */
  recordUrl?(base: URL, record: LinkedRecord, id: string): string | null;
}
