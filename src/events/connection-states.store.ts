/**
 * The store of connection health (docs/architecture.md, Events and webhooks): each connection's state in
 * `connection_health`, changed under the row's lock, with the `connection` family's event written in the
 * same transaction (classification: connection-state.ts).
 */
import type { DataSource, EntityManager } from 'typeorm';
import type { Logger } from 'pino';
import type { Connection } from '../../entities';
import { connectorTitle } from '../connectors/registry';
import { eventDraft, type EventDraft } from './change-detector';
import type { EventsService } from './events.service';
import type { SyncOutcome } from '../sync/sync.service';
import { classifySyncFailure, KIND_OF_STATE, SYNC_FAILING_AFTER, type ConnectionHealthState, type StoredHealth } from './connection-state';

/**
 * A healthy state this process saw is trusted this long before a successful check reads it again: another
 * process may have recorded a failure meanwhile, whose `connection.restored` then comes at most this late.
 */
const KNOWN_MS = 60_000;

type ConnectionFacts = Pick<Connection, 'id' | 'tenantId' | 'connector' | 'kind'>;

export class ConnectionStates {
  /** The state this process last saw per connection: a successful check of an ok connection writes nothing. */
  private readonly known = new Map<string, { state: ConnectionHealthState; failures: number; at: number }>();
  private logger: Logger | null = null;

  constructor(private readonly ds: DataSource, private readonly events: EventsService) {}

  useLogger(logger: Logger): void {
    this.logger = logger;
  }

  /** The stored states of these connections (absent: never recorded, which is ok). */
  async stored(connectionIds: readonly string[]): Promise<Map<string, StoredHealth>> {
    if (connectionIds.length === 0) return new Map();
    const rows: { connection_id: string; state: ConnectionHealthState; changed_at: Date | null; reason: string | null }[] = await this.ds.query(
      'SELECT connection_id, state, changed_at, reason FROM connection_health WHERE connection_id = ANY($1::uuid[])', [connectionIds]);
    return new Map(rows.map((r) => [r.connection_id, { state: r.state, since: r.changed_at ? new Date(r.changed_at) : null, reason: r.reason }]));
  }

  /**
   * Records how a sync of the connection ended; writes the state and its event when the state changes
   * (see the header). A successful sync restores only when no resource of the connection is left failed.
   */
  async recordSync(connection: ConnectionFacts, outcome: SyncOutcome): Promise<void> {
    if (outcome.ok) {
      // The usual case, a healthy connection checked again: nothing to write, and at most one read a minute.
      const seen = this.known.get(connection.id);
      if (seen && seen.state === 'ok' && seen.failures === 0 && Date.now() - seen.at < KNOWN_MS) return;
      const [row]: { state: ConnectionHealthState; failures: number }[] = await this.ds.query(
        'SELECT state, failures FROM connection_health WHERE connection_id = $1', [connection.id]);
      if (!row || (row.state === 'ok' && row.failures === 0)) {
        this.known.set(connection.id, { state: 'ok', failures: 0, at: Date.now() });
        return;
      }
    }
    const failing = outcome.ok ? null : classifySyncFailure(outcome.error);
    const written = await this.ds.transaction(async (m) => {
      await m.query('INSERT INTO connection_health (connection_id, tenant_id) VALUES ($1, $2) ON CONFLICT (connection_id) DO NOTHING', [connection.id, connection.tenantId]);
      const [row]: { state: ConnectionHealthState; failures: number; version: number }[] = await m.query(
        'SELECT state, failures, version FROM connection_health WHERE connection_id = $1 FOR UPDATE', [connection.id]);
      let next = row.state;
      let failures = row.failures;
      let reason: string | null = null;
      if (outcome.ok) {
        failures = 0;
        if (row.state !== 'ok') {
          const [stillFailed] = await m.query(`SELECT 1 FROM sync_states WHERE connection_id = $1 AND last_status = 'failed' LIMIT 1`, [connection.id]);
          if (!stillFailed) next = 'ok';
        }
      } else {
        failures = row.failures + 1;
        reason = outcome.message ? `${outcome.resource}: ${outcome.message}`.slice(0, 300) : null;
        next = failing === 'sync_failing' ? (failures >= SYNC_FAILING_AFTER ? 'sync_failing' : row.state) : failing!;
      }
      this.known.set(connection.id, { state: next, failures, at: Date.now() });
      if (next === row.state) {
        if (failures !== row.failures) await m.query('UPDATE connection_health SET failures = $2, updated_at = now() WHERE connection_id = $1', [connection.id, failures]);
        return [];
      }
      const version = row.version + 1;
      await m.query(
        `UPDATE connection_health SET state = $2, previous_state = state, failures = $3, reason = $4, changed_at = now(), version = $5, updated_at = now()
         WHERE connection_id = $1`, [connection.id, next, failures, next === 'ok' ? null : reason, version]);
      return this.events.insert(m, connection.tenantId, [this.stateDraft(connection, row.state, next, reason, version)]);
    });
    await this.events.emitCommitted(connection.tenantId, written);
  }

  private stateDraft(c: ConnectionFacts, previous: ConnectionHealthState, next: ConnectionHealthState, reason: string | null, version: number): EventDraft {
    const title = connectorTitle(c.connector);
    const summary = {
      ok: `${title} syncs again`,
      credentials_failing: `${title} refuses the stored credentials: the MSP has to connect it again`,
      permission_missing: `${title} refused a read for lack of a permission: the MSP has to grant it at the vendor`,
      sync_failing: `${title} has failed ${SYNC_FAILING_AFTER} syncs in a row`,
    }[next];
    return eventDraft({
      kind: KIND_OF_STATE[next], connectionId: c.id, dedupeKey: `connection.state:${c.id}:${version}`, summary,
      vendor: c.connector, previousStatus: previous, newStatus: next,
      detail: { state: next, previous_state: previous, kind: c.kind, connector: c.connector, ...(reason ? { reason } : {}) },
    });
  }

