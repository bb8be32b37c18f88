/** Device writes (docs/architecture.md, Device write and ask): deploy a catalogue package to one device. */
import { Grant } from '../access/caller';
import type { FeatureModule } from '../operations/feature-module';
import { operationsUsing, tenantOf } from '../operations/operation';
import { writeResponses, writeStatus } from '../operations/write-results';
import * as S from './deploy.schemas';
import type { DeployService } from './deploy.service';

/** The services this feature's operations use, and all they see of the service graph (src/operations/feature-module.ts). */
export interface DevicesServices {
  deploy: DeployService;
}
const defineOperation = operationsUsing<DevicesServices>();

export const deployToDevice = defineOperation({
  name: 'deploy_to_device', kind: 'mutation', summary: 'Deploy a package to a device (preview or commit)', tag: 'Writes', role: 'isv', grant: Grant.DeviceWrite,
  description: 'Runs the install of a package from GET /tenants/{tenant_id}/packages on one device. `device_id` is our id or the source_id. '
    + 'The package must be in the catalogue for the device\'s OS (422 naming package_name); `target_os`, when given, must match the device (422 naming target_os). '
    + 'Preview by default (the exact RMM request, nothing sent); a commit needs `idempotency_key` and runs once. `queued`: the device is offline and the run waits for it.',
  http: { method: 'post', path: '/tenants/{tenant_id}/devices/{device_id}/deploy', documented: true },
  path: S.DeployPath, body: S.DeployBody,
  responses: writeResponses(S.DeployPreview, S.DeployResult, [200]),
  statusOf: writeStatus,
  errors: ['grant_missing', 'not_found', 'validation', 'idempotency_conflict', 'idempotency_in_progress', 'not_supported', 'rate_limited',
    'vendor_error', 'vendor_unavailable', 'role_required'],
  handle: async ({ path, body }, ctx) => ctx.services.deploy.deploy(ctx.caller, tenantOf(ctx), path.device_id, body),
});

export const devicesFeature: FeatureModule<DevicesServices> = { name: 'devices', operations: [deployToDevice] };
