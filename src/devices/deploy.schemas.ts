/**
 * Device deploy (interface document DeployBody, docs/architecture.md, Device write and ask): the request body and its typed
 * results. A commit (dry_run false) must carry its idempotency_key, as every keyed write.
 */
import { commitResult, keyedWrite, previewResult } from '../operations/write-results';
import { pathId, TenantPath, text, z } from '../shared/request';

export const DeployPath = TenantPath.extend({
  device_id: pathId('device_id', "Our device id or the device's source_id (its id in the RMM)."),
}).strict();

export const DeployBody = keyedWrite('DeployBody', {
  package_name: text(200).min(1).openapi({ description: 'A package `name` from GET /tenants/{tenant_id}/packages that runs on the device\'s OS.' }),
  target_os: text(100).min(1).nullable().optional().openapi({ description: "When given, must match the device's OS: its family (windows, mac, linux) or its full OS name." }),
});

const subject = {
  device_id: z.string().openapi({ description: 'Our id of the device.' }),
  device_source_id: z.string(),
  package_name: z.string(),
  package_source_id: z.string().openapi({ description: "The catalogue item's id in the RMM (the script the deploy runs)." }),
  os: z.string().openapi({ description: "The device's OS family the package was matched on." }),
  queued: z.boolean().openapi({ description: 'The device is offline: the RMM accepts the run and starts it when the device comes back.' }),
};

export const DeployPreview = previewResult('DeployPreview', subject);
export const DeployResult = commitResult('DeployResult', {
  ...subject,
  connection_id: z.string(),
  connector: z.string(),
  reconciled: z.boolean().openapi({ description: 'An earlier try of this commit had already started the run; it was not sent again.' }),
});
