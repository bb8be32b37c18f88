/**
 * Line writes on existing agreements (interface document rule 8, docs/architecture.md, Agreements and billing) through the one
 * write skeleton: the caller needs `psa.agreement.write` on the PSA connection of the agreement; the
 * agreement must be synced and active (else 404 `agreement_requires_existing`); the line must be one of
 * that agreement's and the product one of the connection's catalogue (else 422 `validation`); the
 * connector then checks the vendor's rules. The header is never created (422
 * `agreement_header_not_supported`).
 *
 * `replace` is an end then an add under one key, each with its own marker derived from the key. When
 * the end lands and the add does not, the answer says so (`partial_failure`, HTTP 207) and the key is
 * released: a retry with the same key does not end the line again (the synced line already ends that
 * day) and finds an add that did land by its marker before sending one.
 */
import { AgreementLinesStore, type LineRow, type ProductRow } from './agreement-lines.store';
import type { z } from 'zod';
import type { DataSource } from 'typeorm';
import type { Connection } from '../../entities';
import { Grant, type Caller } from '../access/caller';
import { isvOf, type AccessService, type TenantAccess } from '../access/access.service';
import { requireTarget } from '../access/target-access';
import type { AgreementLineChange, AgreementLineDraft, AgreementLineEnd, CatalogueProduct, SyncedLine } from '../connectors/agreement-write-types';
import { ServiceError } from '../errors/service-error';
import { isSafeText } from '../shared/request';
import type { SyncService } from '../sync/sync.service';
import { checkWrite, previewWrites, UnfinishedWrite, type CommitRun, type PlannedWrite, type TargetOutcome, type WritePipeline } from '../writes/write-pipeline';
import type { AgreementLinesBody, AgreementLinesPreview, AgreementLinesResult, AgreementVerb } from './agreement.schemas';

type Body = z.infer<typeof AgreementLinesBody>;
type Preview = z.infer<typeof AgreementLinesPreview>;
type Result = z.infer<typeof AgreementLinesResult>;
type Step = Result['steps'][number];

/** An id that can be looked up and quoted back; any other names nothing. */
function safeId(id: string): boolean {
  return id.length > 0 && id.length <= 200 && isSafeText(id);
}

/**
 * The vendors' day in UTC, `YYYY-MM-DD`: the day a line change applies when none is given, and the day
 * that says which agreements are active. Read from the vendors' clock (services.ts vendorNow), the one
 * their date rules use, so a test that fixes that clock fixes this day too.
 */
export const todayUtc = (vendorNow: () => number = Date.now) => new Date(vendorNow()).toISOString().slice(0, 10);


/** The vendor writes of one verb, in order. */
type Planned =
  | { step: 'add'; draft: AgreementLineDraft }
  | { step: 'rewrite'; change: AgreementLineChange }
  | { step: 'end'; end: AgreementLineEnd };

interface Prepared {
  c: Connection;
  writes: Planned[];
}

const dayOf = (v: string | null | undefined) => (v ? v.slice(0, 10) : null);

/** A stored agreement line as the connectors' line writers see it (charges.service.ts uses it too). */
export function syncedLine(row: Pick<LineRow, 'quantity' | 'unit_price' | 'unit_cost' | 'product_source_id' | 'effective_start' | 'effective_end'>): SyncedLine {
  return {
    quantity: row.quantity, unitPrice: row.unit_price, unitCost: row.unit_cost, productSourceId: row.product_source_id,
    effectiveStart: dayOf(row.effective_start), effectiveEnd: dayOf(row.effective_end),
  };
}

export class AgreementLinesService {
  private readonly store: AgreementLinesStore;

  constructor(
    ds: DataSource,
    private readonly access: AccessService,
    private readonly pipeline: WritePipeline,
    private readonly sync: SyncService,
    private readonly vendorNow: () => number = Date.now,
  ) {
    this.store = new AgreementLinesStore(ds);
  }

  /** The header is never created (rule 8); the body was declared so the refusal is documented. */

