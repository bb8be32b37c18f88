/**
 * What failing webhook receivers write to the service's log (docs/architecture.md, Operations: an error
 * or warning line means an operator must act). A receiver is the ISV's: every try is in the delivery
 * log the ISV reads (GET …/webhook/<id>/deliveries), and a receiver that stays down (an example URL
 * left registered, say) is not the operator's to fix. So a webhook's first failure is one warn line,
 * later ones at most one line per webhook per REPEAT_INTERVAL_MS (saying how many it stands for), the
 * rest at debug; a delivery that gets through after failures says so at info.
 */
import type { Logger } from 'pino';
import type { QueueLogger } from '../../jobs/queue/logger';

export const REPEAT_INTERVAL_MS = 60 * 60_000;
/** Webhooks remembered at most (the oldest is forgotten first: its next failure logs again). */
const MAX_REMEMBERED = 10_000;

interface Failing {
  loggedAt: number;
  /** Failures since the last line about this webhook. */
  unlogged: number;
}

export class DeliveryFailureLog {
  private readonly failing = new Map<string, Failing>();

  constructor(
    private readonly logger: Logger,
    private readonly intervalMs = REPEAT_INTERVAL_MS,
    private readonly now: () => number = Date.now,
  ) {}

  /** A try failed at the receiver (`outcome`: retry, gave_up, blocked or disabled). Never the URL's secret or the body. */
  failed(hook: { webhookId: string; tenantId: string }, outcome: string, error: string): void {
    const at = this.now();
    const seen = this.failing.get(hook.webhookId);
    const fields = { webhookId: hook.webhookId, tenantId: hook.tenantId, outcome, err: error };
    if (!seen) {
      this.remember(hook.webhookId, { loggedAt: at, unlogged: 0 });
      this.logger.warn(fields, 'webhook delivery failed; the receiver\'s delivery log has every try, and this webhook logs again at most hourly');
    } else if (at - seen.loggedAt >= this.intervalMs) {
      this.logger.warn({ ...fields, failuresSinceLastLine: seen.unlogged + 1 }, 'webhook deliveries still failing');
      seen.loggedAt = at;
      seen.unlogged = 0;
    } else {
      seen.unlogged++;
      this.logger.debug(fields, 'webhook delivery failed');
    }
  }

  /** A try got through: a webhook that was failing says it recovered, once. */
  delivered(hook: { webhookId: string; tenantId: string }): void {
    if (!this.failing.delete(hook.webhookId)) return;
    this.logger.info({ webhookId: hook.webhookId, tenantId: hook.tenantId }, 'webhook deliveries got through again');
  }

  /** attemptDelivery itself threw (the store, a bug): an error line, every time. */
  unexpected(hook: { webhookId: string; tenantId: string }, err: unknown): void {
    this.logger.error({ webhookId: hook.webhookId, tenantId: hook.tenantId, err }, 'webhook delivery could not be tried');
  }

  private remember(webhookId: string, state: Failing): void {
    if (this.failing.size >= MAX_REMEMBERED) this.failing.delete(this.failing.keys().next().value!);
    this.failing.set(webhookId, state);
  }
}

/** The queue's two lines about a try that failed (jobs/queue: "job attempt failed, will retry" and "job failed"). */
const TRY_FAILED = /^job (attempt )?failed/;

/**
 * The job queue's logger: a webhook.deliver try that failed is DeliveryFailureLog's to report, so the
 * queue's own line about it goes to debug. Every other line of the queue stays as it is.
 */
export function queueLogger(logger: Logger): QueueLogger {
  const quiet = (obj: Record<string, unknown>, msg: string) => obj.jobName === 'webhook.deliver' && TRY_FAILED.test(msg);
  return {
    info: (obj, msg) => logger.info(obj, msg),
    warn: (obj, msg) => (quiet(obj, msg) ? logger.debug(obj, msg) : logger.warn(obj, msg)),
    error: (obj, msg) => (quiet(obj, msg) ? logger.debug(obj, msg) : logger.error(obj, msg)),
  };
}
