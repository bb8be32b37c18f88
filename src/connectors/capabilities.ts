/**
 * What a connector can do, declared by the connector itself (docs/architecture.md, The picture), so that nothing
 * outside src/connectors/<vendor>/ branches on a vendor's name: its lists come from its read side,
 * and this says which writes it makes, whether it commits live or only on its fixture host (the
 * limited PSA connector of rule 14), its page size, how a new note shows on a ticket, who made a
 * change, the link to a record in the vendor's UI and the credentials a connection needs.
 */
import type { SyncContext, SyncResource } from './types';

/**
 * What a connector declares it writes; each vendor write needs one (vendor-writes.ts, WRITE_CAPABILITY).
 * `charge.approve`: an approved charge rewrites the agreement line's quantity at this PSA (docs/architecture.md,
 * Agreements and billing), with its `agreement.write`.
 */
export type WriteCapability = 'ticket.create' | 'ticket.update' | 'time.create' | 'project.write' | 'agreement.write' | 'company.create' | 'device.deploy' | 'charge.approve';

export type LinkedRecord = 'ticket' | 'device' | 'company';

export interface ConnectorCapabilities {
  writes: readonly WriteCapability[];
  /**
   * Why the connector does not make a write the interface has (its 501 `not_supported` says so): the
   * vendor documents no way to do it, or none the interface's rules can hold to.
   */
  unsupported?: Partial<Record<WriteCapability, string>>;
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
   * How a new note shows on a synced ticket: its note count grows (counted on every read, or only for some
   * tickets, so a stored 0 may mean "not counted"), and/or a stamp field moves.
   */
  notes: { counted: 'always' | 'sometimes' | 'never'; stampField?: string };
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
  /** How an MSP connects it on the connect page (docs/architecture.md, Connect sessions and console). */
  connect: ConnectDeclaration;
}

/** One credential field of the connect page's form. */
export interface CredentialField {
  /** The credential's name (one of `credentials`). */
  name: string;
  label: string;
  /** Where the vendor shows it, in the vendor's own words. */
  help: string;
  /** Typed into a password field, never shown again. */
  secret: boolean;
}

/** What a connection can do only with a vendor permission; `read` is what every sync needs. */
export type PermissionCapability = 'read' | WriteCapability;

/** A vendor permission the connector needs for one capability, in the vendor's own terms. */
export interface PermissionNeed {
  /** Stable id within the connector. */
  id: string;
  capability: PermissionCapability;
  /** The permission as the vendor's admin screens name it. */
  vendorTerms: string;
  /** How the connector checks it (read-only wherever the vendor allows). */
  checkedBy: string;
}

/** What a permission check found: `ok` null when the vendor offers no read-only way to tell. */
export interface PermissionFinding {
  id: string;
  ok: boolean | null;
  /** What the vendor said, in its own terms (e.g. the security role's name and level). */
  detail?: string;
}

/** The authorization-code grant (with PKCE) where the vendor needs a user's context. */
export interface OAuthDeclaration {
  /** Paths on the connection's base URL. */
  authorizePath: string;
  tokenPath: string;
  scopes: readonly string[];
  /** The credential the grant's refresh token is stored under. */
  refreshCredential: string;
  /** Credentials the code exchange authenticates with (the MSP's API application). */
  clientIdCredential: string;
  clientSecretCredential: string;
  /** The button, e.g. "Sign in at <vendor> and approve". */
  label: string;
  /** What the MSP registers in its vendor application, with `{callback}` for our callback URL. */
  help: string;
  /** What works only after it. */
  capability: WriteCapability;
}

export interface ConnectDeclaration {
  /** The vendor's product name as the MSP knows it. */
  title: string;
  fields: readonly CredentialField[];
  /** The API root: a free URL, or one of the vendor's regions. */
  baseUrl: { label: string; help: string; placeholder?: string; regions?: readonly { label: string; url: string }[] };
  /** The sandbox: its simulator's API root under /sandbox-vendors and the published development credentials. */
  sandbox: { path: string; credentials: Readonly<Record<string, string>>; note?: string };
  permissions: readonly PermissionNeed[];
  /** Runs the declared checks with calls the vendor documents; ids it does not answer count as unknown. */
  checkPermissions?(ctx: SyncContext): Promise<PermissionFinding[]>;
  oauth?: OAuthDeclaration;
}
