/**
 * The audit log's store (docs/architecture.md, Folders): the one INSERT of an entry, the log's pages and
 * filters, the labels of the subjects its entries name, and a tenant's log cleared.
 */
import type { DataSource, EntityManager } from 'typeorm';
import { AuditEntry } from '../../entities';
import { auditDetailOf } from '../operations/audit-context';
import { rowsToFetch, type PageRequest } from '../shared/paging';

export interface AuditInput {
  /** Null for an entry of an ISV's own (its keys, no tenant involved): `isvId` names the ISV. */
  tenantId: string | null;
  isvId?: string | null;
  action: string;
  outcome: AuditEntry['outcome'];
  connectionId?: string | null;
  subjectRef?: string | null;
  detail?: Record<string, unknown>;
}

/** What a page of the log is filtered on. */
export type AuditQuery = PageRequest & { action?: string | null; outcome?: string | null; actor?: string | null; subject?: string | null; previews?: 'include' | 'exclude' | 'only' | null };


/**
 * The one INSERT of an audit entry, with its parameters numbered from `first`: a statement that stores
 * something else with its audit entry (a commit's answer, idempotency.service.ts) embeds it.
 */
export function auditInsert(input: AuditInput, first: number): { sql: string; params: unknown[] } {
  const params = [input.tenantId, input.isvId ?? null, input.action, input.outcome, input.connectionId ?? null, input.subjectRef ?? null, JSON.stringify(auditDetailOf(input.detail))];
  const $ = (i: number) => `$${first + i}`;
  return {
    // created_at is when the row is written (clock_timestamp()), not when its transaction began (now()): a
    // sync's outcome is written at the end of a long transaction, and with now() it sorted before entries
    // written earlier by shorter ones, so a page newest first by seq showed created_at going backwards.
    sql: `INSERT INTO audit_entries (tenant_id, isv_id, action, outcome, connection_id, subject_ref, detail, created_at, updated_at)
          VALUES (${$(0)}::uuid, ${$(1)}::uuid, ${$(2)}, ${$(3)}, ${$(4)}::uuid, ${$(5)}, ${$(6)}::jsonb, clock_timestamp(), clock_timestamp())`,
    params,
  };
}

/**
 * Where an entry's subject gets the label a person reads beside its id, by the action's first word (what
 * kind of thing the subject is): `$1` the tenant, `$2` the entries' subject ids. An entry that recorded
 * its own label (`detail.subject_label`, a grant change) keeps it; a subject no longer stored has none.
 */
const SUBJECT_LABELS: Record<string, string> = {
  ticket: `SELECT source_id AS ref, summary AS label FROM tickets WHERE tenant_id = $1 AND source_id = ANY($2::text[])`,
  time: `SELECT source_id AS ref, summary AS label FROM tickets WHERE tenant_id = $1 AND source_id = ANY($2::text[])`,
  project: `SELECT source_id AS ref, name AS label FROM projects WHERE tenant_id = $1 AND source_id = ANY($2::text[])`,
  agreement: `SELECT source_id AS ref, name AS label FROM agreements WHERE tenant_id = $1 AND source_id = ANY($2::text[])`,
  charge: `SELECT id::text AS ref, concat_ws(' · ', company_name, product_name) AS label FROM charges WHERE tenant_id = $1 AND id::text = ANY($2::text[])`,
  grants: `SELECT id::text AS ref, name AS label FROM isvs WHERE $1::uuid IS NOT NULL AND id::text = ANY($2::text[])`,
};

export class AuditStore {
  constructor(private readonly ds: DataSource) {}

  async insertEntry(input: AuditInput, m: EntityManager = this.ds.manager): Promise<void> {
    const { sql, params } = auditInsert(input, 1);
    await m.query(sql, params);
  }

  /** Entries newest first on `seq`, before the sequence number `before` when given, filtered as the query says (`isvId`: the system's entries and that ISV's own). */
  entries(tenantId: string, q: AuditQuery, before: string | null, isvId: string | null): Promise<AuditEntry[]> {
    const qb = this.ds.getRepository(AuditEntry).createQueryBuilder('a')
      .where('a.tenant_id = :tenantId', { tenantId })
      .orderBy('a.seq', 'DESC')
      .limit(rowsToFetch(q.limit));
    if (before) qb.andWhere('a.seq < :before', { before });
    if (q.updated_since) qb.andWhere('a.created_at >= :since', { since: new Date(q.updated_since) });
    if (isvId) qb.andWhere('(a.isv_id IS NULL OR a.isv_id = :isvId)', { isvId });
    if (q.action) qb.andWhere("starts_with(a.action, :action)", { action: q.action });
    if (q.outcome) qb.andWhere('a.outcome = :outcome', { outcome: q.outcome });
    if (q.actor) qb.andWhere("(lower(a.detail->'actor'->>'email') = lower(:actor) OR a.detail->'actor'->>'key_prefix' = :actor OR a.detail->'actor'->>'kind' = :actor)", { actor: q.actor });
    if (q.subject) qb.andWhere('a.subject_ref = :subject', { subject: q.subject });
    if (q.previews === 'exclude') qb.andWhere("a.action NOT LIKE '%.preview'");
    if (q.previews === 'only') qb.andWhere("a.action LIKE '%.preview'");
    return qb.getMany();
  }

  /** Whether subjects of this kind (an action's first word) have a label in the store. */
  labels(kind: string): boolean {
    return kind in SUBJECT_LABELS;
  }

  /** The labels of subjects of one kind, by subject id (a subject no longer stored, or without a label, has none). */
  async subjectLabels(tenantId: string, kind: string, refs: string[]): Promise<Map<string, string>> {
    const rows: { ref: string; label: string }[] = await this.ds.query(SUBJECT_LABELS[kind], [tenantId, refs]);
    return new Map(rows.filter((r) => r.label).map((r) => [r.ref, r.label]));
  }

  async clearTenant(tenantId: string, m: EntityManager = this.ds.manager): Promise<void> {
    await m.getRepository(AuditEntry).delete({ tenantId });
  }
}
