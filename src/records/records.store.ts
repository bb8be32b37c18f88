/**
 * The record lists' store (docs/architecture.md, Reads): one page of a list's records (or the record a
 * path names), the lines of agreements and the oldest sync of the connections feeding a list. Which
 * connections feed a list, the paging and the answer around the records stay in records.service.ts.
 *
 * A page is one prepared statement that selects the values of the record's declared fields
 * (record-lists.ts) and the vendor payload as its JSON text, nothing else.
 */
import type { DataSource } from 'typeorm';
import { preparedQuery } from '../db/prepared';
import { isUuid } from '../shared/request';
import { rowsToFetch } from '../shared/paging';
import { escapeStoredText } from '../sync/stored-text';
import { RECORD_LISTS, selectedFields, type RecordListDef, type RecordListName, type RecordRow, type Row } from './record-lists';

export interface RowsQuery {
  limit: number;
  /** A single-record read: our id (a uuid) or the vendor's source_id. */
  recordId?: string;
  /** Only these records (our ids). */
  ids?: string[];
  /** Id of the last record of the previous page (decoded cursor). */
  after?: string | null;
  updatedSince?: Date | null;
}

export class RecordsStore {
  constructor(private readonly ds: DataSource) {}

  /** Statement texts by list and the parts of the query they have; a handful per list. */
  private readonly statements = new Map<string, string>();

  /**
   * One page of the list's records (one more than the limit), or the record `recordId` names;
   * `ofKind`: the tenant's connections of the list's kind (a list that keeps to them).
   */
  rows(name: RecordListName, tenantId: string, q: RowsQuery, ofKind: string[]): Promise<RecordRow[]> {
    const def: RecordListDef = RECORD_LISTS[name];
    const values: unknown[] = [tenantId];
    const bind = (v: unknown) => { values.push(v); return `$${values.length}`; };
    // Each optional condition is in the text only when it applies: a prepared statement's generic plan
    // would otherwise keep `$n IS NULL OR ...` and could not use the (tenant_id, id) index for the keyset.
    const where: string[] = [];
    if (q.after) where.push(`r.id > ${bind(q.after)}::uuid`);
    if (q.updatedSince) where.push(`COALESCE(r.vendor_updated_at, r.synced_at) >= ${bind(q.updatedSince)}::timestamptz`);
    if (q.recordId != null) {
      const ref = bind(escapeStoredText(q.recordId));
      const named = [`r.source_id = ${ref}`];
      if (isUuid(q.recordId)) named.push(`r.id = ${bind(q.recordId)}::uuid`);
      if (def.shownIdColumn) named.push(`r.${def.shownIdColumn} = ${ref}`);
      where.push(`(${named.join(' OR ')})`);
    }
    if (q.ids) where.push(`r.id = ANY(${bind(q.ids)}::uuid[])`);
    if (def.onlyKind) where.push(`r.connection_id = ANY(${bind(ofKind)}::uuid[])`);
    const limit = bind(rowsToFetch(q.limit));
    const key = `${name}|${where.join('|')}`;
    let text = this.statements.get(key);
    if (!text) {
      const fields = selectedFields(def).map((f) => `, ${f.sql} AS ${f.column}`).join('');
      text = `SELECT r.id, r.connection_id, r.source_id${fields}, r.raw::text AS raw, (r.synced_at AT TIME ZONE 'UTC')::text AS synced_at
          FROM ${def.table} r
         WHERE r.tenant_id = $1${where.map((w) => ` AND ${w}`).join('')}
         ORDER BY r.id
         LIMIT ${limit}`;
      this.statements.set(key, text);
    }
    return preparedQuery<RecordRow>(this.ds, text, values);
  }

  /** The lines of these agreements (rows of the agreements list), with their connector. */
  linesOf(tenantId: string, agreements: { connection_id: string; source_id: string }[]): Promise<Row[]> {
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
