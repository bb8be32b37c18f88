/** Where a connection's limits come from. */
import { ConnectionBudgets } from './connection-budgets';
import { InProcessBudgetStore } from './in-process-store';
import { VendorBudget } from './vendor-budget';
import { capabilitiesOf } from '../connectors/registry';
import { loadConfig } from '../config/config';

const budgets = (operator = {}) => new ConnectionBudgets(new VendorBudget(new InProcessBudgetStore()), (connector) => capabilitiesOf(connector).budget, operator);
const conn = (connector: string, settings: Record<string, unknown> = {}) => ({ id: 'c1', connector, settings }) as never;

describe('connection budgets', () => {
  it('take the connector default, then the operator, then the connection itself', () => {
    expect(budgets().limits(conn('autotask'))).toEqual({ requestsPerHour: 5_000, concurrent: 3 });
    expect(capabilitiesOf('autotask').budget.requestsPerHour).toBeLessThanOrEqual(10_000 / 2);
    const op = budgets({ '*': { concurrent: 2 }, autotask: { requests_per_hour: 1_000 } });
    expect(op.limits(conn('autotask'))).toEqual({ requestsPerHour: 1_000, concurrent: 2 });
    expect(op.limits(conn('autotask', { budget: { requests_per_hour: 300 } }))).toEqual({ requestsPerHour: 300, concurrent: 2 });
    // A malformed setting is ignored, not half-applied.
    expect(op.limits(conn('autotask', { budget: { requests_per_hour: -5, concurrent: 9 } }))).toEqual({ requestsPerHour: 1_000, concurrent: 2 });
  });

  it('config: VENDOR_BUDGET is checked at start; SYNC_INTERVAL_SECONDS unset means derived', () => {
    expect(loadConfig({}, { ephemeral: true }).syncIntervalMs).toBeNull();
    expect(loadConfig({ SYNC_INTERVAL_SECONDS: '0' }, { ephemeral: true }).syncIntervalMs).toBe(0);
    expect(loadConfig({ VENDOR_BUDGET: '{"*":{"concurrent":2}}' }, { ephemeral: true }).vendorBudget).toEqual({ '*': { concurrent: 2 } });
    expect(() => loadConfig({ VENDOR_BUDGET: '{"*":{"concurrent":0}}' }, { ephemeral: true })).toThrow(/VENDOR_BUDGET/);
    expect(() => loadConfig({ VENDOR_BUDGET: 'nope' }, { ephemeral: true })).toThrow(/VENDOR_BUDGET/);
  });
});
