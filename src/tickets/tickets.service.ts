/**
 * Ticket create (fan-out), ticket write-back (update, note, close, reopen) and time entries, on
 * tickets the service created (the link store). Rules of the interface document 3 to 7 and 14; each
 * write runs the one write skeleton (src/writes/write-pipeline.ts).
 */
import type { z } from 'zod';
import type { DataSource } from 'typeorm';
import type { Connection, TicketLink } from '../../entities';
import type { SyncJobs } from '../sync/sync-jobs';
import type { TicketUpdate, TimeEntryInput as TimeEntryWrite } from '../connectors/vendor-writes';
import type { NoteDraft, TicketDraft, TicketPatch } from '../connectors/write-types';
import { ServiceError } from '../errors/service-error';
import type { CreateTicketBody, CreateTimeEntryBody, TicketCreatePreview, TicketCreateResult, TicketWriteBody, TicketWritePreview, TicketWriteResult, TimeEntryPreview, TimeEntryResult } from './ticket.schemas';
import { Grant, isvOfCaller, type Caller, type GrantKey } from '../access/caller';
import type { AccessService, TenantAccess } from '../access/access.service';
import { requireTarget } from '../access/target-access';
import { fieldError, ReferenceResolver } from './references';
import { TicketsStore } from './tickets.store';
import type { IdentityService } from '../identity/identity.service';
import type { SyncService } from '../sync/sync.service';
import { markerFor } from '../writes/marker';
import { checkWrite, previewWrites, type PlannedWrite, type WritePipeline } from '../writes/write-pipeline';

export type CreateTicketInput = z.infer<typeof CreateTicketBody>;
export type TicketWriteInput = z.infer<typeof TicketWriteBody>;
export type TimeEntryInput = z.infer<typeof CreateTimeEntryBody>;
type Preview<T extends z.ZodType> = z.infer<T>;

/** Canonical field names a vendor_native bag may not override (they come from the body). */
const CANONICAL_FIELDS = new Set(['company_name', 'summary', 'description', 'priority', 'status', 'board', 'project_source_id', 'dry_run', 'idempotency_key']);
/** Native keys that would move a ticket to another company: they need the company grant. */
const COMPANY_KEYS = new Set(['company', 'companyID', 'companyId', 'client_id', 'clientId']);

export class TicketsService {
  readonly refs: ReferenceResolver;

  private readonly store: TicketsStore;

  constructor(
    ds: DataSource,
    private readonly access: AccessService,
    private readonly pipeline: WritePipeline,
    private readonly syncJobs: SyncJobs,
    private readonly sync: SyncService,
    private readonly identity: IdentityService,
  ) {
    this.refs = new ReferenceResolver(ds);
    this.store = new TicketsStore(ds);
  }

  /** vendor_native: canonical names are ignored (reported back), company moves need psa.company.create. */
  vendorNative(access: TenantAccess, c: Connection, bag: Record<string, unknown> | null | undefined): { native: Record<string, unknown> | null; ignored: string[] } {
    if (!bag) return { native: null, ignored: [] };
    const native: Record<string, unknown> = {};
    const ignored: string[] = [];
    for (const [k, v] of Object.entries(bag)) {
      if (CANONICAL_FIELDS.has(k)) { ignored.push(k); continue; }
      if (COMPANY_KEYS.has(k)) this.access.requireGrantOn(access, c, Grant.CompanyCreate);
      native[k] = v;
    }
    return { native, ignored };
  }

  /**
   * Builds the draft for one target connection from the store; nothing leaves the service here. Its vendor
   * rules are the registered write's, checked by the skeleton (src/writes/write-pipeline.ts).
   */
  async ticketDraft(access: TenantAccess, c: Connection, b: {
    company_name: string; summary: string; description?: string | null; priority?: string | null; status?: string | null;
    board?: string | null; project_source_id?: string | null; vendor_native?: Record<string, unknown> | null;
  }, marker: string): Promise<{ draft: TicketDraft; ignored: string[] }> {
    const { native, ignored } = this.vendorNative(access, c, b.vendor_native);
    // Independent lookups at once (one round trip of latency on a pool); their refusals are reported in
    // the order they are checked one by one (board, company, status, priority), whichever answered first.
    const [board, company, priority] = await Promise.allSettled([
      b.board ? this.refs.board(c, b.board) : null,
      this.identity.resolveCompany(c, isvOfCaller(access.caller), b.company_name),
      this.refs.priority(c, b.priority ?? 'medium'),
    ]);
    const boardSourceId = settled(board);
    const companySourceId = settled(company);
    const statusSourceId = b.status ? await this.refs.status(c, b.status, boardSourceId) : null;
    const projectSourceId = b.project_source_id ?? null;
    const draft: TicketDraft = {
      marker,
      summary: b.summary,
      description: b.description ?? null,
      companyName: b.company_name,
      companySourceId,
      boardSourceId,
      statusSourceId,
      prioritySourceId: settled(priority),
      // Whether the named project matters is the connector's ticket.create rule (its check).
      projectSourceId,
      projectState: projectSourceId ? await this.refs.projectState(c, projectSourceId) : null,
      vendorNative: native,
    };
    return { draft, ignored };
  }

