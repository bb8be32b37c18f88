/**
 * Findings: routed by the tenant's routing configuration to a service ticket or to an existing
 * project, replay-safe by the ISV's finding id, and resolved with auto-close as a switch of its own
 * (`psa.ticket.auto_close`), separate from closing.
 */
import { randomUUID } from 'node:crypto';
import type { z } from 'zod';
import type { DataSource } from 'typeorm';
import type { EventsService } from '../events/events.service';
import { eventDraft } from '../events/change-detector';
import { capabilitiesOf } from '../connectors/registry';
import { ServiceError } from '../errors/service-error';
import type { FindingResolveResult, FindingRoutePreview, FindingRouteResult, ResolveFindingBody, RouteFindingBody, RoutingConfig, RoutingConfigBody } from './ticket.schemas';
import { SEVERITY_PRIORITY, WRITE_BACK_TARGETS } from './ticket.schemas';
import { Grant, type Caller, type GrantKey } from '../access/caller';
import { isvOf, type AccessService, type TenantAccess } from '../access/access.service';
import { fieldError } from './references';
import type { TicketsService } from './tickets.service';
import { TicketsStore } from './tickets.store';
import { markerFor } from '../writes/marker';
import { checkWrite, type PlannedWrite, type WritePipeline } from '../writes/write-pipeline';
import { Transactions } from '../db/transactions';

export type RouteFindingInput = z.infer<typeof RouteFindingBody>;
export type RoutingInput = z.infer<typeof RoutingConfigBody>;
export type ResolveFindingInput = z.infer<typeof ResolveFindingBody>;
type RoutingView = z.infer<typeof RoutingConfig>;
type Target = (typeof WRITE_BACK_TARGETS)[number];


export class FindingsService {
  private readonly store: TicketsStore;

  /** What commits together (src/db/transactions.ts). */
  private readonly transactions: Transactions;
  constructor(
    ds: DataSource,
    private readonly access: AccessService,
    private readonly pipeline: WritePipeline,
    private readonly tickets: TicketsService,
    private readonly events: EventsService,
  ) {
    this.transactions = new Transactions(ds);
    this.store = new TicketsStore(ds);
  }

  /** The grant a finding of `kind` needs: its effective routing target's (the operation's declared rule). */
  async routeGrant(caller: Caller, access: TenantAccess, kind: RouteFindingInput['kind']): Promise<GrantKey> {
    return (await this.view(isvOf(caller), access.tenant.id)).effective[kind] === 'project' ? Grant.ProjectWrite : Grant.TicketCreate;
  }

  /** The routing of the caller's own ISV, or (admin token) of the ISV it names. */
  async routing(caller: Caller, access: TenantAccess, isvId?: string | null): Promise<RoutingView> {
    return this.view(await this.access.isvInScope(caller, access.tenant.id, isvId), access.tenant.id);
  }

  private async view(isvId: string, tenantId: string): Promise<RoutingView> {
    const row = await this.store.isv(isvId);
    const overrides = (await this.store.routingOverrides(tenantId, isvId)) as RoutingView['overrides'];
    const targets = row.supportedTargets as Target[];
    const fallback: Target = targets.includes('service_ticket') ? 'service_ticket' : targets[0];
    const recommended = { technical: (row.routingRecommendation.technical ?? null) as Target | null, organizational: (row.routingRecommendation.organizational ?? null) as Target | null };
    const effective = {
      technical: overrides.technical ?? recommended.technical ?? fallback,
      organizational: overrides.organizational ?? recommended.organizational ?? fallback,
    };
    return { recommended, overrides, effective, supported_targets: targets };
  }

  async setRouting(caller: Caller, access: TenantAccess, body: RoutingInput): Promise<RoutingView> {
    const isvId = isvOf(caller);
    // The audit entry says what the overrides were and became, and whose they are (the ISV's name).
    let change: { subject_label: string; before: Record<string, string>; after: Record<string, string> } | null = null;
    return this.pipeline.audited(caller, access.tenant.id, 'routing.update', isvId, async () => {
      const row = await this.store.isv(isvId);
      const current = await this.store.routingOverrides(access.tenant.id, isvId);
      const next: Record<string, string> = { ...current };
      for (const [kind, target] of Object.entries(body.overrides)) {
        if (target === undefined) continue;
        if (target === null) { delete next[kind]; continue; }
        if (!(WRITE_BACK_TARGETS as readonly string[]).includes(target) || !row.supportedTargets.includes(target)) {
          throw fieldError(`overrides.${kind}`, `"${target}" is not a write-back target this ISV supports (${row.supportedTargets.join(', ')}).`);
        }
        next[kind] = target;
      }
      await this.store.putRoutingOverrides(access.tenant.id, isvId, next);
      change = { subject_label: row.name, before: current, after: next };
      return this.view(isvId, access.tenant.id);
    }, () => ({ ...(change ?? {}) }));
  }