  /** `connection.added`, written once the connection exists (its own transaction). */
  async added(c: ConnectionFacts): Promise<void> {
    const ids = await this.ds.transaction((m) => this.events.insert(m, c.tenantId, [eventDraft({
      kind: 'connection.added', connectionId: c.id, dedupeKey: `connection.added:${c.id}`, vendor: c.connector,
      summary: `${connectorTitle(c.connector)} connected`, detail: { kind: c.kind, connector: c.connector },
    })]));
    await this.events.emitCommitted(c.tenantId, ids);
  }

  /**
   * `connection.removed`, in the transaction that removes the connection (after its rows went: the event
   * outlives them). Call the answer once that transaction has committed.
   */
  async removedIn(m: EntityManager, c: ConnectionFacts): Promise<() => Promise<void>> {
    this.known.delete(c.id);
    const ids = await this.events.insert(m, c.tenantId, [eventDraft({
      kind: 'connection.removed', connectionId: c.id, dedupeKey: `connection.removed:${c.id}`, vendor: c.connector,
      summary: `${connectorTitle(c.connector)} disconnected`, detail: { kind: c.kind, connector: c.connector },
    })]);
    return () => this.events.emitCommitted(c.tenantId, ids);
  }

  /** `connect_session.completed` of an ISV's session (a repair session, with no ISV, writes none). */
  async sessionCompleted(s: { id: string; isvId: string | null; tenantId: string; connectionIds: string[] }, tenantCreated: boolean): Promise<void> {
    if (!s.isvId) return;
    const ids = await this.ds.transaction((m) => this.events.insert(m, s.tenantId, [eventDraft({
      kind: 'connect_session.completed', dedupeKey: `connect_session.completed:${s.id}`, subjectRef: s.id,
      summary: tenantCreated ? 'A new MSP completed a connect link' : 'The MSP completed a connect link',
      detail: { connect_session_id: s.id, isv_id: s.isvId, connections: s.connectionIds, tenant_created: tenantCreated },
    })]));
    await this.events.emitCommitted(s.tenantId, ids);
  }

  /**
   * Notices expired connect sessions and writes each one's `connect_session.expired` once: the session is
   * marked (expiry_noticed_at) in the same transaction, and a session another process marked first is
   * skipped. `ids`: only these (a read that found one expired); absent: any, a batch at a time (the sweep).
   * Answers how many it noticed.
   */
  async noticeExpiredSessions(ids?: readonly string[]): Promise<number> {
    if (ids && ids.length === 0) return 0;
    const owed: (() => Promise<void>)[] = [];
    const noticed = await this.ds.transaction(async (m) => {
      const rows: { id: string; isv_id: string | null; tenant_id: string | null; msp_name: string | null; expires_at: Date }[] = await m.query(
        // Through a CTE: the driver answers a bare UPDATE ... RETURNING with its count.
        `WITH noticed AS (UPDATE connect_sessions SET expiry_noticed_at = now() WHERE id IN (
           SELECT id FROM connect_sessions WHERE expiry_noticed_at IS NULL AND state = 'pending' AND expires_at <= now()
             ${ids ? 'AND id = ANY($1::uuid[])' : ''} ORDER BY expires_at LIMIT 500 FOR UPDATE SKIP LOCKED)
         RETURNING id, isv_id, tenant_id, msp_name, expires_at)
         SELECT * FROM noticed`, ids ? [ids] : []);
      for (const r of rows) {
        if (!r.isv_id) continue; // the MSP console's own repair session
        const draft = eventDraft({
          kind: 'connect_session.expired', dedupeKey: `connect_session.expired:${r.id}`, subjectRef: r.id, occurredAt: new Date(r.expires_at),
          summary: r.msp_name ? `The connect link for ${r.msp_name} expired unused` : 'A connect link expired unused',
          detail: { connect_session_id: r.id, isv_id: r.isv_id, ...(r.msp_name ? { msp_name: r.msp_name } : {}) },
        });
        if (r.tenant_id) {
          const written = await this.events.insert(m, r.tenant_id, [draft]);
          owed.push(() => this.events.emitCommitted(r.tenant_id!, written));
        } else {
          const written = await this.events.insertForIsv(m, r.isv_id, [draft]);
          owed.push(() => this.events.emitCommittedForIsv(r.isv_id!, written));
        }
      }
      return rows.length;
    });
    for (const after of owed) await after();
    return noticed;
  }

  private timer: NodeJS.Timeout | null = null;
  private sweeping: Promise<unknown> | null = null;

  /** Where jobs run: notices expired connect sessions every `everyMs`. */
  startExpirySweep(everyMs = 30_000): void {
    if (this.timer) return;
    this.timer = setInterval(() => {
      if (this.sweeping) return;
      this.sweeping = this.noticeExpiredSessions()
        .catch((err: Error) => this.logger?.warn({ err: err.message }, 'noticing expired connect sessions failed'))
        .finally(() => { this.sweeping = null; });
    }, everyMs);
    this.timer.unref();
  }

  async stopExpirySweep(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.sweeping;
  }
}
