/**
 * Ordered webhook delivery (docs/architecture.md, Events and webhooks): one lane per webhook sends its
 * pending deliveries in feed order (`position`, the event's seq), up to `window` at a time over
 * keep-alive connections, and a `webhook.deliver` job only wakes a lane up. A lane is woken as soon as
 * deliveries are committed (the fan-out after an event commit queues the job at once; nothing polls),
 * and again when a retry is due.
 *
 * What a receiver can rely on, per webhook:
 * - Tries are sent in feed order: the try of position n is sent only after the request of every earlier
 *   pending position was written in full to its connection.
 * - At most `window` tries are unanswered at any time: when position n is sent, at most `window` - 1
 *   earlier positions are still waiting for the receiver's answer. Requests on different connections
 *   may be read by the receiver in another order, so a position can arrive before at most `window` - 1
 *   earlier ones, never before any other.
 * - A failed try holds the lane: from the moment the lane reads the failed answer (or its timeout),
 *   nothing that has not been sent yet is sent until the failed one was tried again and delivered (or
 *   gave up, or the webhook was disabled). Tries already on their way, and those sent while the failed
 *   answer was on its way back, still arrive: at most 2 x (`window` - 1) later positions in all.
 * - With a window of 1 the receiver sees exactly the feed order. Every body carries its `position`, for
 *   a receiver that must apply events strictly in order with a larger window.
 * One lane runs per webhook at a time: within a process by a map of running lanes, across worker
 * processes on PostgreSQL by a session advisory lock on a connection of its own while it runs. A wake-up
 * that finds the lane taken leaves it to the holder, which looks again for due work after it lets go.
 *
 * How a lane keeps up with a burst: it reads its pending deliveries `LANE_BATCH` at a time from one index
 * range (webhook, position), reading the next batch after the last position read while the current one
 * is being sent, so the window never drains between batches. The address guard and the signing key are
 * prepared once per batch, not per try. Delivered tries are recorded together (DeliveredRecorder), a
 * statement per hundreds of them in a burst; a failed try is recorded at once (it holds the lane).
 */
import type { DataSource } from 'typeorm';
import { DeliveryLanesStore, type DeliveredTry, type PendingRow } from './delivery-lanes.store';
import { toEvent } from '../events/event-view';
import { DELIVERY_ATTEMPTS, nextDelayMs } from './retry-schedule';
import { BLOCKED_PRIVATE, checkReceiverUrl, ReceiverUrlRefused, type CheckedReceiver } from './ssrf-guard';
import { postToPool, ReceiverPools, type SendResult } from './webhook-sender';
import { signersOf, type WebhookSigners } from './signing';
import type { AppConfig } from '../config/config';
import type { SecretBox } from '../security/secret-box';
import type { HostResolver } from './ssrf-guard';
import type { DeliveryOutcome, WebhookDeliverJob } from './delivery-job';
import { inWebhookTrySpan } from '../telemetry/webhook-spans';

/**
 * Tries in flight per webhook unless WebhooksService.lanes.window says otherwise: a receiver 100 ms away
 * gets about 300 tries a second, a burst of thousands in seconds.
 */
export const DEFAULT_DELIVERY_WINDOW = 32;
/** Pending deliveries a lane reads at once. */
export const LANE_BATCH = 256;
/** Delivered tries recorded in one statement at most, and how long the first of them waits for others. */
const RECORD_BATCH = 500;
const RECORD_DELAY_MS = 50;
export const USER_AGENT = 'msp-integration-service-webhooks/1';
/** The kind of the test event `POST .../test` sends (not an event of any feed). */
export const TEST_EVENT_KIND = 'webhook.test';
export const GONE_REASON = 'receiver answered 410';

/** Told about every try a lane makes (metrics and the failure log, jobs/processors/webhook-deliver.processor.ts). */
export type TryObserver = (job: WebhookDeliverJob & { deliveryId: string; eventId: string }, outcome: DeliveryOutcome, startedAt: number) => void;

/** What the lanes need of the webhooks service that owns them (webhooks.service.ts). */
export interface LaneOwner {
  readonly box: Pick<SecretBox, 'open'>;
  readonly config: Pick<AppConfig, 'webhookAllowLoopback'>;
  resolve: HostResolver;
  timeoutMs: number;
  retryScale: number;
  wake(tenantId: string, webhookIds: string[], delayMs?: number): Promise<void>;
  /** A webhook was disabled: the fan-out stops adding its deliveries. */
  hooksChanged(): Promise<void>;
}