  /** A finding routed in one direction, like a ticket create: planned here, checked, previewed or committed by the skeleton. */
  async route(caller: Caller, access: TenantAccess, body: RouteFindingInput): Promise<z.infer<typeof FindingRoutePreview> | z.infer<typeof FindingRouteResult>> {
    const isvId = isvOf(caller);
    const findingId = body.idempotency_key;
    const target = (await this.view(isvId, access.tenant.id)).effective[body.kind];
    const operation = 'finding.route';
    const answer = await this.pipeline.fanOut({
      caller, access, operation, subjectRef: findingId, request: body,
      plan: this.planRoute(access, body, target, markerFor(caller, access.tenant.id, operation, findingId)),
      link: { target, findingId },
    });
    if (!answer.dry_run && !answer.idempotent_replay) {
      await this.tickets.refreshCreated(access.tenant.id, answer.results);
      await this.healthRow(access, findingId, 'attention_needed', `Finding routed to ${target}: ${body.title}`, { kind: body.kind, severity: body.severity, target });
    }
    return answer;
  }

  /** Per PSA connection the grant reaches: a ticket, or for a project target the same project item as POST .../projects/{id}/items. */
  private async planRoute(access: TenantAccess, body: RouteFindingInput, target: (typeof WRITE_BACK_TARGETS)[number], marker: string) {
    const ticketBody = {
      company_name: body.company_name,
      summary: body.title,
      description: [body.description, `Severity: ${body.severity}`].filter(Boolean).join('\n\n'),
      priority: SEVERITY_PRIORITY[body.severity],
      project_source_id: body.project_source_id ?? null,
    };
    const grant = target === 'project' ? Grant.ProjectWrite : Grant.TicketCreate;
    const writes: PlannedWrite[] = [];
    let projectSourceId: string | null = null;
    for (const c of this.access.targets(access, grant, 'psa')) {
      const { draft } = await this.tickets.ticketDraft(access, c, ticketBody, marker);
      if (target !== 'project') {
        writes.push({ connection: c, name: 'ticket.create', input: draft });
        continue;
      }
      if (capabilitiesOf(c.connector).projectWrite === 'project_note' && !body.project_source_id) {
        throw fieldError('project_source_id', `The ${c.connector} connector writes findings as a note on an existing project: name it in project_source_id.`);
      }
      // The finding's text is held to a ticket's vendor rules on either target.
      checkWrite({ connection: c, name: 'ticket.create', input: draft });
      const projectRef = body.project_source_id
        ? await this.tickets.refs.project(c, body.project_source_id)
        : await this.tickets.refs.projectOfCompany(c, draft.companySourceId);
      projectSourceId ??= projectRef;
      writes.push({ connection: c, name: 'project.item', input: { projectRef, item: { marker, summary: draft.summary, description: draft.description, phase: null } } });
    }
    return {
      writes,
      fields: { finding_id: body.idempotency_key, target },
      committed: { project_source_id: projectSourceId, ignored_fields: [] as string[] },
    };
  }

  async resolve(caller: Caller, access: TenantAccess, findingId: string, body: ResolveFindingInput): Promise<z.infer<typeof FindingResolveResult>> {
    isvOf(caller);
    return this.pipeline.audited(caller, access.tenant.id, body.dry_run ? 'finding.resolve.preview' : 'finding.resolve.commit', findingId, async () => {
      const links = await this.store.linksOfFinding(access.tenant.id, findingId);
      if (links.length === 0) throw new ServiceError('not_found', `Finding ${findingId} was not routed through this service.`);
      const closable = links.filter((l) => l.target === 'service_ticket');
      // Auto-close is a switch of its own, per connection (an explicit nuance beside the declared grant).
      const autoClose = closable.filter((l) => this.access.holds(access, l.connectionId, Grant.TicketAutoClose));
      const closed: z.infer<typeof FindingResolveResult>['closed'] = [];
      for (const l of autoClose) {
        // The close is keyed by the finding, so resolving twice closes once.
        const r = await this.tickets.writeTicket(caller, access, {
          ticket_ref: l.ticketRef, action: 'close', evidence: body.evidence ?? `Finding ${findingId} was fixed.`, dry_run: body.dry_run,
          idempotency_key: `finding-resolve:${findingId}:${l.ticketRef}`,
        });
        closed.push({ ticket_ref: l.ticketRef, preview: r.dry_run ? r.preview : null, note_ref: r.dry_run ? null : r.note_ref });
      }
      if (!body.dry_run) {
        await this.healthRow(access, findingId, 'resolved', `Finding ${findingId} resolved`, { auto_closed: closed.length > 0 });
      }
      return { dry_run: body.dry_run, finding_id: findingId, auto_close: autoClose.length > 0, closed, ticket_refs: links.map((l) => l.ticketRef) };
    });
  }

  /** A health-feed row (kind `health`) for the finding, once per finding and type; announced to webhooks. */
  private async healthRow(access: TenantAccess, findingId: string, type: 'attention_needed' | 'resolved', summary: string, detail: Record<string, unknown>): Promise<void> {
    const ids = await this.transactions.run((m) => this.events.insert(m, access.tenant.id, [eventDraft({
      kind: 'health', type, summary, subjectRef: findingId, detail: { finding_id: findingId, ...detail },
      dedupeKey: `finding:${findingId}:${type}${type === 'resolved' ? `:${randomUUID()}` : ''}`,
    })]));
    await this.events.emitCommitted(access.tenant.id, ids);
  }
}

