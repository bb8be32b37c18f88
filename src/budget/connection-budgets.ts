/**
 * The budget of each connection: its limits (connector default from capabilities, then the operator's
 * VENDOR_BUDGET, then the connection's own settings.budget set by the MSP or operator), the gate its
 * vendor calls wait on, what `status` shows, and the sync interval the budget allows.
 */
import { z } from 'zod';
import type { Connection } from '../../entities';
import { capabilitiesOf, readConnector } from '../connectors/registry';
import type { AppConfig } from '../config/config';
import type { BudgetGate, BudgetLimits, BudgetPriority, BudgetSnapshot } from './budget';
import { VendorBudget } from './vendor-budget';
import { InProcessBudgetStore } from './in-process-store';
import { RedisBudgetStore } from './redis-store';

type BudgetConnection = Pick<Connection, 'id' | 'connector' | 'settings'>;

const ConnectionBudgetSetting = z.object({
  requests_per_hour: z.number().int().min(1).optional(),
  concurrent: z.number().int().min(1).optional(),
});

/** Shortest scheduled sync interval, whatever the budget allows. */
export const MIN_SYNC_INTERVAL_MS = 60_000;
/** Share of the hourly budget the scheduled syncs may plan to use when nothing changed. */
const SCHEDULED_SYNC_SHARE = 0.25;

export class ConnectionBudgets {
  constructor(readonly budget: VendorBudget, private readonly operator: AppConfig['vendorBudget'] = {}) {}

  static fromConfig(config: Pick<AppConfig, 'redisUrl' | 'queuePrefix' | 'vendorBudget'>): ConnectionBudgets {
    const store = config.redisUrl ? new RedisBudgetStore(config.redisUrl, config.queuePrefix) : new InProcessBudgetStore();
    return new ConnectionBudgets(new VendorBudget(store), config.vendorBudget);
  }

  limits(connection: BudgetConnection): BudgetLimits {
    const own = ConnectionBudgetSetting.safeParse(connection.settings?.budget ?? {});
    const pick = [this.operator['*'], this.operator[connection.connector], own.success ? own.data : undefined];
    const limits = { ...capabilitiesOf(connection.connector).budget };
    for (const o of pick) {
      if (o?.requests_per_hour) limits.requestsPerHour = o.requests_per_hour;
      if (o?.concurrent) limits.concurrent = o.concurrent;
    }
    return limits;
  }

  /** `answerBy`: see VendorBudget.gate (a write's request answers then). */
  gate(connection: BudgetConnection, priority: BudgetPriority, answerBy?: number): BudgetGate {
    return { ...this.budget.gate(connection.id, this.limits(connection), priority, answerBy), connector: connection.connector };
  }

  snapshot(connection: BudgetConnection): Promise<BudgetSnapshot> {
    return this.budget.snapshot(connection.id, this.limits(connection));
  }

  /**
   * The scheduled sync interval the budget allows: a quiet incremental sync costs about one call per
   * resource, and scheduled syncs may plan on a quarter of the hourly budget; never under a minute.
   */
  syncIntervalMs(connection: BudgetConnection): number {
    const calls = readConnector(connection.connector).resources.length;
    const perHour = this.limits(connection).requestsPerHour * SCHEDULED_SYNC_SHARE;
    return Math.max(MIN_SYNC_INTERVAL_MS, Math.ceil((calls * 3_600_000) / perHour));
  }

  /** Shutdown: vendor calls that would wait for a budget are not sent (vendor-budget.ts). */
  stopWaiting(): void {
    this.budget.stopWaiting();
  }

  close(): Promise<void> {
    return this.budget.close();
  }
}
