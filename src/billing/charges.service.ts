/**
 * Charges (docs/architecture.md, Agreements and billing). A charge proposes that an agreement line bill what the ISVs report:
 * for each line that cost rows land on (cost-resolution.ts), the billable quantity of the latest
 * period reported for it, summed over those rows; when it differs from the line's quantity, the
 * charge is pending. Charges are recomputed whenever cost rows, mappings, identity matches or
 * agreements change. The MSP approves a charge (the line's quantity is rewritten at the PSA, once per
 * key, on connectors that declare `charge.approve`) or dismisses it (nothing changes at the PSA), and may
 * restore a dismissed one. A decision stands for the figure it was about: the same proposal does not
 * come back by itself, a new one does.
 */
import type { DataSource } from 'typeorm';
import type { z } from 'zod';
import type { Connection } from '../../entities';
import type { TenantAccess } from '../access/access.service';
import type { Caller } from '../access/caller';
import { syncedLine, todayUtc } from '../agreements/agreement-lines.service';
import type { AgreementLineChange } from '../connectors/agreement-write-types';
import { declares } from '../connectors/registry';
import { ServiceError } from '../errors/service-error';
import { retryingTransient } from '../db/transient';
import { isUuid } from '../shared/request';
import type { SyncService } from '../sync/sync.service';
import { checkWrite, previewWrites, type CommitRun, type PlannedWrite, type WritePipeline } from '../writes/write-pipeline';
import type { ApproveChargeBody, ApproveChargePreview, ApproveChargeResult, Charge, ChargeDecision as ChargeDecisionSchema, ChargesQuery, IsvCharge, UnresolvedCostRow } from './billing.schemas';
import type { Page } from '../shared/paging';
import { unresolvedOut, type LandedCostRow } from './cost-resolution';
import { resolveCostRows, storeCostResolutions } from './cost-resolution.store';
import { ChargesStore, lineKey } from './charges.store';
import { Transactions } from '../db/transactions';

type ChargeOut = z.infer<typeof Charge>;
type Preview = z.infer<typeof ApproveChargePreview>;
type Result = z.infer<typeof ApproveChargeResult>;
type ChargeDecision = z.infer<typeof ChargeDecisionSchema>;

interface Proposal {
  connectionId: string;
  agreementSourceId: string;
  lineSourceId: string;
  periodStart: string;
  periodEnd: string;
  quantity: number;
  costIds: string[];
}

const SAME = 1e-9;
const rowIds = (v: unknown): string[] => (typeof v === 'string' ? JSON.parse(v) : v) as string[];

/** The latest period's billable quantity per line, over every row that lands on it. */
export function proposals(rows: LandedCostRow[]): Map<string, Proposal> {
  const out = new Map<string, Proposal>();
  for (const r of rows) {
    if (!r.lineSourceId || !r.connectionId) continue;
    const key = lineKey(r.connectionId, r.lineSourceId);
    const p = out.get(key);
    const newer = !p || r.periodEnd > p.periodEnd || (r.periodEnd === p.periodEnd && r.periodStart > p.periodStart);
    if (newer) {
      out.set(key, { connectionId: r.connectionId, agreementSourceId: r.agreementSourceId!, lineSourceId: r.lineSourceId, periodStart: r.periodStart, periodEnd: r.periodEnd, quantity: r.billableQuantity, costIds: [r.costId] });
    } else if (r.periodEnd === p.periodEnd && r.periodStart === p.periodStart) {
      p.quantity += r.billableQuantity;
      p.costIds.push(r.costId);
    }
  }
  return out;
}

function chargeOut(r: Record<string, any>): ChargeOut {
  const costRows = typeof r.cost_rows === 'string' ? JSON.parse(r.cost_rows) : r.cost_rows;
  return {
    id: r.id, agreement_source_id: r.agreement_source_id, line_source_id: r.line_source_id, connection_id: r.connection_id, connector: r.connector,
    company: { source_id: r.company_source_id ?? null, name: r.company_name ?? null },
    product: { source_id: r.product_source_id ?? null, name: r.product_name ?? null },
    current_quantity: r.current_quantity == null ? null : Number(r.current_quantity), proposed_quantity: Number(r.proposed_quantity),
    unit_price: r.unit_price == null ? null : Number(r.unit_price),
    period: { start: r.period_start, end: r.period_end }, cost_rows: [...costRows].sort(), status: r.status,
    decided_at: r.decided_at ? new Date(r.decided_at).toISOString() : null,
    created_at: new Date(r.created_at).toISOString(), updated_at: new Date(r.updated_at).toISOString(),
  };
}

export class ChargesService {
  private readonly store: ChargesStore;

  /** What commits together (src/db/transactions.ts). */
  private readonly transactions: Transactions;
  constructor(
    private readonly ds: DataSource,
    private readonly pipeline: WritePipeline,
    private readonly sync: SyncService,
    private readonly vendorNow: () => number = Date.now,
  ) {
    this.transactions = new Transactions(ds);
    this.store = new ChargesStore(ds);
  }

