/** Sandbox reset (interface document): re-seed a sandbox tenant from its fixtures. */
import type { FeatureModule } from '../feature';
import { ServiceError } from '../errors/service-error';
import { defineOperation } from '../operations/operation';
import { SandboxResetBody, SandboxResetResult } from '../sync/sync.schemas';

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

export const sandboxFeature: FeatureModule = { name: 'sandbox', operations: [resetSandbox] };
