/**
 * Findings: routed by the tenant's routing configuration to a service ticket or to an existing
 * project, replay-safe by the ISV's finding id, and resolved with auto-close as a switch of its own
 * (`psa.ticket.auto_close`), separate from closing.
 */
import { randomUUID } from 'node:crypto';
import type { z } from 'zod';
import type { DataSource } from 'typeorm';
import { type Connection, Isv, RoutingConfig, TicketLink } from '../../entities';
import type { EventsService } from '../events/events.service';
import { eventDraft } from '../events/change-detector';
import type { TicketDraft } from '../connectors/write-types';
import { LIMITED_PSA_CONNECTORS } from '../connectors/registry';
import { writeConnector } from '../connectors/write-registry';
import { ServiceError } from '../errors/service-error';
import type { ResolveFindingBody, RouteFindingBody, RoutingConfigBody } from '../rest/write-schemas';
import { FINDING_KINDS, WRITE_BACK_TARGETS } from '../rest/write-schemas';
import type { Caller } from '../tenants/caller';
import type { AccessService, TenantAccess } from '../tenants/access.service';
import { fieldError } from './references';
import { asIsv, fanOutAnswer, type TicketsService } from './tickets.service';
import type { WriteAnswer, WritePipeline } from './write-pipeline';

export type RouteFindingInput = z.infer<typeof RouteFindingBody>;
export type RoutingInput = z.infer<typeof RoutingConfigBody>;
export type ResolveFindingInput = z.infer<typeof ResolveFindingBody>;

export interface RoutingView {
  recommended: Record<string, string | null>;
  overrides: Record<string, string>;
  effective: Record<string, string>;
  supported_targets: string[];
}

const SEVERITY_PRIORITY: Record<string, string> = { critical: 'critical', high: 'high', medium: 'medium', moderate: 'medium', low: 'low', info: 'low', informational: 'low' };

export class FindingsService {
  constructor(
    private readonly ds: DataSource,
    private readonly access: AccessService,
    private readonly pipeline: WritePipeline,
    private readonly tickets: TicketsService,
    private readonly events: EventsService,
  ) {}

  async routing(caller: Caller, tenantId: string): Promise<RoutingView> {
    const isv = asIsv(caller);
    const access = await this.access.tenantAccess(caller, tenantId);
    return this.view(isv.isvId, access.tenant.id);
  }

  private async view(isvId: string, tenantId: string): Promise<RoutingView> {
    const row = await this.ds.getRepository(Isv).findOneByOrFail({ id: isvId });
    const config = await this.ds.getRepository(RoutingConfig).findOneBy({ tenantId, isvId });
    const overrides = config?.overrides ?? {};
    const recommended = Object.fromEntries(FINDING_KINDS.map((k) => [k, row.routingRecommendation[k] ?? null]));
    const fallback = row.supportedTargets.includes('service_ticket') ? 'service_ticket' : row.supportedTargets[0];
    const effective = Object.fromEntries(FINDING_KINDS.map((k) => [k, overrides[k] ?? recommended[k] ?? fallback]));
    return { recommended, overrides, effective, supported_targets: row.supportedTargets };
  }

  async setRouting(caller: Caller, tenantId: string, body: RoutingInput): Promise<RoutingView> {
    const isv = asIsv(caller);
    const access = await this.access.tenantAccess(caller, tenantId);
    return this.pipeline.audited(caller, access.tenant.id, 'routing.update', null, async () => {
      const row = await this.ds.getRepository(Isv).findOneByOrFail({ id: isv.isvId });
      const repo = this.ds.getRepository(RoutingConfig);
      const current = (await repo.findOneBy({ tenantId: access.tenant.id, isvId: isv.isvId }))?.overrides ?? {};
      const next = { ...current };
      for (const [kind, target] of Object.entries(body.overrides)) {
        if (target === null) { delete next[kind]; continue; }
        if (!(WRITE_BACK_TARGETS as readonly string[]).includes(target) || !row.supportedTargets.includes(target)) {
          throw fieldError(`overrides.${kind}`, `"${target}" is not a write-back target this ISV supports (${row.supportedTargets.join(', ')}).`);
        }
        next[kind] = target;
      }
      await repo.upsert({ tenantId: access.tenant.id, isvId: isv.isvId, overrides: next }, ['tenantId', 'isvId']);
      return this.view(isv.isvId, access.tenant.id);
    });
  }

