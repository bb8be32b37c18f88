/**
 * NinjaOne RMM read connector: devices, installed applications, incidents (active alerts) and the
 * catalogue of installable packages (automation scripts).
 *
 * Incremental sync: none. NinjaOne's v2 API has no last-updated filter on /v2/devices(-detailed),
 * /v2/queries/software, /v2/queries/os-patches or /v2/alerts (the public OpenAPI document lists
 * only df/pageSize/after, cursor, install-date and patch filters), so every sync is a full read and
 * the sync engine's raw-hash comparison tells changed records from re-reads. `ctx.since` is ignored.
 */
import { parseVendorTime } from '../canonical';
import type { FetchedRecord, ReadConnector, SyncContext } from '../types';
import { fetchFrom, readOnce } from '../read-dispatch';
import { listAll, ninjaGet, pagesAfter, reportPages } from './client';

type Native = Record<string, unknown>;

const str = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);
const idString = (v: unknown): string | null => (typeof v === 'number' || (typeof v === 'string' && v !== '') ? String(v) : null);

/** Statuses of /v2/queries/os-patches rows that still wait to be installed. REJECTED patches were
 *  declined by the MSP and will not be installed, so they are not pending. */
const PENDING_PATCH_STATUSES = new Set(['MANUAL', 'APPROVED', 'FAILED']);

/** 'YYYY-MM-DD' of a NinjaOne install date (ISO date-time string, or epoch seconds on some agents). */
function dateOnly(v: unknown): string | null {
  if (typeof v === 'string' && /^\d{4}-\d{2}-\d{2}/.test(v)) return v.slice(0, 10);
  const d = parseVendorTime(v);
  return d ? d.toISOString().slice(0, 10) : null;
}

async function organizationNames(ctx: SyncContext): Promise<Map<string, string>> {
  const names = new Map<string, string>();
  for await (const page of pagesAfter<Native>(ctx, '/v2/organizations')) {
    for (const org of page) {
      const id = idString(org.id);
      const name = str(org.name);
      if (id && name) names.set(id, name);
    }
  }
  return names;
}

async function pendingPatchCounts(ctx: SyncContext): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  for await (const page of reportPages<Native>(ctx, '/v2/queries/os-patches')) {
    for (const row of page) {
      const deviceId = idString(row.deviceId);
      if (deviceId && PENDING_PATCH_STATUSES.has(String(row.status))) counts.set(deviceId, (counts.get(deviceId) ?? 0) + 1);
    }
  }
  return counts;
}

/** /v2/alerts (unpaginated): the devices' alert flag and the incidents, read once for a sync of both. */
const activeAlerts = (ctx: SyncContext) => readOnce(ctx, 'ninjaone:/v2/alerts', () => listAll<Native>(ctx, '/v2/alerts'));

async function* fetchDevices(ctx: SyncContext): AsyncGenerator<FetchedRecord<'devices'>[]> {
  // The derived flags come from other reports: read them once, before the device pages.
  const orgNames = await organizationNames(ctx);
  const alerting = new Set((await activeAlerts(ctx)).map((a) => idString(a.deviceId)).filter((id) => id != null));
  const pending = await pendingPatchCounts(ctx);

  for await (const page of pagesAfter<Native>(ctx, '/v2/devices-detailed')) {
    yield page.map((d): FetchedRecord<'devices'> => {
      const id = String(d.id);
      const orgId = idString(d.organizationId);
      const os = d.os as Native | undefined;
      return {
        sourceId: id,
        native: d,
        vendorUpdatedAt: parseVendorTime(d.lastUpdate),
        fields: {
          hostname: str(d.systemName) ?? str(d.dnsName) ?? str(d.displayName) ?? id,
          companyName: orgId ? orgNames.get(orgId) ?? null : null,
          companySourceId: orgId,
          os: str(os?.name),
          online: d.offline !== true,
          needsAttention: alerting.has(id),
          patchesPending: pending.get(id) ?? 0,
          lastContactAt: parseVendorTime(d.lastContact),
        },
      };
    });
  }
}

