/**
 * The statements of an ISV's keys page (docs/architecture.md, People; design: the ISV's console, Keys): its
 * keys (never the key itself: prefix, name, who minted it, when, last use, end), the end of a key (now, or
 * the end of a rotation's overlap) and the ISV's own audit entries about its keys. Minting is
 * AdminService.issueApiKey's, the one way a key is made.
 */
import type { DataSource } from 'typeorm';
import type { KeyCreator } from '../../entities';

export interface IsvKeyRow {
  id: string;
  prefix: string;
  name: string;
  createdAt: Date;
  createdBy: KeyCreator | null;
  lastUsedAt: Date | null;
  /** When it stopped (or, after a rotation with overlap, stops) working; null while it has no end. */
  revokedAt: Date | null;
}

export interface IsvKeyHistoryRow {
  at: Date;
  action: string;
  subject: string | null;
  detail: Record<string, unknown>;
}

/** Keys an ISV's page lists at most, newest first (an ISV with more revokes the old ones; they stay below). */
const LISTED = 200;

interface Row { id: string; prefix: string; label: string; created_at: Date; created_by: KeyCreator | null; last_used_at: Date | null; revoked_at: Date | null }

const COLUMNS = 'id, prefix, label, created_at, created_by, last_used_at, revoked_at';
const toRow = (r: Row): IsvKeyRow => ({
  id: r.id, prefix: r.prefix, name: r.label, createdAt: new Date(r.created_at), createdBy: r.created_by,
  lastUsedAt: r.last_used_at ? new Date(r.last_used_at) : null, revokedAt: r.revoked_at ? new Date(r.revoked_at) : null,
});

export class IsvKeysStore {
  constructor(private readonly ds: DataSource) {}

  async list(isvId: string): Promise<IsvKeyRow[]> {
    const rows: Row[] = await this.ds.query(
      `SELECT ${COLUMNS} FROM api_keys WHERE kind = 'isv' AND isv_id = $1 ORDER BY created_at DESC, id LIMIT ${LISTED}`, [isvId]);
    return rows.map(toRow);
  }

  async one(isvId: string, keyId: string): Promise<IsvKeyRow | null> {
    const rows: Row[] = await this.ds.query(`SELECT ${COLUMNS} FROM api_keys WHERE kind = 'isv' AND isv_id = $1 AND id = $2`, [isvId, keyId]);
    return rows[0] ? toRow(rows[0]) : null;
  }

  /**
   * Ends a key of the ISV at `at`. `onlyActive`: only a key with no end yet (a rotation: one rotation of a
   * key wins); otherwise also a key whose end lies after `at` (revoke now cuts an overlap short). Whether
   * the key changed.
   */
  async endAt(isvId: string, keyId: string, at: Date, onlyActive: boolean): Promise<boolean> {
    const [rows]: [{ id: string }[], number] = await this.ds.query(
      `UPDATE api_keys SET revoked_at = $3, updated_at = now()
        WHERE kind = 'isv' AND isv_id = $1 AND id = $2 AND (revoked_at IS NULL${onlyActive ? '' : ' OR revoked_at > $3'})
        RETURNING id`,
      [isvId, keyId, at],
    );
    return rows.length > 0;
  }

  /** The ISV's own audit entries about its keys (no tenant), newest first. */
  async history(isvId: string, limit: number): Promise<IsvKeyHistoryRow[]> {
    const rows: { created_at: Date; action: string; subject_ref: string | null; detail: Record<string, unknown> }[] = await this.ds.query(
      `SELECT created_at, action, subject_ref, detail FROM audit_entries
        WHERE tenant_id IS NULL AND isv_id = $1 AND starts_with(action, 'api_key.')
        ORDER BY seq DESC LIMIT $2`,
      [isvId, limit],
    );
    return rows.map((r) => ({ at: new Date(r.created_at), action: r.action, subject: r.subject_ref, detail: r.detail }));
  }
}