  async route(caller: Caller, tenantId: string, body: RouteFindingInput): Promise<WriteAnswer> {
    const isv = asIsv(caller);
    const access = await this.access.tenantAccess(caller, tenantId);
    const findingId = body.idempotency_key;
    return this.pipeline.audited(caller, access.tenant.id, body.dry_run ? 'finding.route.preview' : 'finding.route.commit', findingId, async () => {
      const target = (await this.view(isv.isvId, access.tenant.id)).effective[body.kind];
      const marker = this.pipeline.marker({ isvId: isv.isvId, tenantId: access.tenant.id, operation: 'finding.route', key: findingId });
      const ticketBody = {
        company_name: body.company_name,
        summary: body.title,
        description: [body.description, `Severity: ${body.severity}`].filter(Boolean).join('\n\n'),
        priority: SEVERITY_PRIORITY[body.severity.toLowerCase()] ?? 'medium',
        project_source_id: body.project_source_id ?? null,
      };
      const grant = target === 'project' ? 'psa.project.write' : 'psa.ticket.create';
      const targets = this.access.requireGrant(access, grant, 'psa');
      const prepared: { c: Connection; draft: TicketDraft; projectRef: string | null }[] = [];
      for (const c of targets) {
        const { draft } = await this.tickets.ticketDraft(access, c, ticketBody, marker);
        let projectRef: string | null = null;
        if (target === 'project') {
          if (LIMITED_PSA_CONNECTORS.includes(c.connector) && !body.project_source_id) {
            throw fieldError('project_source_id', `The ${c.connector} connector writes findings as a note on an existing project: name it in project_source_id.`);
          }
          projectRef = body.project_source_id
            ? await this.tickets.refs.project(c, body.project_source_id)
            : await this.tickets.refs.projectOfCompany(c, draft.companySourceId);
        }
        prepared.push({ c, draft, projectRef });
      }
      if (body.dry_run) {
        return { status: 200, body: {
          dry_run: true, finding_id: findingId, target,
          preview: { targets: prepared.map((p) => ({
            connection_id: p.c.id, connector: p.c.connector,
            requests: p.projectRef ? writeConnector(p.c.connector).previewProjectWrite(p.projectRef, p.draft) : writeConnector(p.c.connector).previewCreateTicket(p.draft),
          })) },
        } };
      }
      for (const p of prepared) this.pipeline.assertLiveAllowed(p.c);
      return this.pipeline.once(isv, access, 'finding.route', findingId, body, async (reservation) => {
        const outcomes = await this.pipeline.run(access.tenant.id, reservation, prepared.map((p) => ({
          connection: p.c,
          write: p.projectRef ? { op: 'project.write' as const, projectRef: p.projectRef, draft: p.draft } : { op: 'ticket.create' as const, draft: p.draft },
        })));
        await this.tickets.link(access, isv, outcomes, findingId, target);
        const answer = fanOutAnswer(outcomes, [], { finding_id: findingId, target, project_source_id: prepared[0].projectRef });
        await this.healthRow(access, findingId, 'attention_needed', `Finding routed to ${target}: ${body.title}`, { kind: body.kind, severity: body.severity, target });
        return answer;
      });
    });
  }

  async resolve(caller: Caller, tenantId: string, findingId: string, body: ResolveFindingInput): Promise<WriteAnswer> {
    asIsv(caller);
    const access = await this.access.tenantAccess(caller, tenantId);
    return this.pipeline.audited(caller, access.tenant.id, body.dry_run ? 'finding.resolve.preview' : 'finding.resolve.commit', findingId, async () => {
      const links = await this.ds.getRepository(TicketLink).find({ where: { tenantId: access.tenant.id, findingId } });
      if (links.length === 0) throw new ServiceError('not_found', `Finding ${findingId} was not routed through this service.`);
      const closable = links.filter((l) => l.target === 'service_ticket');
      const autoClose = closable.filter((l) => {
        const keys = access.grants.get(l.connectionId);
        return keys?.has('psa.ticket.auto_close') || keys?.has('*');
      });
      const closed: Record<string, unknown>[] = [];
      for (const l of autoClose) {
        const r = await this.tickets.writeTicket(caller, access.tenant.id, {
          ticket_ref: l.ticketRef, action: 'close', evidence: body.evidence ?? `Finding ${findingId} was fixed.`, dry_run: body.dry_run,
        });
        closed.push({ ticket_ref: l.ticketRef, ...(body.dry_run ? { preview: r.body.preview } : { note_ref: r.body.note_ref }) });
      }
      if (!body.dry_run) {
        await this.healthRow(access, findingId, 'resolved', `Finding ${findingId} resolved`, { auto_closed: closed.length > 0 });
      }
      return { status: 200, body: {
        dry_run: body.dry_run, finding_id: findingId, auto_close: autoClose.length > 0,
        closed, ticket_refs: links.map((l) => l.ticketRef),
      } };
    });
  }

  /** A health-feed row (kind `health`) for the finding, once per finding and type; announced to webhooks. */
  private async healthRow(access: TenantAccess, findingId: string, type: 'attention_needed' | 'resolved', summary: string, detail: Record<string, unknown>): Promise<void> {
    const ids = await this.ds.transaction((m) => this.events.insert(m, access.tenant.id, [eventDraft({
      kind: 'health', type, summary, subjectRef: findingId, detail: { finding_id: findingId, ...detail },
      dedupeKey: `finding:${findingId}:${type}${type === 'resolved' ? `:${randomUUID()}` : ''}`,
    })]));
    await this.events.emitCommitted(access.tenant.id, ids);
  }
}
