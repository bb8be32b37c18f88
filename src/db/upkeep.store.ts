/**
 * The store's own upkeep where the database does none (docs/architecture.md, Operations): the tables
 * this service churns (a resource's sync state is rewritten at every check, hundreds of times a second
 * across a fleet) are vacuumed and analyzed by the thresholds PostgreSQL's autovacuum would use.
 *
 * Why: the embedded database (PGlite) has no autovacuum process, and a PostgreSQL may run with it off.
 * Without it, dead row versions pile up, and no table ever gets statistics: the planner then takes a
 * third of any table to match a range (`next_check_at <= now()`), and scans all of sync_states at every
 * claim and every check's write instead of reading the few rows due through their index.
 *
 * A table the database's own autovacuum keeps is left to it. Across processes, one at a time does it
 * (an advisory lock tried, never waited for).
 */
import type { DataSource, QueryRunner } from 'typeorm';
import type { Logger } from 'pino';

/** How often the worker looks. */
export const UPKEEP_MS = 30_000;

/** PostgreSQL's own defaults (autovacuum_vacuum_threshold / _scale_factor, and the analyze pair). */
const VACUUM_BASE = 50;
const VACUUM_SCALE = 0.2;
const ANALYZE_BASE = 50;
const ANALYZE_SCALE = 0.1;

/** The advisory lock key of the upkeep, per schema (two services may share one database in schemas of their own). */
const LOCK_SQL = `SELECT pg_try_advisory_lock(hashtext('store-upkeep:' || current_schema())) AS got`;
const UNLOCK_SQL = `SELECT pg_advisory_unlock(hashtext('store-upkeep:' || current_schema()))`;

export interface UpkeepDone { table: string; action: 'vacuum' | 'analyze' }

interface TableStats { relname: string; live: number; dead: number; changed: number; keptByDatabase: boolean }

export class StoreUpkeep {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<unknown> | null = null;

  /** `embedded`: the database is PGlite, which has no autovacuum whatever its setting says. */
  constructor(private readonly ds: DataSource, private readonly embedded: boolean, private readonly logger: Logger) {}

  /** Looks every UPKEEP_MS (not at once: a start has enough to do). */
  start(everyMs = UPKEEP_MS): void {
    if (this.timer) return;
    this.timer = setInterval(() => {
      if (this.running) return;
      this.running = this.runOnce()
        .catch((err: Error) => this.logger.warn({ err: err.message }, 'store upkeep failed'))
        .finally(() => { this.running = null; });
    }, everyMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running;
  }

  /** What it vacuumed or analyzed this time (nothing of what the database's autovacuum keeps, or while another process is at it). */
  async runOnce(): Promise<UpkeepDone[]> {
    // VACUUM runs outside a transaction, on a session of its own that holds the lock.
    const runner = this.ds.createQueryRunner();
    try {
      const [lock] = await runner.query(LOCK_SQL);
      if (lock?.got !== true) return [];
      // A tenth of the default sample (3,000 rows a table): enough for the planner's row counts and ranges,
      // and an analyze of a 50,000-ticket table then holds the embedded database's one connection briefly.
      await runner.query('SET default_statistics_target = 10');
      try {
        const done: UpkeepDone[] = [];
        for (const t of (await this.tables(runner)).filter((x) => !x.keptByDatabase)) {
          const name = `"${t.relname.replace(/"/g, '""')}"`;
          if (t.dead > VACUUM_BASE + VACUUM_SCALE * t.live) {
            await runner.query(`VACUUM (ANALYZE) ${name}`);
            done.push({ table: t.relname, action: 'vacuum' });
          } else if (t.changed > ANALYZE_BASE + ANALYZE_SCALE * t.live) {
            await runner.query(`ANALYZE ${name}`);
            done.push({ table: t.relname, action: 'analyze' });
          }
        }
        if (done.length) this.logger.debug({ done }, 'store upkeep');
        return done;
      } finally {
        await runner.query('RESET default_statistics_target');
        await runner.query(UNLOCK_SQL);
      }
    } finally {
      await runner.release();
    }
  }

  /**
   * The schema's tables with their row counts as the statistics system last reported them, and whether the
   * database's autovacuum keeps each: it runs (never on the embedded database), and the table does not opt
   * out of it (`autovacuum_enabled = false`).
   */
  private async tables(runner: QueryRunner): Promise<TableStats[]> {
    const rows: Record<string, unknown>[] = await runner.query(
      `SELECT s.relname, s.n_live_tup AS live, s.n_dead_tup AS dead, s.n_mod_since_analyze AS changed,
              (NOT $1::boolean AND current_setting('autovacuum') = 'on'
               AND NOT COALESCE(c.reloptions @> ARRAY['autovacuum_enabled=false'], false)) AS kept
         FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid
        WHERE s.schemaname = current_schema() ORDER BY s.relname`, [this.embedded]);
    return rows.map((r) => ({
      relname: String(r.relname), live: Number(r.live), dead: Number(r.dead), changed: Number(r.changed), keptByDatabase: r.kept === true,
    }));
  }
}
