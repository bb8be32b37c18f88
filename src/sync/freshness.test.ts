/** The freshness plan: cadence, change rate and budget (src/sync/freshness.ts). */
import { CADENCE_BOUNDS, planFreshness, SCHEDULED_SHARE, type ResourceHistory } from './freshness';
import { CONNECTOR_NAMES, readConnector, capabilitiesOf } from '../connectors/registry';
import type { SyncResource } from '../connectors/types';

const history = (resources: readonly SyncResource[], over: Partial<Record<SyncResource, Partial<ResourceHistory>>> = {}): ResourceHistory[] =>
  resources.map((resource) => ({ resource, quietChecks: 0, callsPerCheck: 1, ...over[resource] }));

describe('the freshness plan', () => {
  it('checks tickets every few seconds and the catalogue and companies every few minutes', () => {
    const plan = planFreshness(history(['tickets', 'companies', 'products']), 10_000);
    expect(plan.intervals.get('tickets')).toBe(CADENCE_BOUNDS.hot.minMs);
    expect(plan.intervals.get('companies')).toBe(CADENCE_BOUNDS.cold.minMs);
    expect(plan.intervals.get('products')).toBe(CADENCE_BOUNDS.cold.minMs);
    expect(plan.tickMs).toBe(CADENCE_BOUNDS.hot.minMs);
  });

  it('stretches a quiet resource up to its cadence\'s longest interval, and a change brings it back', () => {
    const quiet = (n: number) => planFreshness(history(['tickets', 'companies'], { tickets: { quietChecks: n }, companies: { quietChecks: n } }), 10_000);
    const intervals = [0, 1, 2, 3, 50].map((n) => quiet(n).intervals.get('tickets')!);
    expect(intervals).toEqual([...intervals].sort((a, b) => a - b));
    expect(intervals[1]).toBeGreaterThan(intervals[0]);
    expect(intervals.at(-1)).toBe(CADENCE_BOUNDS.hot.maxMs);
    expect(quiet(50).intervals.get('companies')).toBe(CADENCE_BOUNDS.cold.maxMs);
    expect(quiet(0).intervals.get('tickets')).toBe(CADENCE_BOUNDS.hot.minMs);
  });

  it('never plans more calls an hour than its share of the budget, on every connector, busy or quiet, cheap or costly', () => {
    for (const name of CONNECTOR_NAMES) {
      const { resources } = readConnector(name);
      const perHour = capabilitiesOf(name).budget.requestsPerHour;
      for (const calls of [1, 3, 40]) {
        for (const quietChecks of [0, 5]) {
          for (const budget of [perHour, 500, 60]) {
            const plan = planFreshness(resources.map((resource) => ({ resource, quietChecks, callsPerCheck: calls })), budget);
            expect([name, budget, plan.plannedCallsPerHour <= budget * SCHEDULED_SHARE + resources.length]).toEqual([name, budget, true]);
          }
        }
      }
    }
  });

  it('keeps a hot resource within 10 s on every connector\'s default budget when a quiet check costs what a probe or a small page does', () => {
    for (const name of CONNECTOR_NAMES) {
      const { resources } = readConnector(name);
      // ConnectWise's ticket probe counts two lists (service and project tickets); one call elsewhere.
      const plan = planFreshness(resources.map((resource) => ({ resource, quietChecks: 0, callsPerCheck: resource === 'tickets' ? 2 : 1 })), capabilitiesOf(name).budget.requestsPerHour);
      for (const r of resources.filter((x) => ['tickets', 'devices', 'incidents'].includes(x))) expect([name, r, plan.intervals.get(r)! <= 10_000]).toEqual([name, r, true]);
    }
  });

  it('a fixed interval (SYNC_INTERVAL_SECONDS) applies to every resource, budget permitting', () => {
    const plan = planFreshness(history(['tickets', 'products']), 10_000, 30_000);
    expect(plan.intervals.get('tickets')).toBe(30_000);
    expect(plan.intervals.get('products')).toBe(30_000);
    expect(planFreshness(history(['tickets']), 10, 1_000).intervals.get('tickets')).toBeGreaterThan(1_000);
  });
});
