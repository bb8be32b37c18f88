/**
 * Notes and items on existing projects (interface document rule 9, docs/architecture.md, Projects), through the
 * one write skeleton: the caller needs `psa.project.write` on the PSA connection the project lives on;
 * an unknown project is 404 `project_requires_existing`, a baseline project 409 `project_not_writable`,
 * a body naming another company 409 `project_company_cannot_update`; the service never creates a
 * project header (422 `project_header_not_supported`). Findings routed to `project` plan the same
 * registered `project.item` write (src/connectors/vendor-writes.ts), so there is one way to write a project item.
 */
import { ProjectsStore, type ProjectRow } from './projects.store';
import type { z } from 'zod';
import type { DataSource } from 'typeorm';
import type { Connection } from '../../entities';
import { Grant, type Caller } from '../access/caller';
import { isvOf, type AccessService, type TenantAccess } from '../access/access.service';
import { requireTarget } from '../access/target-access';
import { vendorWrite } from '../connectors/registry';
import { ServiceError } from '../errors/service-error';
import { isSafeText } from '../shared/request';
import type { TicketsService } from '../tickets/tickets.service';
import { ticketLinkRows } from '../writes/ticket-links';
import { checkWrite, previewWrites, type PlannedWrite, type WritePipeline } from '../writes/write-pipeline';
import type { ProjectItemBody, ProjectItemPreview, ProjectItemResult, ProjectNoteBody, ProjectNotePreview, ProjectNoteResult } from './project.schemas';

type Out<T extends z.ZodType> = z.infer<T>;

/** An id that can be looked up, stored in the audit log and quoted back; any other is simply unknown (404). */
function safeId(id: string): boolean {
  return id.length > 0 && id.length <= 200 && isSafeText(id);
}


export class ProjectsService {
  private readonly store: ProjectsStore;

  constructor(
    ds: DataSource,
    private readonly access: AccessService,
    private readonly pipeline: WritePipeline,
    private readonly tickets: TicketsService,
  ) {
    this.store = new ProjectsStore(ds);
  }

  /** The header is never created (rule 9); the body was declared so the refusal is documented. */

  /**
   * The project a write targets and its connection: the caller must hold psa.project.write there
   * (grant_missing), the project must be synced (404, any id string, malformed ones included, is
   * looked up or refused without a query) and not a baseline (409).
   */
  async target(access: TenantAccess, projectSourceId: string): Promise<{ c: Connection; project: ProjectRow }> {
    const held = this.access.targets(access, Grant.ProjectWrite, 'psa');
    const rows: ProjectRow[] = safeId(projectSourceId)
      ? await this.store.projects(access.tenant.id, projectSourceId)
      : [];
    const { record: row, connection: c } = requireTarget(access, Grant.ProjectWrite, held, rows, (r) => r.connection_id, () => {
      const named = safeId(projectSourceId) ? `Project ${JSON.stringify(projectSourceId)}` : 'The project';
      return new ServiceError('project_requires_existing', `${named} does not exist in this tenant's PSA; the service never creates a project header.`);
    });
    if (row.baseline) throw new ServiceError('project_not_writable', `Project ${projectSourceId} is a baseline project and cannot take the write.`);
    return { c, project: row };
  }

  /** A body that names a company other than the project's would move the item (or the project): 409. */
  private async sameCompany(c: Connection, project: ProjectRow, companyName: string | null | undefined): Promise<void> {
    if (companyName == null || companyName === project.company_name) return;
    // The project's company under a name the store also knows it by (any of several same-named ones).
    const named = await this.store.companiesNamed(c.id, companyName);
    if (named.some((r) => r.source_id === project.company_source_id)) return;
    throw new ServiceError('project_company_cannot_update', `Project ${project.source_id} belongs to ${JSON.stringify(project.company_name ?? 'another company')}; a note or item cannot move it or its items to ${JSON.stringify(companyName)}.`, {
      details: { field: 'company_name', project_company: project.company_name },
    });
  }

  /** The planned write, checked against its vendor's rules (422 before anything is sent, preview or commit). */
  private planned(write: PlannedWrite): PlannedWrite {
    checkWrite(write);
    return write;
  }

  async addNote(caller: Caller, access: TenantAccess, projectSourceId: string, body: z.infer<typeof ProjectNoteBody>): Promise<Out<typeof ProjectNotePreview> | Out<typeof ProjectNoteResult>> {
    isvOf(caller);
    return this.pipeline.write({
      caller, access, operation: 'project.note', subjectRef: safeId(projectSourceId) ? projectSourceId : null, request: body,
      prepare: async (marker) => {
        const { c } = await this.target(access, projectSourceId);
        const write = this.planned({ connection: c, name: 'project.note', input: { projectRef: projectSourceId, note: { marker, text: body.text } } });
        return { c, write };
      },
      targets: (p) => [p.c],
      preview: (p) => ({
        dry_run: true as const, project_source_id: projectSourceId,
        preview: { targets: previewWrites([p.write]) },
      }),
      commit: async (p, run) => {
        const [o] = await run.send([p.write]);
        if (!o.ok) throw o.error!;
        return {
          dry_run: false as const, idempotent_replay: false, created: true, project_source_id: projectSourceId,
          connection_id: p.c.id, connector: p.c.connector, note_ref: o.result?.itemRef ?? null, reconciled: o.result?.reconciled ?? false,
        };
      },
    });
  }

  async addItem(caller: Caller, access: TenantAccess, projectSourceId: string, body: z.infer<typeof ProjectItemBody>): Promise<Out<typeof ProjectItemPreview> | Out<typeof ProjectItemResult>> {
    const isvId = isvOf(caller);
    return this.pipeline.write({
      caller, access, operation: 'project.item', subjectRef: safeId(projectSourceId) ? projectSourceId : null, request: body,
      prepare: async (marker) => {
        const { c, project } = await this.target(access, projectSourceId);
        await this.sameCompany(c, project, body.company_name);
        const item = { marker, summary: body.summary, description: body.description ?? null, phase: body.phase ?? null };
        const write = this.planned({ connection: c, name: 'project.item', input: { projectRef: projectSourceId, item } });
        return { c, write, itemKind: vendorWrite(c.connector, 'project.item').itemKind };
      },
      targets: (p) => [p.c],
      preview: (p) => ({
        dry_run: true as const, project_source_id: projectSourceId, item_kind: p.itemKind,
        preview: { targets: previewWrites([p.write]) },
      }),
      commit: async (p, run) => {
        const outcomes = await run.send([p.write]);
        const [o] = outcomes;
        if (!o.ok) throw o.error!;
        // A project ticket is a ticket the service created: write-back and time may follow.
        for (const row of ticketLinkRows(access.tenant.id, isvId, outcomes, null, 'project')) run.storeWithAnswer(row);
        await this.tickets.refreshCreated(access.tenant.id, [{ ok: o.ok, ticket_ref: o.result?.ticketRef ?? null, connection_id: p.c.id }]);
        return {
          dry_run: false as const, idempotent_replay: false, created: true, project_source_id: projectSourceId,
          connection_id: p.c.id, connector: p.c.connector, item_kind: p.itemKind,
          item_ref: o.result?.itemRef ?? null, ticket_ref: o.result?.ticketRef ?? null, reconciled: o.result?.reconciled ?? false,
        };
      },
    });
  }
}
