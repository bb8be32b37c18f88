/**
 * The contract between the write pipeline and each PSA connector (write side). The pipeline resolves
 * references (link store, boards, statuses, priorities, members) to vendor ids first; the connector
 * then checks the vendor's own rules, shows the exact request it would send (preview), sends it
 * (commit), and can find a write it may already have made by our marker (reconcile).
 */
import type { ConnectorName } from '../../entities/tenancy';
import type { VendorHttpClient } from './vendor-http';

export interface WriteContext {
  baseUrl: string;
  credentials: Record<string, string>;
  http: VendorHttpClient;
  /** The vendor's day, as ms since the epoch (default the wall clock; tests fix it so no rule depends on when they run). */
  now?: () => number;
}

/** A field that breaks a vendor rule: `field` is the request field the caller sent (e.g. `summary`). */
export interface FieldProblem {
  field: string;
  message: string;
  /** A refusal with its own code (default `validation`): a named project that is missing or a baseline. */
  code?: 'project_requires_existing' | 'project_not_writable';
}

/** What the synced projects say of a project the caller named: the connector decides whether that matters. */
export type NamedProjectState = 'writable' | 'baseline' | 'missing';

/** One vendor HTTP request as the preview shows it (no credentials, path relative to the base URL). */
export interface VendorRequestPreview {
  method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';
  path: string;
  body?: unknown;
}

export interface TicketDraft {
  /** Our write marker; the connector stores it in the vendor's external-reference field. */
  marker: string;
  summary: string;
  description: string | null;
  companyName: string;
  /** Resolved from the synced companies by exact name; null when unknown (the vendor rule decides). */
  companySourceId: string | null;
  boardSourceId: string | null;
  statusSourceId: string | null;
  prioritySourceId: string | null;
  /**
   * The project the caller named (`project_source_id`), on any connector, with what the synced projects say
   * of it. A connector whose tickets can go to a project note (the limited one) writes there and refuses a
   * missing or baseline project; the others ignore both (interface document, ticket create). Project
   * tickets and tasks: project-writer.ts.
   */
  projectSourceId: string | null;
  projectState?: NamedProjectState | null;
  /** Vendor-native fields, merged into the vendor body as given (already grant-checked). */
  vendorNative: Record<string, unknown> | null;
}

export interface TicketPatch {
  summary?: string;
  description?: string;
  statusSourceId?: string;
  prioritySourceId?: string;
  boardSourceId?: string;
  vendorNative?: Record<string, unknown> | null;
}

export interface NoteDraft {
  marker: string;
  text: string;
  internal: boolean;
  /** A resolution note (close with evidence). */
  resolution: boolean;
}

export interface TimeEntryDraft {
  marker: string;
  ticketRef: string;
  hours: number;
  billable: boolean;
  /** Member id from the members list (ConnectWise identifier, Autotask resource id); null when not given. */
  memberRef: string | null;
  /** Start of the work; the entry spans `hours` from it. */
  start: Date;
}

export interface CreatedTicket {
  ticketRef: string;
  native: Record<string, unknown>;
}

export interface WriteConnector {
  readonly name: ConnectorName;
  /** Vendor rules (lengths, required fields, ranges). Empty when the draft may be sent. */
  checkTicket(d: TicketDraft): FieldProblem[];
  checkPatch(p: TicketPatch): FieldProblem[];
  checkNote(n: NoteDraft): FieldProblem[];
  checkTimeEntry(t: TimeEntryDraft): FieldProblem[];

  previewCreateTicket(d: TicketDraft): VendorRequestPreview[];
  previewUpdateTicket(ticketRef: string, p: TicketPatch): VendorRequestPreview[];
  previewAddNote(ticketRef: string, n: NoteDraft): VendorRequestPreview[];
  previewTimeEntry(t: TimeEntryDraft): VendorRequestPreview[];

  /** Creates the ticket (or, where the vendor needs it, the project ticket / project note). */
  createTicket(ctx: WriteContext, d: TicketDraft): Promise<CreatedTicket>;
  /** Finds a ticket this service created with `marker`, or null. Used before any retry of a create. */
  findTicketByMarker(ctx: WriteContext, marker: string): Promise<CreatedTicket | null>;
  updateTicket(ctx: WriteContext, ticketRef: string, p: TicketPatch): Promise<Record<string, unknown>>;
  addNote(ctx: WriteContext, ticketRef: string, n: NoteDraft): Promise<{ noteRef: string }>;
  findNoteByMarker(ctx: WriteContext, ticketRef: string, marker: string): Promise<{ noteRef: string } | null>;
  createTimeEntry(ctx: WriteContext, t: TimeEntryDraft): Promise<{ timeEntryRef: string }>;
  findTimeEntryByMarker(ctx: WriteContext, t: TimeEntryDraft): Promise<{ timeEntryRef: string } | null>;
}
