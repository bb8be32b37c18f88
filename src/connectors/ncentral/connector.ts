/**
 * N-able N-central read connector: customers (as companies), devices with their attention (active
 * issues), connectivity and patch state, each device's installed software, and the active issues as
 * incidents. What it yields for devices, applications and incidents is what the other RMM connectors
 * yield, field for field.
 *
 * Calls (N-central REST API, 2023.9 and later: documentation.n-able.com, N-central user guide, "REST
 * APIs", and developer.n-able.com's N-central API reference; the endpoint list as the public module
 * PS-NCentral-RESTAPI mirrors it for N-central 2025.3.1.1, the record shapes as npycentral's models do):
 *   GET /api/service-orgs                          pageNumber, pageSize   ("Organization Units")
 *   GET /api/customers                             pageNumber, pageSize   ("Organization Units")
 *   GET /api/devices                               pageNumber, pageSize   ("Devices")
 *   GET /api/devices/{deviceId}/assets                                    ("Devices"; npycentral DeviceAssets:
 *                                                  data._extra.application.list, data._extra.patch.list)
 *   GET /api/org-units/{orgUnitId}/active-issues   pageNumber, pageSize   ("Active Issues"; npycentral ActiveIssue),
 *                                                  read for each service organisation: it covers its customers and sites
 *
 * Org units: the service organisation is the MSP itself; its customers are the MSP's customers, the
 * companies; a site is a location of a customer, so a device's company is its customer (its site stays
 * in the native payload).
 *
 * A device has no online flag in the REST API: an agent that stopped checking in is an active issue in
 * state 7 (disconnected, in npycentral's reading of notificationState), so `online` and `needsAttention`
 * come from the active issues and `patchesPending` from the asset inventory: measured, not native.
 *
 * Incremental sync: none. The lists take paging and sorting only (no last-updated filter), so every sync
 * is a full read and the sync engine's payload hash tells changed records from re-reads.
 */
import { parseVendorTime } from '../canonical';
import { fetchFrom, readOnce } from '../read-dispatch';
import { mapLimit } from '../map-limit';
import { softwareRecords } from '../software-keys';
import type { FetchedRecord, ReadConnector, SyncContext } from '../types';
import { VendorHttpError } from '../vendor-http';
import { engineError, ncGet, ncPages, NCENTRAL_PAGE_SIZE } from './client';
import { osFamilyFromText } from '../os-family';

type Native = Record<string, unknown>;

const text = (v: unknown): string | null => (typeof v === 'string' && v.trim() !== '' ? v : null);
const id = (v: unknown): string | null => (typeof v === 'number' && Number.isFinite(v) ? String(v) : text(v));

/** notificationState of an active issue (npycentral's reading: 3 and 4 warning, 5 critical, 6 failed, 7 disconnected). */
const STATE: Record<number, string> = { 3: 'warning', 4: 'warning', 5: 'critical', 6: 'failed', 7: 'disconnected' };
const DISCONNECTED = 7;

async function all<T>(pages: AsyncIterable<T[]>): Promise<T[]> {
  const out: T[] = [];
  for await (const page of pages) out.push(...page);
  return out;
}

/** Every device, read once for the resources of one sync that need them. */
function allDevices(ctx: SyncContext): Promise<Native[]> {
  return readOnce(ctx, 'ncentral:/api/devices', () => all(ncPages<Native>(ctx, '/api/devices')));
}

/** Every active issue under every service organisation, read once for the devices and the incidents. */
function activeIssues(ctx: SyncContext): Promise<Native[]> {
  return readOnce(ctx, 'ncentral:active-issues', async () => {
    const orgs = await all(ncPages<Native>(ctx, '/api/service-orgs'));
    const out: Native[] = [];
    for (const so of orgs) {
      const soId = id(so.soId);
      if (soId) out.push(...await all(ncPages<Native>(ctx, `/api/org-units/${encodeURIComponent(soId)}/active-issues`)));
    }
    return out;
  });
}

/** What a device's asset inventory answered: its `data`, or null when N-central has none for it. */
type Inventory = Native | null;

/** One device's inventory; a device gone since the list (404) or one not yet through asset discovery (an error in a 200 OK): null. */
async function inventory(ctx: SyncContext, deviceId: string): Promise<Inventory> {
  try {
    const body = await ncGet<Native>(ctx, `/api/devices/${encodeURIComponent(deviceId)}/assets`);
    if (engineError(body)) return null;
    return (body?.data as Native | undefined) ?? null;
  } catch (err) {
    if (err instanceof VendorHttpError && err.status === 404) return null;
    throw err;
  }
}

/** Every device's asset inventory by device id, read once for the devices' patch state and the applications. */
function inventories(ctx: SyncContext): Promise<Map<string, Inventory>> {
  return readOnce(ctx, 'ncentral:assets', async () => {
    const ids = (await allDevices(ctx)).map((d) => id(d.deviceId)).filter((x): x is string => x != null);
    // Asset inventories are among the heaviest endpoints ("Rate limiting": 3 to 50 in flight per endpoint).
    const found = await mapLimit(ids, Math.max(1, Math.min(ctx.concurrency ?? 3, 3)), (x) => inventory(ctx, x));
    return new Map(ids.map((x, i) => [x, found[i]]));
  });
}

/** The rows of an inventory list that are objects: a null or malformed row is skipped, never fails the device. */
const listOf = (v: unknown): Native[] => {
  const list = (v as Native | undefined)?.list;
  return Array.isArray(list) ? list.filter((r): r is Native => !!r && typeof r === 'object' && !Array.isArray(r)) : [];
};

