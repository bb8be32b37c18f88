/** Sandbox reset (interface document): re-seed a sandbox tenant from its fixtures. */
import type { FeatureModule } from '../operations/feature-module';
import { ServiceError } from '../errors/service-error';
import { operationsUsing } from '../operations/operation';
import { SandboxResetBody, SandboxResetResult, SyncRunning } from '../sync/sync.schemas';
import { RUNNING_DESCRIPTION, syncRunningAnswer } from '../sync/feature';
import { toEvent } from '../events/event-view';
import { isCredentialChange, SimulateBody, SimulateResult } from './simulate.schemas';
import type { SimulatedChange } from '../simulators/kit';
import type { AccessService } from '../access/access.service';
import type { AppConfig } from '../config/config';
import type { EventsService } from '../events/events.service';
import type { SandboxService } from './sandbox.service';

/** The services this feature's operations use, and all they see of the service graph (src/operations/feature-module.ts). */
export interface SandboxServices {
  access: AccessService;
  config: Pick<AppConfig, 'syncWaitMs'>;
  events: EventsService;
  sandbox: SandboxService | null;
}
const defineOperation = operationsUsing<SandboxServices>();

const resetSandbox = defineOperation({
  name: 'reset_sandbox', kind: 'mutation', summary: 'Re-seed a sandbox tenant', tag: 'Sandbox', role: 'reader', grant: 'none', // Sandbox tenants only; nothing reaches a real vendor.
  description: 'Sandbox tenants only: re-seeds the simulators from fixtures, re-syncs, clears the audit log and writes one `sandbox_reset` event. A production tenant gives 422 `request_invalid`.',
  http: { method: 'post', path: '/sandbox/reset', documented: true },
  body: SandboxResetBody,
  responses: [
    // First: the GraphQL union tells its members apart by SyncRunning's `status` literal.
    { status: 202, schema: SyncRunning, description: `The tenant was re-seeded; its re-sync is still running. ${RUNNING_DESCRIPTION}` },
    { status: 200, schema: SandboxResetResult, description: 'The tenant was re-seeded and synced.' },
  ],
  errors: ['request_invalid'],
  statusOf: (r: object) => ('status' in r && r.status === 'running' ? 202 : 200),
  handle: async ({ body }, { caller, services }) => {
    const access = await services.access.tenantAccess(caller, body.tenant_id);
    if (!services.sandbox) throw new ServiceError('request_invalid', 'The sandbox is not enabled on this server.');
    const r = await services.sandbox.reset(access.tenant.id, services.config.syncWaitMs);
    if (r.synced.state === 'running') return syncRunningAnswer(access.tenant, r.synced);
    return { tenant_id: r.tenant_id, sandbox: true as const, connections: r.synced.connections };
  },
});

const simulateChange = defineOperation({
  name: 'simulate_sandbox_change', kind: 'mutation', summary: 'Make an MSP-side change in a sandbox simulator', tag: 'Sandbox', role: 'reader', grant: 'none', // Sandbox simulators only.
  description: 'Sandbox tenants only (our addition): makes the change in the simulator behind the tenant\'s PSA (ticket and company ' +
    'changes) or RMM (`device_offline`) as the MSP would in the vendor\'s UI, syncs the tenant, and answers the events the change ' +
    'produced (they go to webhooks too). `credentials_revoked` makes the vendor simulator refuse a sandbox connection\'s credentials ' +
    '(401, as a revoked API member or application), so the sync that follows fails and the connection\'s state changes ' +
    '(`connection.credentials_failed`, once however many syncs fail); `credentials_restored` undoes it (`connection.restored`). ' +
    'A production tenant, an unknown `target_id`, or a record already in that state gives 422 `request_invalid`.',
  http: { method: 'post', path: '/sandbox/simulate', documented: false },
  body: SimulateBody,
  responses: [
    // First: the GraphQL union tells its members apart by SyncRunning's `status` literal.
    { status: 202, schema: SyncRunning, description: `The change was made; the sync that reads it is still running (its events then appear in the feed and go to webhooks). ${RUNNING_DESCRIPTION}` },
    { status: 200, schema: SimulateResult, description: 'The change was made and synced; its events.' },
  ],
  errors: ['request_invalid', 'vendor_unavailable'],
  statusOf: (r: object) => ('status' in r && r.status === 'running' ? 202 : 200),
  handle: async ({ body }, { caller, services }) => {
    const access = await services.access.tenantAccess(caller, body.tenant_id);
    if (!services.sandbox) throw new ServiceError('request_invalid', 'The sandbox is not enabled on this server.');
    const change = body.change;
    const r = isCredentialChange(change.kind)
      ? await services.sandbox.simulateCredentials(access.tenant, { kind: change.kind, connection_id: change.connection_id }, services.config.syncWaitMs)
      : await services.sandbox.simulate(access.tenant, change as SimulatedChange, services.config.syncWaitMs);
    if (r.running) return syncRunningAnswer(access.tenant, r.running);
    const visibility = services.access.eventVisibility(access);
    const page = await services.events.page(access.tenant.id, visibility, { kind: null, after: r.afterSeq, limit: 500 });
    return { tenant_id: access.tenant.id, connection_id: r.connectionId, target_id: r.targetId, events: page.items.map(toEvent) };
  },
});

export const sandboxFeature: FeatureModule<SandboxServices> = { name: 'sandbox', operations: [resetSandbox, simulateChange] };
