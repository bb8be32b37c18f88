/** Sandbox reset (interface document): re-seed a sandbox tenant from its fixtures. */
import type { FeatureModule } from '../feature';
import { ServiceError } from '../errors/service-error';
import { defineOperation } from '../operations/operation';
import { SandboxResetBody, SandboxResetResult } from '../sync/sync.schemas';
import { eventVisibility } from '../access/event-visibility';
import { toEvent } from '../events/event-view';
import { SimulateBody, SimulateResult } from './simulate.schemas';

const resetSandbox = defineOperation({
  name: 'reset_sandbox', kind: 'mutation', summary: 'Re-seed a sandbox tenant', tag: 'Sandbox', role: 'reader',
  description: 'Sandbox tenants only: re-seeds the simulators from fixtures, re-syncs, clears the audit log and writes one `sandbox_reset` event. A production tenant gives 422 `request_invalid`.',
  http: { method: 'post', path: '/sandbox/reset', documented: true },
  body: SandboxResetBody,
  responses: [{ status: 200, schema: SandboxResetResult, description: 'The tenant was re-seeded and synced.' }],
  errors: ['request_invalid'],
  handle: async ({ body }, { caller, services }) => {
    const access = await services.access.tenantAccess(caller, body.tenant_id);
    if (!services.sandbox) throw new ServiceError('request_invalid', 'The sandbox is not enabled on this server.');
    const r = await services.sandbox.reset(access.tenant.id);
    return { tenant_id: r.tenant_id, sandbox: true as const, connections: r.synced };
  },
});

const simulateChange = defineOperation({
  name: 'simulate_sandbox_change', kind: 'mutation', summary: 'Make an MSP-side change in a sandbox simulator', tag: 'Sandbox', role: 'reader',
  description: 'Sandbox tenants only (our addition): makes the change in the simulator behind the tenant\'s PSA (ticket and company ' +
    'changes) or RMM (`device_offline`) as the MSP would in the vendor\'s UI, syncs the tenant, and answers the events the change ' +
    'produced (they go to webhooks too). A production tenant, an unknown `target_id`, or a record already in that state gives 422 `request_invalid`.',
  http: { method: 'post', path: '/sandbox/simulate', documented: false },
  body: SimulateBody,
  responses: [{ status: 200, schema: SimulateResult, description: 'The change was made and synced; its events.' }],
  errors: ['request_invalid', 'vendor_unavailable'],
  handle: async ({ body }, { caller, services }) => {
    const access = await services.access.tenantAccess(caller, body.tenant_id);
    if (!services.sandbox) throw new ServiceError('request_invalid', 'The sandbox is not enabled on this server.');
    const r = await services.sandbox.simulate(access.tenant, body.change);
    const visibility = eventVisibility(access.connections.map((c) => c.id), (c, k) => services.access.holds(access, c, k));
    const page = await services.events.page(access.tenant.id, visibility, { kind: null, after: r.afterSeq, limit: 500 });
    return { tenant_id: access.tenant.id, connection_id: r.connectionId, target_id: r.targetId, events: page.events.map(toEvent) };
  },
});

export const sandboxFeature: FeatureModule = { name: 'sandbox', operations: [resetSandbox, simulateChange] };