/** Patches of an inventory not installed (npycentral Patch.installationresult: "Installed" once installed). */
function pendingPatches(inv: Native): number {
  return listOf((inv._extra as Native | undefined)?.patch).filter((p) => text(p.installationresult)?.toLowerCase() !== 'installed').length;
}

function deviceRecord(d: Native, issues: Map<string, number[]>, inv: Inventory | undefined): FetchedRecord<'devices'> | null {
  const deviceId = id(d.deviceId);
  if (!deviceId) return null; // nothing to key it by: skipped, the rest of the page goes on
  const states = issues.get(deviceId) ?? [];
  const checkin = parseVendorTime(d.lastApplianceCheckinTime);
  return {
    sourceId: deviceId,
    native: d,
    vendorUpdatedAt: checkin,
    fields: {
      hostname: text(d.longName) ?? text(d.discoveredName) ?? deviceId,
      companyName: text(d.customerName),
      companySourceId: id(d.customerId),
      os: text(d.supportedOs) ?? text(d.supportedOsLabel),
      online: !states.includes(DISCONNECTED),
      needsAttention: states.length > 0,
      patchesPending: inv ? pendingPatches(inv) : 0,
      lastContactAt: checkin,
    },
    measured: inv ? ['needsAttention', 'online', 'patchesPending'] : ['needsAttention', 'online'],
    // Without an inventory the patch state is unknown: the stored count stands.
    ...(inv ? {} : { unmeasured: ['patchesPending'] }),
  };
}

async function* fetchDevices(ctx: SyncContext): AsyncGenerator<FetchedRecord<'devices'>[]> {
  const issues = new Map<string, number[]>();
  for (const i of await activeIssues(ctx)) {
    const deviceId = id(i.deviceId);
    if (deviceId) issues.set(deviceId, [...(issues.get(deviceId) ?? []), typeof i.notificationState === 'number' ? i.notificationState : 0]);
  }
  const devices = await allDevices(ctx);
  const inv = await inventories(ctx);
  for (let at = 0; at < devices.length; at += NCENTRAL_PAGE_SIZE) {
    const mapped = devices.slice(at, at + NCENTRAL_PAGE_SIZE).map((d) => deviceRecord(d, issues, inv.get(id(d.deviceId) ?? '') ?? undefined));
    const kept = mapped.filter((r): r is FetchedRecord<'devices'> => r != null);
    if (kept.length > 0) yield kept;
  }
}

/** A device's installed software (inventory rows have no id of their own: software-keys.ts). */
function applicationRecords(deviceId: string, inv: Native): FetchedRecord<'applications'>[] {
  return softwareRecords<Native>(deviceId, listOf((inv._extra as Native | undefined)?.application), (row) => ({
    name: text(row.displayname), version: text(row.version), publisher: text(row.publisher), installedAt: text(row.installationdate),
  }));
}

async function* fetchApplications(ctx: SyncContext): AsyncGenerator<FetchedRecord<'applications'>[]> {
  for (const [deviceId, inv] of await inventories(ctx)) {
    const rows = inv ? applicationRecords(deviceId, inv) : [];
    if (rows.length > 0) yield rows;
  }
}

function incidentRecord(i: Native): FetchedRecord<'incidents'> | null {
  // taskId names the monitoring task of one service on one device: the issue's identity.
  const taskId = id(i.taskId);
  if (!taskId) return null;
  const extra = i._extra as Native | undefined;
  const state = typeof i.notificationState === 'number' ? STATE[i.notificationState] ?? null : null;
  const opened = parseVendorTime(extra?.transitionTime);
  return {
    sourceId: taskId,
    native: i,
    vendorUpdatedAt: opened,
    fields: {
      message: [text(i.serviceName), state].filter(Boolean).join(': '),
      severity: state,
      deviceSourceId: id(i.deviceId),
      openedAt: opened,
    },
  };
}

async function* fetchIncidents(ctx: SyncContext): AsyncGenerator<FetchedRecord<'incidents'>[]> {
  const mapped = (await activeIssues(ctx)).map(incidentRecord).filter((r): r is FetchedRecord<'incidents'> => r != null);
  if (mapped.length > 0) yield mapped;
}

async function* fetchCompanies(ctx: SyncContext): AsyncGenerator<FetchedRecord<'companies'>[]> {
  for await (const page of ncPages<Native>(ctx, '/api/customers')) {
    const mapped = page.flatMap((c): FetchedRecord<'companies'>[] => {
      const customerId = id(c.customerId);
      const name = text(c.customerName);
      // The system's own org units are no customer of the MSP.
      if (!customerId || !name || c.isSystem === true || c.isServiceOrg === true) return [];
      return [{ sourceId: customerId, native: c, vendorUpdatedAt: null, fields: { name, identifier: text(c.externalId) } }];
    });
    if (mapped.length > 0) yield mapped;
  }
}

/**
 * The canonical OS family (windows, mac, linux) of a device from its `osId` and `supportedOs`, as
 * N-central writes them ("winnt", "Microsoft Windows 11 Pro 64-bit"; "mac", "macOS 14 Sonoma"; "linux").
 */
export function deviceOsFamily(native: Record<string, unknown>): string | null {
  return osFamilyFromText(`${text(native.osId) ?? ''} ${text(native.supportedOs) ?? ''}`);
}

export const ncentralConnector: ReadConnector = {
  name: 'ncentral',
  kind: 'rmm',
  resources: ['companies', 'devices', 'applications', 'incidents'],
  incremental: [],
  // The token exchange, then the smallest documented read: one service organisation.
  async probe(ctx: SyncContext): Promise<void> {
    await ncGet(ctx, '/api/service-orgs', { pageSize: 1 });
  },
  fetch: fetchFrom('ncentral', { companies: fetchCompanies, devices: fetchDevices, applications: fetchApplications, incidents: fetchIncidents }),
};