  /** Brings the tenant's charges in line with its cost rows, mappings, identity matches and agreements. */
  async recompute(tenantId: string): Promise<void> {
    // A reset of the tenant deleting these rows may deadlock with it: the victim runs again (src/db/transient.ts).
    await retryingTransient(() => this.transactions.run(async (m) => {
      // One recomputation per tenant at a time (across processes on PostgreSQL).
      await this.store.lock(m, tenantId);
      // Resolved under the lock, and stored for the reconciliation.
      const wanted = proposals(await storeCostResolutions(m, tenantId));
      const lines = await this.store.lineFacts(tenantId, [...wanted.values()].map((p) => p.lineSourceId), m);
      const existing = await this.store.existing(m, tenantId);
      const open = new Map(existing.filter((e) => e.status === 'pending' || e.status === 'approving').map((e) => [lineKey(e.connection_id, e.line_source_id), e]));
      const decided = new Set(existing.filter((e) => e.status === 'approved' || e.status === 'dismissed')
        .map((e) => `${lineKey(e.connection_id, e.line_source_id)}|${e.period_start}|${e.period_end}|${Number(e.proposed_quantity)}`));
      const keep = new Set<string>();
      const inserts: unknown[][] = [];
      for (const [key, p] of wanted) {
        const line = lines.get(key);
        if (!line || (line.quantity != null && Math.abs(Number(line.quantity) - p.quantity) < SAME)) continue;
        keep.add(key);
        const current = open.get(key);
        if (current?.status === 'approving') continue;
        if (!current && decided.has(`${key}|${p.periodStart}|${p.periodEnd}|${p.quantity}`)) continue;
        const costRows = JSON.stringify([...p.costIds].sort());
        if (current) {
          const same = Number(current.proposed_quantity) === p.quantity && current.period_start === p.periodStart && current.period_end === p.periodEnd
            && Number(current.current_quantity) === Number(line.quantity) && JSON.stringify([...(current.cost_rows as string[])].sort()) === costRows
            && (current.unit_price == null ? null : Number(current.unit_price)) === (line.unit_price == null ? null : Number(line.unit_price));
          if (!same) {
            await this.store.updateCharge(m, [current.id, p.quantity, line.quantity, line.unit_price, p.periodStart, p.periodEnd, costRows]);
          }
          continue;
        }
        inserts.push([tenantId, p.connectionId, p.agreementSourceId, p.lineSourceId, line.company_source_id, line.company_name, line.product_source_id, line.product_name, line.quantity, p.quantity, line.unit_price, p.periodStart, p.periodEnd, costRows]);
      }
      await this.store.insertPendingCharges(m, inserts);
      const stale = [...open.entries()].filter(([key, e]) => e.status === 'pending' && !keep.has(key)).map(([, e]) => e.id);
      if (stale.length) await this.store.deleteCharges(m, stale);
    }));
  }

  /** One page of charges (newest period first), with every unresolved cost row of the latest periods. */
  async list(tenantId: string, q: z.infer<typeof ChargesQuery>): Promise<Page<z.infer<typeof Charge>> & { unresolved: z.infer<typeof UnresolvedCostRow>[] }> {
    const { rows, next_cursor } = await this.store.page(tenantId, q, null);
    const unresolved = await resolveCostRows(this.ds, tenantId, null, true);
    return { items: rows.map(chargeOut), next_cursor, unresolved: unresolved.map(unresolvedOut) };
  }

  /**
   * The charges one ISV's rows raised, as that ISV may see them (IsvCharge: its own rows and quantities,
   * no unit price), with its own unresolved rows.
   */
  async listForIsv(tenantId: string, isvId: string, q: z.infer<typeof ChargesQuery>): Promise<Page<z.infer<typeof IsvCharge>> & { unresolved: z.infer<typeof UnresolvedCostRow>[] }> {
    const { rows, next_cursor } = await this.store.page(tenantId, q, isvId);
    const ids = [...new Set(rows.flatMap((r) => rowIds(r.cost_rows)))];
    const mine: { id: string; billable_quantity: number }[] = ids.length
      ? await this.store.isvQuantities(tenantId, isvId, ids) : [];
    const qty = new Map(mine.map((r) => [r.id, Number(r.billable_quantity)]));
    const items = rows.map((r) => {
      const { unit_price: _price, connection_id: _connection, cost_rows: all, proposed_quantity, ...rest } = chargeOut(r);
      const own = all.filter((id) => qty.has(id));
      return {
        ...rest, proposed_quantity: own.length === all.length ? proposed_quantity : null,
        your_quantity: own.reduce((sum, id) => sum + qty.get(id)!, 0), cost_rows: own,
      };
    });
    const unresolved = (await resolveCostRows(this.ds, tenantId, null, true)).filter((r) => r.isvId === isvId);
    return { items, next_cursor, unresolved: unresolved.map(unresolvedOut) };
  }

  private async load(tenantId: string, id: string): Promise<Record<string, any>> {
    const rows = isUuid(id) ? await this.store.one(tenantId, id) : [];
    if (!rows.length) throw new ServiceError('not_found', `No charge ${JSON.stringify(id.slice(0, 100))} on this tenant.`);
    return rows[0];
  }