/** The webhook a lane sends for, as its head read found it. */
interface LaneHook {
  id: string;
  /** The webhook's tenant; for an ISV-wide one, the tenant of the lane's head delivery (where wake-ups are filed). */
  tenantId: string;
  url: string;
  secretEncrypted: string;
  previousSecretEncrypted: string | null;
  previousSecretExpiresAt: Date | null;
  enabled: boolean;
  disabledReason: string | null;
}

/** Where a batch's tries go: the address the guard checked for it, or why the guard refused. */
type BatchTarget = CheckedReceiver | ReceiverUrlRefused;

/** How a pass over the lane ended: drained, held by a try to be retried later, or the webhook disabled. */
type PassEnd = 'drained' | 'held' | 'disabled';

export class DeliveryLanes {
  /** Tries in flight per webhook. */
  window = DEFAULT_DELIVERY_WINDOW;
  /** PostgreSQL: several worker processes may wake the same lane; an advisory lock keeps it single. */
  crossProcess = false;
  private pools = new ReceiverPools(() => this.window);
  private readonly running = new Map<string, { again: boolean }>();

  private readonly store: DeliveryLanesStore;

  constructor(ds: DataSource, private readonly webhooks: LaneOwner) {
    this.store = new DeliveryLanesStore(ds);
  }

  /** Runs the webhook's lane until nothing is due; a no-op when it already runs (it will look again). */
  async run(job: WebhookDeliverJob, observe: TryObserver = () => undefined): Promise<{ tries: number }> {
    const here = this.running.get(job.webhookId);
    if (here) {
      here.again = true;
      return { tries: 0 };
    }
    const state = { again: false };
    this.running.set(job.webhookId, state);
    let tries = 0;
    try {
      do {
        state.again = false;
        const lock = await this.lock(job.webhookId);
        if (!lock) return { tries };
        try {
          tries += await this.drain(job, observe);
        } finally {
          await lock.release();
        }
        // A wake-up that came while the lane ran here left its work to us (its deliveries may sit before
        // the last position read); one in another process found the lock taken and left it to us too.
      } while (state.again || (this.crossProcess && await this.headDue(job.webhookId)));
      return { tries };
    } finally {
      this.running.delete(job.webhookId);
    }
  }

  close(): void {
    this.pools.close();
  }

  private async lock(webhookId: string): Promise<{ release(): Promise<void> } | null> {
    if (!this.crossProcess) return { release: async () => undefined };
    return this.store.laneLock(webhookId);
  }

  /** Whether the lane's first pending delivery (in feed order) may be tried now. */
  private async headDue(webhookId: string): Promise<boolean> {
    const head = await this.store.head(webhookId);
    return head !== undefined && (head.next_attempt_at === null || new Date(head.next_attempt_at).getTime() <= Date.now());
  }

  /** Pending deliveries in feed order: from the head, or after the position `after`. */
  private pending(webhookId: string, after: string | null): Promise<PendingRow[]> {
    return this.store.pending(webhookId, after, LANE_BATCH);
  }

  /** Sends what is due, in order, until the lane is empty or held by a failed try. Returns the tries made. */
  private async drain(job: WebhookDeliverJob, observe: TryObserver): Promise<number> {
    let tries = 0;
    for (;;) {
      // No pending delivery: nothing to do (a webhook removed has none left).
      const head = await this.pending(job.webhookId, null);
      if (head.length === 0) return tries;
      const first = head[0];
      const hook: LaneHook = {
        id: job.webhookId, tenantId: first.hook_tenant_id ?? first.tenant_id ?? '', url: first.hook_url, secretEncrypted: first.hook_secret,
        previousSecretEncrypted: first.hook_previous_secret, previousSecretExpiresAt: first.hook_previous_until,
        enabled: first.hook_enabled, disabledReason: first.hook_disabled_reason,
      };
      if (!hook.enabled) {
        const lastError = `webhook disabled (${hook.disabledReason ?? 'no reason'})`;
        await this.store.failPending(hook.id, lastError);
        return tries;
      }
      const due = first.next_attempt_at;
      if (due !== null && new Date(due).getTime() > Date.now()) {
        await this.webhooks.wake(hook.tenantId, [hook.id], new Date(due).getTime() - Date.now());
        return tries;
      }
      const pass = await this.sendPass(hook, head, job, observe);
      tries += pass.tries;
      // Disabled on the way (a 410): once more round, which fails what is left.
      if (pass.end !== 'disabled') return tries;
    }
  }

