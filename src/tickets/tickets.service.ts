/**
 * Ticket create (fan-out), ticket write-back (update, note, close, reopen) and time entries, on
 * tickets the service created (the link store). Rules of the interface document 3 to 7 and 14; each
 * write runs the one write skeleton (src/writes/write-pipeline.ts).
 */
import type { z } from 'zod';
import type { DataSource } from 'typeorm';
import { type Connection, TicketLink } from '../../entities';
import type { SyncJobs } from '../sync/sync-jobs';
import { capabilitiesOf, writeConnector } from '../connectors/registry';
import type { NoteDraft, TicketDraft, TicketPatch, TimeEntryDraft } from '../connectors/write-types';
import { ServiceError } from '../errors/service-error';
import { targetPreview } from '../operations/write-results';
import { timeEntryHoursProblems } from '../connectors/write-support';
import type { CreateTicketBody, CreateTimeEntryBody, TicketCreatePreview, TicketCreateResult, TicketWriteBody, TicketWritePreview, TicketWriteResult, TimeEntryPreview, TimeEntryResult } from './ticket.schemas';
import { Grant, isvOfCaller, type Caller, type GrantKey } from '../access/caller';
import { isvOf, type AccessService, type TenantAccess } from '../access/access.service';
import { fieldError, ReferenceResolver } from './references';
import type { IdentityService } from '../identity/identity.service';
import type { SyncService } from '../sync/sync.service';
import { problemsError, type CommitReservation, type TargetOutcome, type WritePipeline } from '../writes/write-pipeline';

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

  constructor(
    private readonly ds: DataSource,
    private readonly access: AccessService,
    private readonly pipeline: WritePipeline,
    private readonly syncJobs: SyncJobs,
    private readonly sync: SyncService,
    private readonly identity: IdentityService,
  ) {
    this.refs = new ReferenceResolver(ds);
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

  /** Builds and checks the draft for one target connection; nothing leaves the service here. */
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
    const draft: TicketDraft = {
      marker,
      summary: b.summary,
      description: b.description ?? null,
      companyName: b.company_name,
      companySourceId,
      boardSourceId,
      statusSourceId,
      prioritySourceId: settled(priority),
      // Only a connector that writes project notes takes an existing project on ticket create.
      projectSourceId: capabilitiesOf(c.connector).projectWrite === 'project_note' ? (b.project_source_id ?? null) : null,
      vendorNative: native,
    };
    if (draft.projectSourceId) await this.refs.project(c, draft.projectSourceId);
    const problems = writeConnector(c.connector).checkTicket(draft);
    if (problems.length) throw problemsError(c.connector, problems);
    return { draft, ignored };
  }

  async createTicket(caller: Caller, access: TenantAccess, body: CreateTicketInput): Promise<Preview<typeof TicketCreatePreview> | Preview<typeof TicketCreateResult>> {
    const isvId = isvOf(caller);
    return this.pipeline.write({
      caller, access, operation: 'ticket.create', request: body,
      prepare: async (marker) => {
        const targets = this.access.targets(access, Grant.TicketCreate, 'psa');
        const prepared: { c: Connection; draft: TicketDraft; ignored: string[] }[] = [];
        for (const c of targets) prepared.push({ c, ...(await this.ticketDraft(access, c, body, marker)) });
        return { prepared, ignored: [...new Set(prepared.flatMap((p) => p.ignored))] };
      },
      targets: (p) => p.prepared.map((x) => x.c),
      preview: (p) => ({
        dry_run: true as const, ignored_fields: p.ignored,
        preview: { targets: p.prepared.map((x) => targetPreview(x.c, writeConnector(x.c.connector).previewCreateTicket(x.draft))) },
      }),
      commit: async (p, reservation) => {
        const outcomes = await this.pipeline.run(access.tenant.id, reservation, p.prepared.map((x) => ({
          connection: x.c, write: { op: 'ticket.create' as const, draft: x.draft },
        })));
        await this.link(reservation, access, isvId, outcomes, null, 'service_ticket');
        return { ...fanOut(outcomes), ignored_fields: p.ignored };
      },
      auditDetail: (r) => ({ dry_run: r.dry_run, ticket_refs: 'results' in r ? r.results.map((x) => x.ticket_ref) : [] }),
    });
  }

  /**
   * Link-store entries for created tickets, stored with the commit's answer (so a write-back sent the
   * moment the answer arrives finds them), then a sync soon so the store shows the tickets.
   */
  async link(reservation: CommitReservation, access: TenantAccess, isvId: string, outcomes: TargetOutcome[], findingId: string | null, target: string): Promise<void> {
    for (const o of outcomes) {
      if (!o.ok || !o.result?.ticketRef) continue;
      const params = [access.tenant.id, o.connection.id, isvId, o.result.ticketRef, findingId, target];
      reservation.storeWithAnswer((first) => ({
        sql: `INSERT INTO ticket_links (tenant_id, connection_id, isv_id, ticket_ref, finding_id, target)
              VALUES (${params.map((_, i) => `$${first + i}`).join(', ')})
              ON CONFLICT ON CONSTRAINT uq_ticket_links_ref DO UPDATE
                SET isv_id = EXCLUDED.isv_id, finding_id = EXCLUDED.finding_id, target = EXCLUDED.target, updated_at = now()`,
        params,
      }));
      await this.syncJobs.refreshTicketsSoon(access.tenant.id, o.connection.id);
    }
  }

  /** A linked ticket on a connection where the caller holds `grant`; 404 when it is not in the link store. */
  async linked(access: TenantAccess, ticketRef: string, grant: GrantKey): Promise<{ link: TicketLink; c: Connection }> {
    const links = await this.ds.getRepository(TicketLink).find({ where: { tenantId: access.tenant.id, ticketRef } });
    const held = this.access.targets(access, grant, 'psa');
    const link = links.find((l) => held.some((c) => c.id === l.connectionId));
    if (!link) {
      if (links.length > 0 && links.some((l) => access.connections.some((c) => c.id === l.connectionId))) throw ServiceError.grantMissing(grant);
      throw new ServiceError('not_found', `Ticket ${ticketRef} is not in the link store: only tickets created through this service take write-back and time.`);
    }
    return { link, c: held.find((c) => c.id === link.connectionId)! };
  }

  /** The board a linked ticket is on, from the store; a ticket created moments ago is synced in first. */
  private async boardOf(c: Connection, ticketRef: string): Promise<string | null> {
    const lookup = async () => (await this.ds.query('SELECT board_source_id FROM tickets WHERE connection_id = $1 AND source_id = $2', [c.id, ticketRef]))[0];
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
        const writer = writeConnector(c.connector);
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
        const problems = [...writer.checkPatch(patch), ...(note ? writer.checkNote(note) : [])];
        if (problems.length) throw problemsError(c.connector, problems);
        return { c, patch: Object.keys(patch).length ? patch : null, note, ignored };
      },
      targets: (p) => [p.c],
      preview: (p) => {
        const writer = writeConnector(p.c.connector);
        return {
          dry_run: true as const, action: body.action, ticket_ref: body.ticket_ref, ignored_fields: p.ignored,
          preview: { targets: [targetPreview(p.c, [
            ...(p.patch ? writer.previewUpdateTicket(body.ticket_ref, p.patch) : []),
            ...(p.note ? writer.previewAddNote(body.ticket_ref, p.note) : []),
          ])] },
        };
      },
      commit: async (p, reservation) => {
        const [o] = await this.pipeline.run(access.tenant.id, reservation, [{
          connection: p.c, write: { op: 'ticket.update', ticketRef: body.ticket_ref, patch: p.patch, note: p.note },
        }]);
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
        const writer = writeConnector(c.connector);
        let memberRef: string | null = null;
        if (body.member) memberRef = (await this.refs.hasList(c, 'members')) ? await this.refs.member(c, body.member) : body.member;
        const entry: TimeEntryDraft = {
          marker, ticketRef: body.ticket_ref, hours: body.hours, billable: body.billable, memberRef,
          start: new Date(Date.now() - body.hours * 3_600_000),
        };
        const problems = [...timeEntryHoursProblems(entry.hours), ...writer.checkTimeEntry(entry, !body.dry_run)];
        if (problems.length) throw problemsError(c.connector, problems);
        return { c, entry };
      },
      targets: (p) => [p.c],
      preview: (p) => ({
        dry_run: true as const, ticket_ref: body.ticket_ref,
        preview: { targets: [targetPreview(p.c, writeConnector(p.c.connector).previewTimeEntry(p.entry))] },
      }),
      commit: async (p, reservation) => {
        const [o] = await this.pipeline.run(access.tenant.id, reservation, [{
          connection: p.c, write: { op: 'time.create', entry: { ...p.entry, start: p.entry.start.toISOString() } },
        }]);
        if (!o.ok) throw o.error!;
        return {
          dry_run: false as const, idempotent_replay: false, created: true, time_entry_ref: o.result?.timeEntryRef ?? null, ticket_ref: body.ticket_ref,
          hours: body.hours, billable: body.billable, member: p.entry.memberRef, connection_id: p.c.id, connector: p.c.connector,
        };
      },
    });
  }
}

/** One result per target; partial failure explicit; all failed -> the (first) failure itself. */
export function fanOut(outcomes: TargetOutcome[]) {
  const ok = outcomes.filter((o) => o.ok);
  if (ok.length === 0) throw outcomes[0].error!;
  const results = outcomes.map((o) => ({
    connection_id: o.connection.id, connector: o.connection.connector, ok: o.ok,
    ticket_ref: o.result?.ticketRef ?? null, note_ref: o.result?.noteRef ?? null, reconciled: o.result?.reconciled ?? false,
    error: o.error ? { code: o.error.code, message: o.error.message, status: o.error.status } : null,
  }));
  return {
    dry_run: false as const, idempotent_replay: false, partial_failure: ok.length < outcomes.length,
    ticket_ref: ok[0].result?.ticketRef ?? null, results,
  };
}

/** The value of a settled lookup, or its refusal thrown. */
function settled<T>(r: PromiseSettledResult<T>): T {
  if (r.status === 'rejected') throw r.reason;
  return r.value;
}
