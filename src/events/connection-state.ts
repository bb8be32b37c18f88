/**
 * Connection events (docs/architecture.md, Events and webhooks): each connection's
 * health state, kept in `connection_health`, and the events of family `connection` that tell its changes.
 *
 * - State: `ok`, `credentials_failing` (the vendor refused the stored credentials: 401, a refused token
 *   grant, a revoked authorisation), `permission_missing` (403), `sync_failing` (any other failure, once
 *   SYNC_FAILING_AFTER syncs in a row failed: one vendor blip is not a failing connection). A refusal of
 *   the credentials or of a permission counts at once: it does not heal by itself.
 * - An event is written only when the state changes, in the same transaction that changes it, under the
 *   row's lock (SELECT ... FOR UPDATE), with a dedupe key of the change's number: a retried sync, two
 *   syncs of one connection at once, or two workers never write one change twice. Ten failed syncs with
 *   401 are one `connection.credentials_failed`; the first sync after them that leaves no resource failed
 *   is one `connection.restored`.
 * - `connection.added` / `connection.removed` when a connection is created / removed (the sandbox's own
 *   seeded connections are not "added"); `connect_session.completed` / `connect_session.expired` for an
 *   ISV's connect sessions (the MSP console's own repair sessions write none). An expired session of a new
 *   MSP has no tenant: its event is the ISV's own (`tenant_id` null), listed only by `GET /events`.
 * - Every ISV that sees the tenant gets these with no grant (src/access/event-visibility.ts).
 *
 * `connectionHealth` is the one classification a page shows (ok, lagging, credentials_failing,
 * permission_missing, sync_failing): the stored state first, then lag. The states are kept, and the events
 * written, by ConnectionStates (connection-states.store.ts).
 */
import { VendorHttpError } from '../connectors/vendor-http';
import type { ConnectionEventKind } from '../access/event-kinds';

/** The state a connection's events tell. */
export type ConnectionHealthState = 'ok' | 'credentials_failing' | 'permission_missing' | 'sync_failing';
/** What a page shows: the state, or `lagging` when it is ok but its stored copy is behind. */
export type ConnectionHealth = ConnectionHealthState | 'lagging';
export type FailingState = Exclude<ConnectionHealthState, 'ok'>;

/** Failed syncs in a row (neither a credential nor a permission refusal) before a connection is `sync_failing`. */
export const SYNC_FAILING_AFTER = 3;

/** Behind by more than this (and more than twice its interval) is lagging. */
const LAG_FLOOR_SECONDS = 30 * 60;

export const KIND_OF_STATE: Record<ConnectionHealthState, ConnectionEventKind> = {
  ok: 'connection.restored',
  credentials_failing: 'connection.credentials_failed',
  permission_missing: 'connection.permission_missing',
  sync_failing: 'connection.sync_failing',
};

/** OAuth token-endpoint errors that say the client's credentials or grant are refused (RFC 6749, 5.2). */
const REFUSED_GRANT = /^(invalid_client|invalid_grant|unauthorized_client)$/;

/** What a sync's failure says of the connection, from the vendor's answer as the sync met it. */
export function classifySyncFailure(err: unknown): FailingState {
  if (err instanceof VendorHttpError && !err.network && !err.notSent) {
    if (typeof (err as { explanation?: unknown }).explanation === 'string') return 'credentials_failing'; // a revoked authorisation
    if (err.status === 401) return 'credentials_failing';
    if (err.status === 403) return 'permission_missing';
    const code = err.body && typeof err.body === 'object' ? (err.body as { error?: unknown }).error : undefined;
    if (err.status === 400 && typeof code === 'string' && REFUSED_GRANT.test(code)) return 'credentials_failing';
  }
  return 'sync_failing';
}

/** The same classification from a sync's recorded error (sync_states.last_error, the `sync.failed` audit entry). */
export function classifyRecordedError(message: string): FailingState {
  if (/\bHTTP 401\b|invalid_client|invalid_grant|unauthori[sz]ed|refused the stored authorisation/i.test(message)) return 'credentials_failing';
  if (/\bHTTP 403\b|forbidden/i.test(message)) return 'permission_missing';
  return 'sync_failing';
}

/** A connection as `tenant_status` answers it (the fields the classification reads). */
export interface HealthInput {
  sync_status: string;
  resources: { last_status: string; last_error: string | null; lag_seconds: number | null; interval_seconds: number | null }[];
}

/** A connection's stored state (ConnectionStates.stored). */
export interface StoredHealth { state: ConnectionHealthState; since: Date | null; reason: string | null }

/**
 * The one classification of a connection's health that pages show (the ISV console's MSPs page): the
 * stored state the connection events told, when it is failing; a connection with no stored state yet
 * (never synced since connection events exist) whose last run failed, by its recorded error; otherwise
 * `lagging` when it has not synced yet or a resource is behind by more than twice its interval (at least
 * half an hour), else `ok`. `stored`: ConnectionStates.stored's row for it (undefined: none).
 */
export function connectionHealth(c: HealthInput, stored?: StoredHealth | null): ConnectionHealth {
  if (stored && stored.state !== 'ok') return stored.state;
  if (!stored) {
    const errors = c.resources.filter((r) => r.last_status === 'failed').map((r) => r.last_error ?? '');
    if (errors.length > 0) {
      const classes = errors.map(classifyRecordedError);
      return classes.find((k) => k === 'credentials_failing') ?? classes.find((k) => k === 'permission_missing') ?? 'sync_failing';
    }
  }
  if (c.sync_status === 'never' || c.resources.some((r) => r.lag_seconds == null && r.last_status !== 'running')) return 'lagging';
  if (c.resources.some((r) => r.lag_seconds != null && r.lag_seconds > Math.max(LAG_FLOOR_SECONDS, 2 * (r.interval_seconds ?? 0)))) return 'lagging';
  return 'ok';
}
