/**
 * The record lists' store (docs/architecture.md, Reads): one page of a list's rows (or the record a
 * path names), the lines of agreements and the oldest sync of the connections feeding a list. Which
 * connections feed a list, the paging and the answer's shape stay in records.service.ts.
 */
import type { DataSource } from 'typeorm';
import { isUuid } from '../shared/request';
import { rowsToFetch } from '../shared/paging';
import { ENTITY_BY_RESOURCE } from '../sync/record-writer';
import { escapeStoredText } from '../sync/stored-text';
import { RECORD_LISTS, type RecordListName, type Row } from './record-lists';

export interface RowsQuery {
  limit: number;
  /** A single-record read: our id (a uuid) or the vendor's source_id. */
  recordId?: string;
  /** Id of the last record of the previous page (decoded cursor). */
  after?: string | null;
  updatedSince?: Date | null;
}

export class RecordsStore {
  constructor(private readonly ds: DataSource) {}

  /**
   * One page of the list's rows (one more than the limit), or the record `recordId` names; `rawAsText`
   * leaves `raw` unparsed; `ofKind`: the tenant's connections of the list's kind (a list that keeps to them).
   */
  rows(name: RecordListName, tenantId: string, q: RowsQuery, rawAsText: boolean, ofKind: string[]): Promise<Row[]> {
    const def = RECORD_LISTS[name];
    const extra = 'extraColumns' in def && def.extraColumns ? `, ${def.extraColumns}` : '';
    return this.ds.query(
      `SELECT ${rawAsText ? this.columnsWithRawText(name) : 'r.*'}${extra}
         FROM ${def.table} r
        WHERE r.tenant_id = $1
          AND ($2::uuid IS NULL OR r.id > $2::uuid)
          AND ($3::timestamptz IS NULL OR COALESCE(r.vendor_updated_at, r.synced_at) >= $3::timestamptz)
          AND ($5::text IS NULL OR r.source_id = $5 OR ($6::uuid IS NOT NULL AND r.id = $6::uuid)${'shownIdColumn' in def ? ` OR r.${def.shownIdColumn} = $5` : ''})
          ${'onlyKind' in def && def.onlyKind ? 'AND r.connection_id = ANY($7::uuid[])' : ''}
        ORDER BY r.id
        LIMIT $4`,
      [tenantId, q.after ?? null, q.updatedSince ?? null, rowsToFetch(q.limit), q.recordId != null ? escapeStoredText(q.recordId) : null, q.recordId && isUuid(q.recordId) ? q.recordId : null,
        ...('onlyKind' in def && def.onlyKind ? [ofKind] : [])],
    );
  }

  private readonly selectLists = new Map<RecordListName, string>();

  private columnsWithRawText(name: RecordListName): string {
    let cols = this.selectLists.get(name);
    if (!cols) {
      const meta = this.ds.getMetadata(ENTITY_BY_RESOURCE[RECORD_LISTS[name].resource]);
      cols = [...meta.columns.filter((c) => c.databaseName !== 'raw').map((c) => `r."${c.databaseName}"`), 'r.raw::text AS raw'].join(', ');
      this.selectLists.set(name, cols);
    }
    return cols;
  }

  /** The lines of these agreements (rows of the agreements list), with their connector. */
  linesOf(tenantId: string, agreements: Row[]): Promise<Row[]> {
    return this.ds.query(
      `SELECT l.*, c.connector FROM agreement_lines l JOIN connections c ON c.id = l.connection_id
        WHERE l.tenant_id = $1 AND (l.connection_id, l.agreement_source_id) IN (SELECT * FROM unnest($2::uuid[], $3::text[]))
        ORDER BY l.source_id`,
      [tenantId, agreements.map((r) => r.connection_id), agreements.map((r) => r.source_id)],
    );
  }

  /** The oldest last sync of `resource` on these connections, and how many of them ever synced it. */
  async oldestSync(resource: string, connectionIds: string[]): Promise<{ oldest: Date | null; n: number } | undefined> {
    const [row] = await this.ds.query(
      `SELECT MIN(s.last_synced_at) AS oldest, COUNT(s.last_synced_at)::int AS n
         FROM unnest($1::uuid[]) AS c(id) LEFT JOIN sync_states s ON s.connection_id = c.id AND s.resource = $2`,
      [connectionIds, resource],
    );
    return row;
  }
}
