/**
 * The budget of each connection: its limits (connector default from capabilities, then the operator's
 * VENDOR_BUDGET, then the connection's own settings.budget set by the MSP or operator), the gate its
 * vendor calls wait on and what `status` shows. How often a sync may check within it: src/sync/freshness.ts.
 */
import { z } from 'zod';
import type { Connection } from '../../entities';
import type { AppConfig } from '../config/config';
import type { BudgetLimits, CountedGate, BudgetPriority, BudgetSnapshot } from './budget';
import { VendorBudget } from './vendor-budget';
import { InProcessBudgetStore } from './in-process-store';
import { RedisBudgetStore } from './redis-store';

type BudgetConnection = Pick<Connection, 'id' | 'connector' | 'settings'>;

/** A call's slot outlasts its timeout by this: the send check before it, and a slow event loop. */
const LEASE_SLACK_MS = 30_000;

const ConnectionBudgetSetting = z.object({
  requests_per_hour: z.number().int().min(1).optional(),
  concurrent: z.number().int().min(1).optional(),
});

/**
 * A vendor's own default limits, by connector name: its published API limits, which the connectors declare
 * (`capabilitiesOf(connector).budget`, src/connectors/registry.ts). Given, so that the budget, which the
 * connectors' HTTP client runs on, does not import the connectors.
 */
export type VendorLimits = (connector: string) => BudgetLimits;

export class ConnectionBudgets {
  constructor(readonly budget: VendorBudget, private readonly vendorLimits: VendorLimits, private readonly operator: AppConfig['vendorBudget'] = {}) {}

  static fromConfig(config: Pick<AppConfig, 'redisUrl' | 'queuePrefix' | 'vendorBudget' | 'vendorTimeoutMs'>, vendorLimits: VendorLimits): ConnectionBudgets {
    const store = config.redisUrl ? new RedisBudgetStore(config.redisUrl, config.queuePrefix) : new InProcessBudgetStore();
    // A slot is held for one call (vendor-http.ts), which its timeout ends: the slot of a process that died
    // mid-call frees itself soon after, not minutes later (ten crashed writes would otherwise stop a
    // connection's writes for two minutes).
    return new ConnectionBudgets(new VendorBudget(store, { leaseMs: config.vendorTimeoutMs + LEASE_SLACK_MS }), vendorLimits, config.vendorBudget);
  }

  limits(connection: BudgetConnection): BudgetLimits {
    const own = ConnectionBudgetSetting.safeParse(connection.settings?.budget ?? {});
    const pick = [this.operator['*'], this.operator[connection.connector], own.success ? own.data : undefined];
    const limits = { ...this.vendorLimits(connection.connector) };
    for (const o of pick) {
      if (o?.requests_per_hour) limits.requestsPerHour = o.requests_per_hour;
      if (o?.concurrent) limits.concurrent = o.concurrent;
    }
    return limits;
  }

  /** The gate the connection's vendor calls wait on, counting them (CountedGate). `answerBy`: see VendorBudget.gate (a write's request answers then). */
  gate(connection: BudgetConnection, priority: BudgetPriority, answerBy?: number): CountedGate {
    return this.budget.gate(connection.id, this.limits(connection), priority, answerBy, connection.connector);
  }

  snapshot(connection: BudgetConnection): Promise<BudgetSnapshot> {
    return this.budget.snapshot(connection.id, this.limits(connection));
  }

  /** Shutdown: vendor calls that would wait for a budget are not sent (vendor-budget.ts). */
  stopWaiting(): void {
    this.budget.stopWaiting();
  }

  close(): Promise<void> {
    return this.budget.close();
  }
}