  /**
   * Ticket create, in one direction: the drafts are planned here, then the skeleton checks them against
   * each vendor's rules and previews, or commits once per key through the write registry; a commit's
   * created tickets are linked with its answer and synced in soon.
   */
  async createTicket(caller: Caller, access: TenantAccess, body: CreateTicketInput): Promise<Preview<typeof TicketCreatePreview> | Preview<typeof TicketCreateResult>> {
    const operation = 'ticket.create';
    const answer = await this.pipeline.fanOut({
      caller, access, operation, request: body,
      plan: this.planCreate(access, body, markerFor(caller, access.tenant.id, operation, body.idempotency_key)),
      link: { target: 'service_ticket', findingId: null },
    });
    if (!answer.dry_run && !answer.idempotent_replay) await this.refreshCreated(access.tenant.id, answer.results);
    return answer;
  }

  /** One ticket.create per PSA connection on which the ISV holds psa.ticket.create. */
  private async planCreate(access: TenantAccess, body: CreateTicketInput, marker: string): Promise<{ writes: PlannedWrite[]; fields: { ignored_fields: string[] } }> {
    const writes: PlannedWrite[] = [];
    const ignored = new Set<string>();
    for (const c of this.access.targets(access, Grant.TicketCreate, 'psa')) {
      const planned = await this.ticketDraft(access, c, body, marker);
      writes.push({ connection: c, name: 'ticket.create', input: planned.draft });
      for (const f of planned.ignored) ignored.add(f);
    }
    return { writes, fields: { ignored_fields: [...ignored] } };
  }

  /** The store shows the tickets a commit created after a sync soon (their links were stored with the answer). */
  async refreshCreated(tenantId: string, results: { ok: boolean; ticket_ref: string | null; connection_id: string }[]): Promise<void> {
    for (const r of results) if (r.ok && r.ticket_ref) await this.syncJobs.refreshTicketsSoon(tenantId, r.connection_id);
  }

  /** A linked ticket on a connection where the caller holds `grant`; 404 when it is not in the link store. */
  async linked(access: TenantAccess, ticketRef: string, grant: GrantKey): Promise<{ link: TicketLink; c: Connection }> {
    const links = await this.store.linksOfTicket(access.tenant.id, ticketRef);
    const held = this.access.targets(access, grant, 'psa');
    const { record: link, connection: c } = requireTarget(access, grant, held, links, (l) => l.connectionId,
      () => new ServiceError('not_found', `Ticket ${ticketRef} is not in the link store: only tickets created through this service take write-back and time.`));
    return { link, c };
  }

  /** The board a linked ticket is on, from the store; a ticket created moments ago is synced in first. */
  private async boardOf(c: Connection, ticketRef: string): Promise<string | null> {
    const lookup = () => this.store.boardOf(c.id, ticketRef);
    let row = await lookup();
    if (!row) {
      await this.sync.syncConnection(c.id, { resources: ['tickets'] }).catch(() => undefined);
      row = await lookup();
    }
    return row?.board_source_id ?? null;
  }

