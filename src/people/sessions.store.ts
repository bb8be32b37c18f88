/**
 * The statements of people's sessions (docs/architecture.md, People): the cookie's token is stored only
 * as its SHA-256; a session ends after an hour without a request, at its absolute end, or when ended.
 */
import type { DataSource } from 'typeorm';
import type { Organisation, OrgKind } from './people.types';

export interface SessionRow {
  id: string;
  personId: string | null;
  organisation: Organisation | null;
  role: string | null;
  csrfToken: string;
  signedInWith: string;
}

interface Raw { id: string; person_id: string | null; org_kind: OrgKind | null; org_id: string | null; role: string | null; csrf_token: string; signed_in_with: string }

const toRow = (r: Raw): SessionRow => ({
  id: r.id, personId: r.person_id, role: r.role, csrfToken: r.csrf_token, signedInWith: r.signed_in_with,
  organisation: r.org_kind && r.org_id ? { kind: r.org_kind, id: r.org_id } : null,
});

export class SessionsStore {
  constructor(private readonly ds: DataSource) {}

  async insertSession(s: { tokenHash: string; csrfToken: string; personId: string | null; organisation: Organisation | null; role: string | null; signedInWith: string; expiresAt: Date }): Promise<string> {
    const rows: { id: string }[] = await this.ds.query(
      `INSERT INTO person_sessions (token_hash, csrf_token, person_id, org_kind, org_id, role, signed_in_with, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id`,
      [s.tokenHash, s.csrfToken, s.personId, s.organisation?.kind ?? null, s.organisation?.id ?? null, s.role, s.signedInWith, s.expiresAt]);
    return rows[0]!.id;
  }

  /** The live session of a token hash, its idle clock restarted; null when unknown, ended, idle or past its end. */
  async touch(tokenHash: string, idleMs: number): Promise<SessionRow | null> {
    const [rows]: [Raw[], number] = await this.ds.query(
      `UPDATE person_sessions SET last_seen_at = now()
        WHERE token_hash = $1 AND ended_at IS NULL AND expires_at > now() AND last_seen_at > now() - ($2 || ' milliseconds')::interval
        RETURNING id, person_id, org_kind, org_id, role, csrf_token, signed_in_with`, [tokenHash, String(idleMs)]);
    return rows[0] ? toRow(rows[0]) : null;
  }

  async end(id: string): Promise<void> {
    await this.ds.query('UPDATE person_sessions SET ended_at = now() WHERE id = $1 AND ended_at IS NULL', [id]);
  }

  /** Ends every live session of a person (sign out everywhere); how many there were. */
  async endAllOf(personId: string): Promise<number> {
    const [, count]: [unknown, number] = await this.ds.query('UPDATE person_sessions SET ended_at = now() WHERE person_id = $1 AND ended_at IS NULL', [personId]);
    return count;
  }

  /** Ends a person's sessions bound to one organisation (they left it or were removed). */
  async endAllIn(personId: string, org: Organisation): Promise<void> {
    await this.ds.query('UPDATE person_sessions SET ended_at = now() WHERE person_id = $1 AND org_kind = $2 AND org_id = $3 AND ended_at IS NULL', [personId, org.kind, org.id]);
  }

  /** A person's new role reaches their live sessions in that organisation at once. */
  async setRoleIn(personId: string, org: Organisation, role: string): Promise<void> {
    await this.ds.query('UPDATE person_sessions SET role = $4 WHERE person_id = $1 AND org_kind = $2 AND org_id = $3 AND ended_at IS NULL', [personId, org.kind, org.id, role]);
  }
}