async function* fetchApplications(ctx: SyncContext): AsyncGenerator<FetchedRecord<'applications'>[]> {
  // Software rows have no id of their own. Should the same name and version show up twice on one
  // device (two install locations), later rows get a #n suffix in report order.
  const seen = new Map<string, number>();
  for await (const page of reportPages<Native>(ctx, '/v2/queries/software')) {
    const mapped: FetchedRecord<'applications'>[] = [];
    for (const row of page) {
      const deviceId = idString(row.deviceId);
      const name = str(row.name);
      if (!deviceId || !name) continue; // not attributable to a device: nothing to store it under
      const version = str(row.version);
      const key = `${deviceId}:${name}:${version ?? ''}`;
      const n = (seen.get(key) ?? 0) + 1;
      seen.set(key, n);
      mapped.push({
        sourceId: n === 1 ? key : `${key}#${n}`,
        native: row,
        vendorUpdatedAt: parseVendorTime(row.timestamp),
        fields: {
          name,
          publisher: str(row.publisher),
          version,
          deviceSourceId: deviceId,
          installedAt: dateOnly(row.installDate),
        },
      });
    }
    if (mapped.length > 0) yield mapped;
  }
}

async function* fetchIncidents(ctx: SyncContext): AsyncGenerator<FetchedRecord<'incidents'>[]> {
  const alerts = await activeAlerts(ctx);
  const mapped = alerts.flatMap((a): FetchedRecord<'incidents'>[] => {
    const uid = str(a.uid);
    if (!uid) return [];
    return [{
      sourceId: uid,
      native: a,
      vendorUpdatedAt: parseVendorTime(a.updateTime ?? a.createTime),
      fields: {
        message: str(a.message) ?? str(a.subject) ?? str(a.sourceName) ?? '',
        // /v2/alerts rows carry no severity in NinjaOne's schema (severity lives on the policy
        // condition); use one when a tenant's payload has it.
        severity: str(a.severity),
        deviceSourceId: idString(a.deviceId),
        openedAt: parseVendorTime(a.createTime),
      },
    }];
  });
  if (mapped.length > 0) yield mapped;
}

/**
 * NinjaOne's `operatingSystems` of an automation script and a device's `nodeClass`, as the canonical
 * OS families a deploy compares (windows, mac, linux). nodeClass values per the public OpenAPI
 * (Device.nodeClass: WINDOWS_SERVER, WINDOWS_WORKSTATION, LINUX_WORKSTATION, MAC, LINUX_SERVER, ...).
 */
export function osFamily(value: unknown): string | null {
  if (typeof value !== 'string' || !value) return null;
  const v = value.toUpperCase();
  if (v.startsWith('WINDOWS')) return 'windows';
  if (v === 'MAC' || v.startsWith('MAC_') || v === 'MACOS' || v === 'MAC_SERVER') return 'mac';
  if (v.startsWith('LINUX')) return 'linux';
  return null;
}

/**
 * The catalogue of installable packages: `GET /v2/automation/scripts` (operationId
 * getAutomationScripts, AutomationScript: id, name, description, active, language, architecture,
 * operatingSystems, ...; NinjaOne public OpenAPI 2.0.9-draft, github.com/JunknerdGit/NinjaOneAPI
 * ninjaone-api-core-resources.yaml). Not paginated. A deploy runs the script on the device.
 */
async function* fetchPackages(ctx: SyncContext): AsyncGenerator<FetchedRecord<'packages'>[]> {
  const scripts = await listAll<Native>(ctx, '/v2/automation/scripts');
  const mapped = scripts.flatMap((s): FetchedRecord<'packages'>[] => {
    const id = idString(s.id);
    const name = str(s.name);
    if (!id || !name) return [];
    const systems = Array.isArray(s.operatingSystems) ? s.operatingSystems : [];
    return [{
      sourceId: id,
      native: s,
      vendorUpdatedAt: parseVendorTime(s.updatedOn ?? s.createdOn),
      fields: {
        name,
        description: str(s.description),
        operatingSystems: [...new Set(systems.map(osFamily).filter((f): f is string => f != null))].sort(),
        active: s.active !== false,
      },
    }];
  });
  if (mapped.length > 0) yield mapped;
}

export const ninjaOneConnector: ReadConnector = {
  name: 'ninjaone',
  kind: 'rmm',
  resources: ['devices', 'applications', 'incidents', 'packages'],
  incremental: [],
  // The client-credentials token, then GET /v2/organizations?pageSize=1 (Public API 2.0).
  async probe(ctx: SyncContext): Promise<void> {
    await ninjaGet(ctx, '/v2/organizations', { pageSize: 1 });
  },
  fetch: fetchFrom('ninjaone', { devices: fetchDevices, applications: fetchApplications, incidents: fetchIncidents, packages: fetchPackages }),
};