  /**
   * One pass over the lane from its head, in order, `window` at a time, batch after batch (each read
   * after the last position of the one before, while that one is sent), until nothing more is pending
   * or a try ends in a way that holds the lane (a retry due later) or disables the webhook; the tries
   * in flight then finish and every try is on record when this returns.
   */
  private async sendPass(hook: LaneHook, head: PendingRow[], job: WebhookDeliverJob, observe: TryObserver): Promise<{ tries: number; end: PassEnd }> {
    // Both secrets during a rotation's overlap (each signature checks the time it signs at).
    const signer = signersOf(this.webhooks.box, hook);
    const recorder = new DeliveredRecorder(this.store);
    const inFlight = new Set<Promise<void>>();
    let slotFreed: (() => void) | null = null;
    let end: PassEnd = 'drained';
    let retryAt: number | null = null;
    let tries = 0;
    let failure: unknown = null;
    const stopped = () => end !== 'drained' || failure !== null;
    const hold = () => { if (end === 'drained') end = 'held'; };

    let batch = head;
    try {
      while (batch.length > 0 && !stopped()) {
        // The guard runs again for every batch: the name may resolve elsewhere now, or the flag may be off.
        const target = await this.guard(hook);
        // The next batch is read while this one is sent: after its last position, so nothing is read twice.
        const next = this.pending(hook.id, batch[batch.length - 1].delivery_seq);
        next.catch(() => undefined);
        for (const row of batch) {
          while (inFlight.size >= this.window && !stopped()) await new Promise<void>((resolve) => { slotFreed = resolve; });
          if (stopped()) break;
          const startedAt = performance.now();
          let written!: () => void;
          const onWire = new Promise<void>((resolve) => { written = resolve; });
          tries++;
          const span = { webhookId: hook.id, deliveryId: row.delivery_id, eventId: row.id, eventKind: row.kind, attempt: Number(row.delivery_attempts) + 1, receiver: hook.url };
          const done = inWebhookTrySpan(span, () => this.tryOne(hook, target, signer, row, written, (t) => recorder.add(t), hold)).then((outcome) => {
            if (outcome.kind === 'retry') {
              hold();
              const at = Date.now() + outcome.delayMs;
              retryAt = retryAt === null ? at : Math.min(retryAt, at);
            } else if (outcome.kind === 'disabled') {
              end = 'disabled';
            }
            observe({ ...job, tenantId: hook.tenantId, webhookId: hook.id, deliveryId: row.delivery_id, eventId: row.id }, outcome, startedAt);
          }).catch((err: unknown) => { failure ??= err; })
            .finally(() => {
              written();
              inFlight.delete(done);
              const wake = slotFreed;
              slotFreed = null;
              wake?.();
            });
          inFlight.add(done);
          // The next position starts only once this one is on the wire (or already ended).
          await onWire;
        }
        if (stopped()) break;
        batch = await next;
      }
    } catch (err) {
      // Reading the next batch or checking the address failed (the store, a bug): what is on its way finishes first.
      failure ??= err;
    }
    await Promise.all(inFlight);
    await recorder.flush();
    // Not the receiver (the store, a bug): the job fails and the queue tries the lane again.
    if (failure !== null) throw failure;
    if (retryAt !== null) await this.webhooks.wake(hook.tenantId, [hook.id], Math.max(0, retryAt - Date.now()));
    return { tries, end };
  }

  /** The address this batch's tries connect to, checked now; or why the guard refuses the URL. */
  private async guard(hook: LaneHook): Promise<BatchTarget> {
    try {
      return await checkReceiverUrl(hook.url, { allowLoopback: this.webhooks.config.webhookAllowLoopback, resolve: this.webhooks.resolve });
    } catch (err) {
      if (err instanceof ReceiverUrlRefused) return err;
      throw err;
    }
  }