  /** Approve: the line's quantity becomes the proposed one, at the PSA (preview by default). */
  async approve(caller: Caller, access: TenantAccess, id: string, body: z.infer<typeof ApproveChargeBody>): Promise<Preview | Result> {
    const tenantId = access.tenant.id;
    return this.pipeline.write({
      caller, access, operation: 'charge.approve', subjectRef: isUuid(id) ? id : null, request: body,
      prepare: async (marker) => {
        const charge = await this.load(tenantId, id);
        const c = access.connections.find((x) => x.id === charge.connection_id);
        if (!c) throw new ServiceError('not_found', 'No such charge on this tenant.');
        if (!declares(c.connector, 'charge.approve')) {
          throw ServiceError.notSupported(`Approving a charge rewrites the agreement line at the PSA, which the ${c.connector} connector does not do; change the line there, or dismiss the charge.`);
        }
        // Pending (or ours, half-done, when a retry takes its key over): anything else was decided.
        if (charge.status !== 'pending' && charge.status !== 'approving') {
          throw new ServiceError('request_invalid', `Charge ${id} is ${charge.status}; only a pending charge can be approved.`, { details: { status: charge.status } });
        }
        const line = (await this.store.lineFacts(tenantId, [charge.line_source_id])).get(lineKey(c.id, charge.line_source_id));
        const change: AgreementLineChange = {
          marker, agreementSourceId: charge.agreement_source_id, lineSourceId: charge.line_source_id, effectiveDate: todayUtc(this.vendorNow),
          quantity: Number(charge.proposed_quantity), current: line ? syncedLine(line) : null,
        };
        const write: PlannedWrite = { connection: c, name: 'agreement.line.rewrite', input: change };
        checkWrite(write);
        return { charge, c, change, write };
      },
      targets: (p) => [p.c],
      preview: (p): Preview => ({
        dry_run: true as const, charge: chargeOut(p.charge),
        preview: { targets: previewWrites([p.write]) },
      }),
      commit: (p, run) => this.commitApproval(tenantId, p.charge, p.c, p.write, p.change, run),
    });
  }

  private async commitApproval(tenantId: string, charge: Record<string, any>, c: Connection, write: PlannedWrite, change: AgreementLineChange, run: CommitRun): Promise<Result> {
    // Claim the charge: a second approval (another key) finds it taken and writes nothing.
    if (!(await this.store.claimForApproval(charge.id, run.takeover))) {
      const now = await this.load(tenantId, charge.id);
      throw new ServiceError('request_invalid', `Charge ${charge.id} is ${now.status}; only a pending charge can be approved.`, { details: { status: now.status } });
    }
    const [o] = await run.send([write]);
    if (!o.ok) {
      await this.store.releaseApproval(charge.id);
      throw o.error ?? new ServiceError('vendor_error', `The ${c.connector} write failed.`);
    }
    await this.store.markApproved(charge.id);
    // The line's new quantity comes back through the sync, which recomputes the other charges.
    await this.sync.syncConnection(c.id, { resources: ['agreements', 'agreement_lines'] }).catch(() => undefined);
    return {
      dry_run: false as const, idempotent_replay: false, created: false, charge: chargeOut(await this.load(tenantId, charge.id)),
      line_source_id: charge.line_source_id, quantity: change.quantity!,
    };
  }

  /**
   * Dismiss (pending -> dismissed) and restore (dismissed -> pending): decisions on our own record,
   * nothing is sent to the PSA. A preview (the default) answers the change and changes nothing, and
   * refuses exactly what the commit would; a charge already where the decision would put it answers
   * `changed: false`. A restored charge is pending again and the next recomputation keeps it current.
   */
  dismiss(tenantId: string, id: string, dryRun: boolean): Promise<ChargeDecision> {
    return this.decide(tenantId, id, dryRun, 'pending', 'dismissed');
  }

  restore(tenantId: string, id: string, dryRun: boolean): Promise<ChargeDecision> {
    return this.decide(tenantId, id, dryRun, 'dismissed', 'pending');
  }

  private async decide(tenantId: string, id: string, dryRun: boolean, from: 'pending' | 'dismissed', to: 'pending' | 'dismissed'): Promise<ChargeDecision> {
    const verb = to === 'dismissed' ? 'dismissed' : 'restored';
    const refuse = (status: string) => new ServiceError('request_invalid', `Charge ${id} is ${status}; only a ${from} charge can be ${verb}.`, { details: { status } });
    const charge = await this.load(tenantId, id);
    if (charge.status === to) return { dry_run: dryRun, charge: chargeOut(charge), changed: false, change: null };
    if (charge.status !== from) throw refuse(charge.status);
    const change = { status: { from, to } };
    if (dryRun) return { dry_run: true, charge: chargeOut(charge), changed: true, change };
    const rows = await this.store.decide(charge.id, from, to);
    if (!rows.length) {
      const now = await this.load(tenantId, id);
      if (now.status === to) return { dry_run: false, charge: chargeOut(now), changed: false, change: null };
      throw refuse(now.status);
    }
    return { dry_run: false, charge: chargeOut(await this.load(tenantId, id)), changed: true, change };
  }
}
