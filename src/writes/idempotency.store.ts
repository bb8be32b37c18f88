/**
 * The statements of idempotency records (idempotency.service.ts holds their rules). Each method is one
 * statement, one commit: the unique constraint on (isv, tenant, operation, key) makes a reservation once.
 */
import type { DataSource } from 'typeorm';
import { IdempotencyRecord } from '../../entities';
import { preparedQuery } from '../db/prepared';

/**
 * A row stored in the statement that stores a commit's outcome: its INSERT with parameters numbered
 * from `first` (auditInsert is one).
 */
export type StoredWith = (first: number) => { sql: string; params: unknown[] };

export interface IdempotencyScope {
  isvId: string;
  tenantId: string;
  operation: string;
  key: string;
}

/** A new reservation's row; `leaseToken`: the lease it holds from its INSERT, for `leaseSeconds`, landing in `landInSeconds`. */
export interface NewReservation {
  scope: IdempotencyScope;
  hash: string;
  expiresAt: Date;
  ownerInstance: string | null;
  leaseToken: string | null;
  leaseSeconds: number;
  landInSeconds: number | null;
}

/**
 * SET items that free the lease when its holder is one of the tokens in `param` (a text[] parameter), and
 * set its landing deadline to `land` (seconds from now, a float8 parameter; NULL: every write was answered).
 */
const FREE_LEASES = (param: string, land: string) =>
  `lease_owner = CASE WHEN lease_owner = ANY(${param}::text[]) THEN NULL ELSE lease_owner END,
   lease_until = CASE WHEN lease_owner = ANY(${param}::text[]) THEN NULL ELSE lease_until END,
   land_by = CASE WHEN lease_owner = ANY(${param}::text[])
                  THEN (CASE WHEN ${land}::float8 IS NULL THEN NULL ELSE now() + make_interval(secs => ${land}::float8) END)
                  ELSE land_by END`;

export class IdempotencyStore {
  constructor(private readonly ds: DataSource) {}

  /** Inserts the reservation unless the key has one; its id, or null when it had. */
  async insertReservation(r: NewReservation): Promise<string | null> {
    const inserted = await preparedQuery<{ id: string }>(this.ds,
      `INSERT INTO idempotency_records (isv_id, tenant_id, operation, key, request_hash, state, expires_at, owner_instance,
                                        lease_owner, lease_until, vendor_attempts, land_by)
       VALUES ($1, $2, $3, $4, $5, 'in_progress', $6, $7, $8::text,
               CASE WHEN $8::text IS NULL THEN NULL ELSE now() + make_interval(secs => ${r.leaseSeconds}) END,
               CASE WHEN $8::text IS NULL THEN 0 ELSE 1 END,
               CASE WHEN $8::text IS NULL THEN NULL ELSE now() + make_interval(secs => $9::float8) END)
       ON CONFLICT ON CONSTRAINT uq_idempotency_scope_key DO NOTHING RETURNING id`,
      [r.scope.isvId, r.scope.tenantId, r.scope.operation, r.scope.key, r.hash, r.expiresAt, r.ownerInstance, r.leaseToken, r.landInSeconds],
    );
    return inserted.length ? inserted[0].id : null;
  }

  findRecord(scope: IdempotencyScope): Promise<IdempotencyRecord | null> {
    return this.ds.getRepository(IdempotencyRecord).findOneBy({
      isvId: scope.isvId, tenantId: scope.tenantId, operation: scope.operation, key: scope.key,
    });
  }

  /**
   * Takes the key over in a new generation, only if the record is still as `existing` was read: same
   * state, same update time (the store keeps microseconds, a JS Date milliseconds, hence the truncation).
   * The new generation, or null when another caller won the take-over.
   */
  async takeOver(existing: IdempotencyRecord, hash: string, expiresAt: Date, ownerInstance: string | null): Promise<number | null> {
    // TypeORM answers an UPDATE as [rows, affected count].
    const [taken]: [{ id: string; generation: number }[], number] = await this.ds.query(
      `UPDATE idempotency_records SET state = 'in_progress', request_hash = $2, expires_at = $3, updated_at = now(),
              response_status = NULL, response_body = NULL, generation = generation + 1, owner_instance = $6
        WHERE id = $1 AND state = $4 AND date_trunc('milliseconds', updated_at) = date_trunc('milliseconds', $5::timestamptz) RETURNING id, generation`,
      [existing.id, hash, expiresAt, existing.state, existing.updatedAt, ownerInstance],
    );
    return taken.length ? Number(taken[0].generation) : null;
  }

  /** Whether nothing has touched the record for `seconds`, by the database's clock (updated_at is its now()). */
  async untouchedFor(id: string, seconds: number): Promise<boolean> {
    const rows = await preparedQuery<{ stale: boolean }>(this.ds,
      `SELECT now() - updated_at > make_interval(secs => $2::float8) AS stale FROM idempotency_records WHERE id = $1`,
      [id, seconds]);
    return rows[0]?.stale === true;
  }

  /** Stores the answer of `generation` with the rows `withIt`; frees `leases`, landing in `landInSeconds`. */
  async storeCompleted(id: string, generation: number, answer: { status: number; body: Record<string, unknown> }, withIt: StoredWith[], leases: string[], landInSeconds: number | null): Promise<void> {
    await this.storeOutcome(
      `UPDATE idempotency_records SET state = 'completed', response_status = $1, response_body = $2::jsonb, updated_at = now(), ${FREE_LEASES('$5', '$6')}
        WHERE id = $3 AND generation = $4`,
      [answer.status, JSON.stringify(answer.body), id, generation, leases, landInSeconds], withIt);
  }

  /** Marks `generation`'s commit failed with the rows `withIt`; frees `leases`, landing in `landInSeconds`. */
  async storeFailed(id: string, generation: number, withIt: StoredWith[], leases: string[], landInSeconds: number | null): Promise<void> {
    await this.storeOutcome(
      `UPDATE idempotency_records SET state = 'failed', updated_at = now(), ${FREE_LEASES('$3', '$4')}
        WHERE id = $1 AND generation = $2`,
      [id, generation, leases, landInSeconds], withIt);
  }

  /** Deletes the reservation if `generation` still holds it in progress. */
  async deleteInProgress(id: string, generation: number): Promise<void> {
    await preparedQuery(this.ds, `DELETE FROM idempotency_records WHERE id = $1 AND generation = $2 AND state = 'in_progress'`, [id, generation]);
  }

  async freeLeases(id: string, leases: string[], landInSeconds: number | null): Promise<void> {
    await preparedQuery(this.ds, `UPDATE idempotency_records SET ${FREE_LEASES('$2', '$3')} WHERE id = $1`, [id, leases, landInSeconds]);
  }

  /** One statement, one commit: the outcome's UPDATE with each of `withIt` as a data-modifying WITH. */
  private async storeOutcome(update: string, params: unknown[], withIt: StoredWith[]): Promise<void> {
    const all = [...params];
    const parts = withIt.map((part, i) => {
      const { sql, params: own } = part(all.length + 1);
      all.push(...own);
      return `stored_${i} AS (${sql})`;
    });
    // One text per shape of outcome (which rows go with it): a small fixed set, so a prepared statement.
    await preparedQuery(this.ds, parts.length ? `WITH ${parts.join(', ')} ${update}` : update, all);
  }
}
