/**
 * Batched upsert of one vendor page into its table: one SELECT of what is stored, one
 * INSERT .. SELECT FROM jsonb_to_recordset(..) ON CONFLICT for what changed. Unchanged records (same
 * payload hash) are not written at all, which keeps incremental and repeated syncs cheap and gives
 * change detection the before/after it needs.
 */
import { createHash } from 'node:crypto';
import type { DataSource, EntityManager, EntityTarget } from 'typeorm';
import {
  AgreementLineRecord, AgreementRecord, BoardRecord, CompanyRecord, ContactRecord, DeviceRecord, IncidentRecord,
  InstalledApplicationRecord, MemberRecord, PackageRecord, PriorityRecord, ProjectRecord, StatusRecord, TicketRecord,
} from '../../entities';
import type { FetchedRecord, SyncResource } from '../connectors/types';

export const ENTITY_BY_RESOURCE: Record<SyncResource, EntityTarget<object>> = {
  tickets: TicketRecord, companies: CompanyRecord, contacts: ContactRecord, members: MemberRecord,
  boards: BoardRecord, statuses: StatusRecord, priorities: PriorityRecord, devices: DeviceRecord,
  applications: InstalledApplicationRecord, incidents: IncidentRecord, agreements: AgreementRecord,
  agreement_lines: AgreementLineRecord, projects: ProjectRecord, packages: PackageRecord,
};

interface TablePlan {
  table: string;
  columns: { db: string; prop: string; sqlType: string }[];
  insertSql: string;
}

export interface StoredRow {
  id: string;
  source_id: string;
  raw_hash: string;
  [column: string]: unknown;
}

export interface PageWriteResult {
  created: { record: FetchedRecord; id: string }[];
  updated: { record: FetchedRecord; id: string; before: StoredRow }[];
  unchanged: number;
}

export function payloadHash(native: unknown): string {
  return createHash('sha256').update(JSON.stringify(native)).digest('hex');
}

export class RecordWriter {
  private readonly plans = new Map<SyncResource, TablePlan>();

  constructor(private readonly ds: DataSource) {}

  plan(resource: SyncResource): TablePlan {
    let p = this.plans.get(resource);
    if (p) return p;
    const meta = this.ds.getMetadata(ENTITY_BY_RESOURCE[resource]);
    const columns = meta.columns
      .filter((c) => !c.isPrimary)
      .map((c) => ({ db: c.databaseName, prop: c.propertyName, sqlType: String(c.type) }));
    const names = columns.map((c) => `"${c.db}"`).join(', ');
    const recordset = columns.map((c) => `"${c.db}" ${c.sqlType}`).join(', ');
    const updates = columns.filter((c) => !['tenant_id', 'connection_id', 'source_id'].includes(c.db))
      .map((c) => `"${c.db}" = EXCLUDED."${c.db}"`).join(', ');
    const insertSql =
      `INSERT INTO "${meta.tableName}" (${names}) SELECT ${names} FROM jsonb_to_recordset($1::jsonb) AS x(${recordset}) ` +
      `ON CONFLICT (tenant_id, connection_id, source_id) DO UPDATE SET ${updates} RETURNING id, source_id`;
    p = { table: meta.tableName, columns, insertSql };
    this.plans.set(resource, p);
    return p;
  }

  /**
   * Writes one page. `force` rewrites unchanged rows too (a full sync refreshes derived columns such
   * as a changed status mapping).
   */
  async writePage(
    manager: EntityManager,
    resource: SyncResource,
    scope: { tenantId: string; connectionId: string },
    page: FetchedRecord[],
    syncedAt: Date,
    force = false,
  ): Promise<PageWriteResult> {
    const plan = this.plan(resource);
    const bySource = new Map<string, FetchedRecord>();
    for (const r of page) bySource.set(r.sourceId, r);
    const records = [...bySource.values()];
    if (records.length === 0) return { created: [], updated: [], unchanged: 0 };

    const stored: StoredRow[] = await manager.query(
      `SELECT * FROM "${plan.table}" WHERE tenant_id = $1 AND connection_id = $2 AND source_id = ANY($3::text[])`,
      [scope.tenantId, scope.connectionId, records.map((r) => r.sourceId)],
    );
    const before = new Map(stored.map((s) => [s.source_id, s]));
    const rows: Record<string, unknown>[] = [];
    const changed: { record: FetchedRecord; hash: string }[] = [];
    let unchanged = 0;
    for (const record of records) {
      const hash = payloadHash(record.native);
      if (!force && before.get(record.sourceId)?.raw_hash === hash) {
        unchanged++;
        continue;
      }
      changed.push({ record, hash });
      const values: Record<string, unknown> = {
        ...record.fields,
        tenantId: scope.tenantId,
        connectionId: scope.connectionId,
        sourceId: record.sourceId,
        raw: record.native,
        rawHash: hash,
        vendorUpdatedAt: record.vendorUpdatedAt,
        syncedAt,
      };
      const row: Record<string, unknown> = {};
      for (const c of plan.columns) row[c.db] = values[c.prop] ?? null;
      rows.push(row);
    }
    if (rows.length === 0) return { created: [], updated: [], unchanged };
    const returned: { id: string; source_id: string }[] = await manager.query(plan.insertSql, [JSON.stringify(rows)]);
    const ids = new Map(returned.map((r) => [r.source_id, r.id]));
    const result: PageWriteResult = { created: [], updated: [], unchanged };
    for (const { record } of changed) {
      const id = ids.get(record.sourceId)!;
      const prev = before.get(record.sourceId);
      if (prev) result.updated.push({ record, id, before: prev });
      else result.created.push({ record, id });
    }
    return result;
  }
}
