/**
 * Device deploy (docs/architecture.md, Device write and ask): run a package of the RMM's catalogue on one device, through
 * the one write skeleton. Checks, all before anything is sent: the grant `rmm.device.write` on the
 * device's RMM connection, the device (our id or its source_id; 404 when not visible), the package
 * in that connection's synced catalogue for the device's OS (422 naming package_name), and
 * `target_os` against the device (422 naming target_os). Preview shows the exact vendor request; a
 * commit runs once per idempotency_key in a `vendor.write` job.
 */
import type { z } from 'zod';
import type { DataSource } from 'typeorm';
import type { Connection } from '../../entities';
import type { AccessService, TenantAccess } from '../access/access.service';
import { Grant, type Caller } from '../access/caller';
import { requireTarget } from '../access/target-access';
import type { DeployDraft } from '../connectors/device-write-types';
import { capabilitiesOf, vendorWrite } from '../connectors/registry';
import { ServiceError } from '../errors/service-error';
import { fieldError } from '../tickets/references';
import { previewWrites, type PlannedWrite, type WritePipeline } from '../writes/write-pipeline';
import type { DeployBody, DeployPreview, DeployResult } from './deploy.schemas';
import { DeployStore, type DeviceRow } from './deploy.store';

export type DeployInput = z.infer<typeof DeployBody>;


/** How far before the reservation a run found at the vendor still counts as ours: vendor clock skew. */
const CLOCK_SKEW_MS = 60_000;

/** An OS family from an OS name, for a connector that does not declare one from the native device. */
function familyOfName(os: string | null): string | null {
  if (!os) return null;
  if (/windows/i.test(os)) return 'windows';
  if (/mac\s?os|os x|darwin/i.test(os)) return 'mac';
  if (/linux|ubuntu|debian|red hat|rhel|centos|fedora|suse|rocky|alma/i.test(os)) return 'linux';
  return null;
}

/** Path text the store can compare: no NUL, no lone surrogate (either would be a store error). */
// eslint-disable-next-line no-control-regex -- NUL is what it refuses
const storable = (s: string) => !/\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(s);

export class DeployService {
  private readonly store: DeployStore;

  constructor(
    ds: DataSource,
    private readonly access: AccessService,
    private readonly pipeline: WritePipeline,
  ) {
    this.store = new DeployStore(ds);
  }

  /** The device by our id or its source_id, on one of the tenant's RMM connections; 404 otherwise. */
  private async device(access: TenantAccess, deviceId: string, granted: readonly Connection[]): Promise<{ d: DeviceRow; c: Connection }> {
    const rmm = access.connections.filter((c) => c.kind === 'rmm');
    const rows: DeviceRow[] = storable(deviceId) && rmm.length > 0
      ? await this.store.devices(access.tenant.id, rmm.map((c) => c.id), deviceId)
      : [];
    // The id is echoed only when it is storable text (the refusal is audited).
    const { record: d, connection: c } = requireTarget(access, Grant.DeviceWrite, granted, rows, (r) => r.connection_id,
      () => new ServiceError('not_found', storable(deviceId) ? `Device ${deviceId} not found.` : 'Device not found.'));
    return { d, c };
  }

  /** Resolves and checks everything a deploy needs; nothing leaves the service here. */
  private async prepare(access: TenantAccess, deviceId: string, body: DeployInput, marker: string) {
    const granted = this.access.targets(access, Grant.DeviceWrite, 'rmm');
    const { d, c } = await this.device(access, deviceId, granted);
    // Answered only where the connector declares device.deploy (501 otherwise), before anything is looked up.
    vendorWrite(c.connector, 'device.deploy');
    const os = capabilitiesOf(c.connector).deviceOs?.(d.raw) ?? familyOfName(d.os);
    if (body.target_os) {
      const wanted = body.target_os.trim().toLowerCase();
      if (wanted !== os && wanted !== d.os?.toLowerCase()) {
        throw fieldError('target_os', `target_os "${body.target_os}" does not match device ${d.source_id}, which runs ${d.os ?? 'an unknown OS'}${os ? ` (${os})` : ''}.`);
      }
    }
    const name = body.package_name.trim();
    const candidates = await this.store.packagesNamed(access.tenant.id, c.id, name);
    const active = candidates.filter((p) => p.active);
    if (active.length === 0) {
      throw fieldError('package_name', `Package "${name}" is not in the ${c.connector} catalogue of this tenant (GET /tenants/${access.tenant.id}/packages lists it).`);
    }
    if (!os) throw fieldError('package_name', `The OS of device ${d.source_id} is unknown, so no package can be matched to it.`);
    const pkg = active.find((p) => (p.operating_systems ?? []).includes(os));
    if (!pkg) {
      const runsOn = [...new Set(active.flatMap((p) => p.operating_systems ?? []))].join(', ') || 'no OS';
      throw fieldError('package_name', `Package "${active[0].name}" has no package for ${os}, the OS of device ${d.source_id} (it runs on ${runsOn}).`);
    }
    const draft: DeployDraft = { deviceRef: d.source_id, packageRef: pkg.source_id, packageName: pkg.name, marker };
    return { c, d, os, draft };
  }

  async deploy(caller: Caller, access: TenantAccess, deviceId: string, body: DeployInput): Promise<z.infer<typeof DeployPreview> | z.infer<typeof DeployResult>> {
    // The device is part of what the key guards: the same key for another device is a conflict.
    const request = { ...body, device_id: deviceId };
    return this.pipeline.write({
      caller, access, operation: 'device.deploy', subjectRef: storable(deviceId) ? deviceId : null, request,
      prepare: (marker) => this.prepare(access, deviceId, body, marker),
      targets: (p) => [p.c],
      preview: (p) => ({
        dry_run: true as const,
        preview: { targets: previewWrites([{ connection: p.c, name: 'device.deploy', input: { draft: p.draft, since: null } }]) },
        device_id: p.d.id, device_source_id: p.d.source_id, package_name: p.draft.packageName, package_source_id: p.draft.packageRef,
        os: p.os, queued: !p.d.online,
      }),
      commit: async (p, run) => {
        // A retried send looks for a run from the first reservation of this key on (a take-over keeps it).
        const reserved = await this.store.reservedAt(run.id);
        const since = new Date((reserved ? new Date(reserved).getTime() : Date.now()) - CLOCK_SKEW_MS).toISOString();
        const write: PlannedWrite = { connection: p.c, name: 'device.deploy', input: { draft: p.draft, since } };
        const [o] = await run.send([write]);
        if (!o.ok) throw o.error!;
        return {
          // A script run is not a record the vendor creates for us: 200.
          dry_run: false as const, idempotent_replay: false, created: false,
          device_id: p.d.id, device_source_id: p.d.source_id, package_name: p.draft.packageName, package_source_id: p.draft.packageRef,
          os: p.os, queued: o.result?.queued ?? !p.d.online, connection_id: p.c.id, connector: p.c.connector,
          reconciled: o.result?.reconciled ?? false,
        };
      },
      auditDetail: (r) => ({ dry_run: r.dry_run, device_id: r.device_id, package_name: r.package_name, queued: r.queued }),
    });
  }
}
