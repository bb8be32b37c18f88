/** The audit log: one entry per sync outcome, commit and refusal, per tenant. */
import type { DataSource, EntityManager } from 'typeorm';
import { AuditEntry } from '../../entities';

export interface AuditInput {
  tenantId: string;
  isvId?: string | null;
  action: string;
  outcome: AuditEntry['outcome'];
  connectionId?: string | null;
  subjectRef?: string | null;
  detail?: Record<string, unknown>;
}

/**
 * The one INSERT of an audit entry, with its parameters numbered from `first`: a statement that stores
 * something else with its audit entry (a commit's answer, idempotency.service.ts) embeds it.
 */
export function auditInsert(input: AuditInput, first: number): { sql: string; params: unknown[] } {
  const params = [input.tenantId, input.isvId ?? null, input.action, input.outcome, input.connectionId ?? null, input.subjectRef ?? null, JSON.stringify(input.detail ?? {})];
  const $ = (i: number) => `$${first + i}`;
  return {
    sql: `INSERT INTO audit_entries (tenant_id, isv_id, action, outcome, connection_id, subject_ref, detail)
          VALUES (${$(0)}::uuid, ${$(1)}::uuid, ${$(2)}, ${$(3)}, ${$(4)}::uuid, ${$(5)}, ${$(6)}::jsonb)`,
    params,
  };
}

export class AuditService {
  constructor(private readonly ds: DataSource) {}

  async write(input: AuditInput, manager: EntityManager = this.ds.manager): Promise<void> {
    const { sql, params } = auditInsert(input, 1);
    await manager.query(sql, params);
  }

  /**
   * Newest first; `before` is the seq of the last entry of the previous page.
   * `isvId` set: the system's entries and that ISV's own, never another ISV's.
   */
  async list(tenantId: string, limit: number, before: string | null, isvId: string | null): Promise<{ items: AuditEntry[]; next: string | null }> {
    const qb = this.ds.getRepository(AuditEntry).createQueryBuilder('a')
      .where('a.tenant_id = :tenantId', { tenantId })
      .orderBy('a.seq', 'DESC')
      .limit(limit + 1);
    if (before) qb.andWhere('a.seq < :before', { before });
    if (isvId) qb.andWhere('(a.isv_id IS NULL OR a.isv_id = :isvId)', { isvId });
    const rows = await qb.getMany();
    const more = rows.length > limit;
    if (more) rows.pop();
    return { items: rows, next: more ? rows[rows.length - 1].seq : null };
  }

  async clearTenant(tenantId: string, manager: EntityManager = this.ds.manager): Promise<void> {
    await manager.getRepository(AuditEntry).delete({ tenantId });
  }
}