  /** The agreement's connection: held with psa.agreement.write, synced there, and active. */
  private async agreement(access: TenantAccess, agreementSourceId: string): Promise<Connection> {
    const held = this.access.targets(access, Grant.AgreementWrite, 'psa');
    const rows: { connection_id: string; status: string }[] = safeId(agreementSourceId)
      ? await this.store.agreements(access.tenant.id, agreementSourceId)
      : [];
    const { record: row, connection: c } = requireTarget(access, Grant.AgreementWrite, held, rows, (r) => r.connection_id, () => {
      const named = safeId(agreementSourceId) ? `Agreement ${JSON.stringify(agreementSourceId)}` : 'The agreement';
      return new ServiceError('agreement_requires_existing', `${named} does not exist in this tenant's PSA; the service never creates an agreement header.`, {
        details: { agreement_status: null },
      });
    });
    if (row.status !== 'active') {
      throw new ServiceError('agreement_requires_existing', `Agreement ${agreementSourceId} is ${row.status}; only an active agreement takes a line write.`, {
        details: { agreement_status: row.status },
      });
    }
    return c;
  }

  /** A line of this agreement on this connection, or 422 (unknown, or another agreement's). */
  private async line(c: Connection, agreementSourceId: string, lineSourceId: string): Promise<LineRow> {
    const rows: LineRow[] = safeId(lineSourceId)
      ? await this.store.lines(c.tenantId, c.id, lineSourceId)
      : [];
    if (!rows.length) throw invalid('line_source_id', `Line ${JSON.stringify(lineSourceId)} is not a line of any agreement of this PSA.`);
    if (rows[0].agreement_source_id !== agreementSourceId) {
      throw invalid('line_source_id', `Line ${lineSourceId} belongs to agreement ${rows[0].agreement_source_id}, not ${agreementSourceId}.`);
    }
    return rows[0];
  }

  /** The catalogue product on this connection, or 422. */
  private async product(c: Connection, productSourceId: string): Promise<CatalogueProduct> {
    const rows: ProductRow[] = safeId(productSourceId)
      ? await this.store.products(c.tenantId, c.id, productSourceId)
      : [];
    if (!rows.length) throw invalid('product_source_id', `Product ${JSON.stringify(productSourceId)} is not in this PSA's catalogue (GET /tenants/{tenant_id}/products).`);
    const r = rows[0];
    return { sourceId: r.source_id, name: r.name, sku: r.sku, unitPrice: r.unit_price, unitCost: r.unit_cost, active: r.active };
  }

  /** References resolved, the writes planned and checked against the vendor's rules. */
  private async prepare(access: TenantAccess, agreementSourceId: string, b: Body, marker: string): Promise<Prepared> {
    const c = await this.agreement(access, agreementSourceId);
    const date = b.effective_date ?? todayUtc(this.vendorNow);
    const writes: Planned[] = [];
    const current = b.line_source_id != null ? syncedLine(await this.line(c, agreementSourceId, b.line_source_id)) : null;
    const draft = async (m: string): Promise<AgreementLineDraft> => ({
      marker: m, agreementSourceId, productSourceId: b.product_source_id!, product: await this.product(c, b.product_source_id!),
      quantity: b.quantity!, unitPrice: b.unit_price ?? null, unitCost: b.unit_cost ?? null, effectiveDate: date, description: b.description ?? null,
    });
    const end = (m: string): AgreementLineEnd => ({ marker: m, agreementSourceId, lineSourceId: b.line_source_id!, endDate: date, current });
    if (b.verb === 'add') writes.push({ step: 'add', draft: await draft(marker) });
    if (b.verb === 'end') writes.push({ step: 'end', end: end(marker) });
    if (b.verb === 'replace') {
      const add = await draft(`${marker}-add`);
      writes.push({ step: 'end', end: { ...end(`${marker}-end`), replacedBy: add } }, { step: 'add', draft: add });
    }
    if (b.verb === 'rewrite') {
      writes.push({ step: 'rewrite', change: {
        marker, agreementSourceId, lineSourceId: b.line_source_id!, effectiveDate: date, current,
        ...(b.quantity != null ? { quantity: b.quantity } : {}),
        ...(b.unit_price != null ? { unitPrice: b.unit_price } : {}),
        ...(b.unit_cost != null ? { unitCost: b.unit_cost } : {}),
      } });
    }
    // Every step's vendor rules before anything is reserved or sent (the registry's write, 501 where the connector has none).
    for (const w of writes) checkWrite(planned(c, w));
    return { c, writes };
  }