  async writeTicket(caller: Caller, access: TenantAccess, body: TicketWriteInput): Promise<Preview<typeof TicketWritePreview> | Preview<typeof TicketWriteResult>> {
    return this.pipeline.write({
      caller, access, operation: 'ticket.write', subjectRef: body.ticket_ref, request: body,
      prepare: async (marker) => {
        const { c } = await this.linked(access, body.ticket_ref, Grant.TicketUpdate);
        const { native, ignored } = this.vendorNative(access, c, body.vendor_native);
        const boardSourceId = body.board ? await this.refs.board(c, body.board) : undefined;
        // Statuses belong to a board: resolve them on the board the ticket is on (or moves to).
        const statusBoard = boardSourceId ?? (body.status || body.action === 'close' || body.action === 'reopen' ? await this.boardOf(c, body.ticket_ref) : null);
        const patch: TicketPatch = {};
        let note: NoteDraft | null = null;
        if (body.summary) patch.summary = body.summary;
        if (body.description != null) patch.description = body.description;
        if (body.priority) patch.prioritySourceId = (await this.refs.priority(c, body.priority)) ?? undefined;
        if (boardSourceId) patch.boardSourceId = boardSourceId;
        if (native) patch.vendorNative = native;
        const status = async (value: string) => (await this.refs.status(c, value, statusBoard)) ?? undefined;
        switch (body.action) {
          case 'update':
            if (body.status) patch.statusSourceId = await status(body.status);
            if (Object.keys(patch).length === 0) throw fieldError('action', 'An update needs at least one of summary, description, status, priority, board or vendor_native.');
            break;
          case 'note':
            if (!body.note) throw fieldError('note', 'A note action needs note.text.');
            note = { marker, text: body.note.text, internal: body.note.internal, resolution: false };
            if (body.status) patch.statusSourceId = await status(body.status);
            break;
          case 'close':
            if (!body.evidence) throw fieldError('evidence', 'Closing a ticket needs evidence; it is written to the PSA as a resolution note.');
            note = { marker, text: body.evidence, internal: false, resolution: true };
            patch.statusSourceId = await status(body.status ?? 'closed');
            break;
          case 'reopen':
            patch.statusSourceId = await status(body.status ?? 'in_progress');
            break;
        }
        const update: TicketUpdate = { ticketRef: body.ticket_ref, patch: Object.keys(patch).length ? patch : null, note };
        const write: PlannedWrite = { connection: c, name: 'ticket.update', input: update };
        checkWrite(write);
        return { c, write, ignored };
      },
      targets: (p) => [p.c],
      preview: (p) => ({
        dry_run: true as const, action: body.action, ticket_ref: body.ticket_ref, ignored_fields: p.ignored,
        preview: { targets: previewWrites([p.write]) },
      }),
      commit: async (p, run) => {
        const [o] = await run.send([p.write]);
        if (!o.ok) throw o.error!;
        await this.syncJobs.refreshTicketsSoon(access.tenant.id, p.c.id);
        return {
          dry_run: false as const, idempotent_replay: false, created: o.result?.noteRef != null, action: body.action, ticket_ref: body.ticket_ref,
          connection_id: p.c.id, connector: p.c.connector, note_ref: o.result?.noteRef ?? null, reconciled: o.result?.reconciled ?? false,
          ignored_fields: p.ignored,
        };
      },
    });
  }

  async createTimeEntry(caller: Caller, access: TenantAccess, body: TimeEntryInput): Promise<Preview<typeof TimeEntryPreview> | Preview<typeof TimeEntryResult>> {
    return this.pipeline.write({
      caller, access, operation: 'time.create', subjectRef: body.ticket_ref, request: body,
      prepare: async (marker) => {
        const { c } = await this.linked(access, body.ticket_ref, Grant.TimeCreate);
        let memberRef: string | null = null;
        if (body.member) memberRef = (await this.refs.hasList(c, 'members')) ? await this.refs.member(c, body.member) : body.member;
        // The work ends now and began `hours` before: hours so many that no date holds that start are refused, nothing sent.
        const start = new Date(Date.now() - body.hours * 3_600_000);
        if (Number.isNaN(start.getTime())) throw fieldError('hours', `hours: ${body.hours} hours before now is no date a vendor can record.`);
        const entry: TimeEntryWrite = {
          marker, ticketRef: body.ticket_ref, hours: body.hours, billable: body.billable, memberRef, start: start.toISOString(),
        };
        const write: PlannedWrite = { connection: c, name: 'time.create', input: entry };
        checkWrite(write);
        return { c, entry, write };
      },
      targets: (p) => [p.c],
      preview: (p) => ({
        dry_run: true as const, ticket_ref: body.ticket_ref,
        preview: { targets: previewWrites([p.write]) },
      }),
      commit: async (p, run) => {
        const [o] = await run.send([p.write]);
        if (!o.ok) throw o.error!;
        return {
          dry_run: false as const, idempotent_replay: false, created: true, time_entry_ref: o.result?.timeEntryRef ?? null, ticket_ref: body.ticket_ref,
          hours: body.hours, billable: body.billable, member: p.entry.memberRef, connection_id: p.c.id, connector: p.c.connector,
        };
      },
    });
  }
}

/** The value of a settled lookup, or its refusal thrown. */
function settled<T>(r: PromiseSettledResult<T>): T {
  if (r.status === 'rejected') throw r.reason;
  return r.value;
}