  /**
   * One try of one delivery. A failure is on record in the delivery log when this returns; a success is
   * handed to `onDelivered`, which records it with others (all on record before the pass ends).
   */
  private async tryOne(
    hook: LaneHook, target: BatchTarget, signer: WebhookSigners, row: PendingRow, written: () => void,
    onDelivered: (t: DeliveredTry) => void, hold: () => void,
  ): Promise<DeliveryOutcome> {
    const attemptsMade = Number(row.delivery_attempts) + 1;
    const lastTry = attemptsMade >= DELIVERY_ATTEMPTS;
    if (target instanceof ReceiverUrlRefused) {
      if (target.reason === 'unresolvable') {
        if (!lastTry) hold();
        return this.failedTry(row.delivery_id, attemptsMade, lastTry, null, target.message, null);
      }
      const lastError = target.reason === 'private' ? BLOCKED_PRIVATE : `blocked: ${target.message}`;
      await this.record(row.delivery_id, { status: 'failed', attempts: attemptsMade, last_status_code: null, last_error: lastError });
      return { kind: 'blocked' };
    }
    // Exactly the Event the feed shows for this row.
    const body = JSON.stringify(toEvent(row));
    const now = new Date();
    const signature = signer.sign(row.id, now, body);
    const started = performance.now();
    const result: SendResult = await postToPool(this.pools.for(target), target, body, {
      'content-type': 'application/json',
      'user-agent': USER_AGENT,
      'webhook-id': row.id,
      'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
      'webhook-signature': signature,
      'Service-Signature': signature,
    }, this.webhooks.timeoutMs, written);

    const code = result.statusCode;
    const latency = Math.round(performance.now() - started);
    // A try that will be retried (or a 410) holds the lane from now on, before its outcome is on record.
    if (code === 410 || ((code === null || code < 200 || code >= 300) && !lastTry)) hold();
    if (code !== null && code >= 200 && code < 300) {
      onDelivered({ id: row.delivery_id, attempts: attemptsMade, code, at: new Date().toISOString(), latency });
      return { kind: 'delivered', statusCode: code };
    }
    if (code === 410) {
      // The receiver says it is gone for good: stop at once, for this delivery and every later event.
      await this.store.disable(hook.id, GONE_REASON);
      await this.webhooks.hooksChanged();
      await this.record(row.delivery_id, { status: 'failed', attempts: attemptsMade, last_status_code: 410, last_error: `${GONE_REASON}; webhook disabled`, last_latency_ms: latency });
      return { kind: 'disabled' };
    }
    const error = code === null ? result.error ?? 'no answer'
      : code >= 300 && code < 400 ? `redirect not followed (HTTP ${code})` : `HTTP ${code}`;
    return this.failedTry(row.delivery_id, attemptsMade, lastTry, code, error, result.retryAfter, latency);
  }

  private async failedTry(
    deliveryId: string, attemptsMade: number, last: boolean, code: number | null, error: string, retryAfter: string | null, latency: number | null = null,
  ): Promise<DeliveryOutcome> {
    if (last) {
      await this.record(deliveryId, { status: 'gave_up', attempts: attemptsMade, last_status_code: code, last_error: error, last_latency_ms: latency });
      return { kind: 'gave_up', error };
    }
    const delayMs = nextDelayMs(attemptsMade, retryAfter, this.webhooks.retryScale);
    await this.record(deliveryId, { status: 'pending', attempts: attemptsMade, last_status_code: code, last_error: error, last_latency_ms: latency, next_attempt_at: new Date(Date.now() + delayMs) });
    return { kind: 'retry', delayMs, error };
  }

  private record(deliveryId: string, patch: Record<string, unknown>): Promise<void> {
    return this.store.record(deliveryId, patch);
  }
}

/**
 * Delivered tries on record together: a statement is written once RECORD_BATCH tries wait, or
 * RECORD_DELAY_MS after the first of them was answered, or when the pass ends (`flush`), one statement at
 * a time. The receiver has them already; the delivery log shows them a moment later, and a burst costs
 * a statement per hundreds of tries rather than per few. A statement that fails is thrown by `flush`.
 */
class DeliveredRecorder {
  private waiting: DeliveredTry[] = [];
  private writing: Promise<void> = Promise.resolve();
  private timer: NodeJS.Timeout | null = null;
  private failure: unknown = null;

  constructor(private readonly store: DeliveryLanesStore) {}

  add(t: DeliveredTry): void {
    this.waiting.push(t);
    if (this.waiting.length >= RECORD_BATCH) this.write();
    else this.timer ??= setTimeout(() => this.write(), RECORD_DELAY_MS);
  }

  /** Every try added so far is on record (or the failure is thrown). */
  async flush(): Promise<void> {
    this.write();
    await this.writing;
    if (this.failure !== null) throw this.failure;
  }

  private write(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.waiting.length === 0) return;
    const batch = this.waiting;
    this.waiting = [];
    this.writing = this.writing.then(async () => {
      if (this.failure !== null) return;
      try {
        await this.store.recordDelivered(batch);
      } catch (err) {
        this.failure = err;
      }
    });
  }
}