  async write(caller: Caller, access: TenantAccess, agreementSourceId: string, body: Body): Promise<Preview | Result> {
    isvOf(caller);
    return this.pipeline.write({
      caller, access, operation: `agreement.line.${body.verb}`, subjectRef: safeId(agreementSourceId) ? agreementSourceId : null, request: body,
      prepare: (marker) => this.prepare(access, agreementSourceId, body, marker),
      targets: (p) => [p.c],
      preview: (p): Preview => ({
        dry_run: true as const, verb: body.verb, agreement_source_id: agreementSourceId,
        preview: { targets: previewWrites(p.writes.map((w) => planned(p.c, w))) },
      }),
      commit: (p, run) => this.commit(agreementSourceId, body.verb, p, run),
    });
  }

  /** The planned writes one after the other; the store is synced after any write landed. */
  private async commit(agreementSourceId: string, verb: AgreementVerb, p: Prepared, run: CommitRun): Promise<Result> {
    const steps: Step[] = [];
    let failure: ServiceError | null = null;
    for (const w of p.writes) {
      // A taken-over replace whose end landed before: the synced line already ends that day.
      if (w.step === 'end' && run.takeover && w.end.current?.effectiveEnd === w.end.endDate) {
        steps.push({ step: 'end', ok: true, line_source_id: w.end.lineSourceId, reconciled: true, error: null });
        continue;
      }
      const [o]: TargetOutcome[] = await run.send([planned(p.c, w)]);
      if (!o.ok) {
        failure = o.error ?? new ServiceError('vendor_error', `The ${p.c.connector} write failed.`);
        steps.push({ step: w.step, ok: false, line_source_id: w.step === 'add' ? null : lineOf(w), reconciled: false, error: { code: failure.code, message: failure.message, status: failure.status } });
        break;
      }
      steps.push({ step: w.step, ok: true, line_source_id: o.result?.lineRef ?? null, reconciled: o.result?.reconciled ?? false, error: null });
    }
    const landed = steps.filter((s) => s.ok).length;
    if (landed > 0) await this.sync.syncConnection(p.c.id, { resources: ['agreements', 'agreement_lines'] }).catch(() => undefined);
    if (failure && landed === 0) throw failure;
    const added = steps.some((s) => s.step === 'add' && s.ok);
    const result: Result = {
      dry_run: false as const, idempotent_replay: false, created: added && !failure, verb, agreement_source_id: agreementSourceId,
      connection_id: p.c.id, connector: p.c.connector, steps, partial_failure: failure != null,
      failed_step: failure ? steps[steps.length - 1].step : null,
      retryable: failure != null && ['rate_limited', 'vendor_unavailable', 'vendor_error'].includes(failure.code),
    };
    if (failure) throw new UnfinishedWrite(result);
    return result;
  }
}

/** A step as the registered write it is; `step` keeps several writes of one reservation on one connection apart. */
function planned(connection: Connection, w: Planned): PlannedWrite {
  if (w.step === 'add') return { connection, step: w.step, name: 'agreement.line.add', input: w.draft };
  if (w.step === 'rewrite') return { connection, step: w.step, name: 'agreement.line.rewrite', input: w.change };
  return { connection, step: w.step, name: 'agreement.line.end', input: w.end };
}

function lineOf(w: Planned): string | null {
  return w.step === 'rewrite' ? w.change.lineSourceId : w.step === 'end' ? w.end.lineSourceId : null;
}

function invalid(field: string, message: string): ServiceError {
  return new ServiceError('validation', message, { details: { field, problems: [{ field, message }] } });
}

/** HTTP status of a line write: preview 200, an add 201, a change 200, a half-done replace 207. */
export function agreementWriteStatus(r: Preview | Result): number {
  if (r.dry_run) return 200;
  if (r.partial_failure) return 207;
  return r.created ? 201 : 200;
}
