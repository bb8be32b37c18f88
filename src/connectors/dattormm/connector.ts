/**
 * Datto RMM read connector: devices (each with its site, the company it belongs to), installed
 * applications (each device's software audit), incidents (open alerts) and the catalogue of
 * installable packages (the account's components). What it yields is what the NinjaOne connector
 * yields, field for field, so lists, events, health rows and deploy previews work the same.
 *
 * Calls (Datto RMM OpenAPI, build 235, fixtures/vendor-api/dattormm; operation ids in brackets):
 *   GET /v2/account/devices                      [getUserAccountDevices]  page, max
 *   GET /v2/account/alerts/open                  [getUserAccountOpenAlerts] page, max
 *   GET /v2/audit/device/{deviceUid}/software    [getDeviceAuditSoftware] page, max (400 for a device
 *                                                not of class `device`: printers, ESXi hosts, network devices)
 *   GET /v2/account/components                   [getComponents] page, max
 *   GET /v2/account/sites                        [getSites] the probe, max=1
 *
 * Incremental sync: none. No list of the v2 API takes a last-updated filter (the OpenAPI lists only page,
 * max and name/type filters), so every sync is a full read and the sync engine's payload hash tells
 * changed records from re-reads. `ctx.since` is ignored.
 */
import { parseVendorTime } from '../canonical';
import type { FetchedRecord, ReadConnector, SyncContext } from '../types';
import { fetchFrom, readOnce } from '../read-dispatch';
import { mapLimit } from '../map-limit';
import { softwareRecords } from '../software-keys';
import { VendorHttpError } from '../vendor-http';
import { dattoGet, pages } from './client';
import { osFamilyFromText } from '../os-family';

type Native = Record<string, unknown>;

const text = (v: unknown): string | null => (typeof v === 'string' && v.trim() !== '' ? v : null);
const count = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) && v > 0 ? Math.floor(v) : 0);

/** The later of two vendor times (either may be absent). */
function latest(a: Date | null, b: Date | null): Date | null {
  return a && b ? (a > b ? a : b) : a ?? b;
}

/** The account's open alerts, page by page: the devices' alert flag and the incidents, read once for a sync of both. */
async function openAlertPages(ctx: SyncContext): Promise<Native[][]> {
  return readOnce(ctx, 'dattormm:/v2/account/alerts/open', async () => {
    const all: Native[][] = [];
    for await (const page of pages<Native>(ctx, '/v2/account/alerts/open', 'alerts')) all.push(page);
    return all;
  });
}

/** Device uids with an open alert, from the account's open alerts. */
async function alertingDevices(ctx: SyncContext): Promise<Set<string>> {
  const uids = new Set<string>();
  for (const page of await openAlertPages(ctx)) {
    for (const a of page) {
      const uid = text((a.alertSourceInfo as Native | undefined)?.deviceUid);
      if (uid) uids.add(uid);
    }
  }
  return uids;
}

function deviceRecord(d: Native, alerting: Set<string>): FetchedRecord<'devices'> | null {
  const uid = text(d.uid);
  if (!uid) return null; // nothing to key it by: skipped, the rest of the page goes on
  const patches = d.patchManagement as Native | undefined;
  return {
    sourceId: uid,
    native: d,
    vendorUpdatedAt: latest(parseVendorTime(d.lastSeen), parseVendorTime(d.lastAuditDate)),
    fields: {
      hostname: text(d.hostname) ?? text(d.description) ?? uid,
      // The device's site is the MSP's customer: the company the device belongs to.
      companyName: text(d.siteName),
      companySourceId: text(d.siteUid),
      os: text(d.operatingSystem),
      online: d.online === true,
      needsAttention: alerting.has(uid),
      patchesPending: count(patches?.patchesApprovedPending),
      lastContactAt: parseVendorTime(d.lastSeen),
    },
    // Filled from the open alerts, not from the device: an alert raised or resolved changes it while
    // the device's payload stays the same.
    measured: ['needsAttention'],
  };
}

async function* fetchDevices(ctx: SyncContext): AsyncGenerator<FetchedRecord<'devices'>[]> {
  const alerting = await alertingDevices(ctx);
  for await (const page of pages<Native>(ctx, '/v2/account/devices', 'devices')) {
    const mapped = page.flatMap((d) => {
      if (d.deleted === true) return []; // a deleted device left the account: as if absent
      const r = deviceRecord(d, alerting);
      return r ? [r] : [];
    });
    if (mapped.length > 0) yield mapped;
  }
}

/** Every software row of one device's audit; null when the vendor has no audit for it (not found, not a computer). */
async function deviceSoftware(ctx: SyncContext, deviceUid: string): Promise<Native[] | null> {
  const rows: Native[] = [];
  try {
    for await (const page of pages<Native>(ctx, `/v2/audit/device/${encodeURIComponent(deviceUid)}/software`, 'software')) rows.push(...page);
  } catch (err) {
    // A device deleted since the device list (404) or one the audit does not cover (400): no rows,
    // the sync goes on. Anything else (throttling past retries, 5xx) fails the sync as for any read.
    if (err instanceof VendorHttpError && (err.status === 404 || err.status === 400)) return null;
    throw err;
  }
  return rows;
}

/** A device's audit rows (no id of their own: software-keys.ts); the audit's Software has name and version only (OpenAPI schema Software). */
function applicationRecords(deviceUid: string, rows: Native[]): FetchedRecord<'applications'>[] {
  return softwareRecords<Native>(deviceUid, rows, (row) => ({ name: text(row.name), version: text(row.version), publisher: null, installedAt: null }));
}

async function* fetchApplications(ctx: SyncContext): AsyncGenerator<FetchedRecord<'applications'>[]> {
  const width = Math.max(1, Math.min(ctx.concurrency ?? 4, 8));
  for await (const page of pages<Native>(ctx, '/v2/account/devices', 'devices')) {
    // Only computers have a software audit (deviceClass `device`); the rest would answer 400.
    const uids = page.filter((d) => d.deleted !== true && (d.deviceClass ?? 'device') === 'device').map((d) => text(d.uid)).filter((u): u is string => u != null);
    const audits = await mapLimit(uids, width, (uid) => deviceSoftware(ctx, uid));
    const mapped = uids.flatMap((uid, i) => applicationRecords(uid, audits[i] ?? []));
    if (mapped.length > 0) yield mapped;
  }
}

function incidentRecord(a: Native): FetchedRecord<'incidents'> | null {
  const uid = text(a.alertUid);
  if (!uid) return null;
  const source = a.alertSourceInfo as Native | undefined;
  const context = a.alertContext as Native | undefined;
  const priority = text(a.priority);
  return {
    sourceId: uid,
    native: a,
    vendorUpdatedAt: parseVendorTime(a.timestamp),
    fields: {
      message: text(a.diagnostics) ?? text(context?.['@class']) ?? '',
      // Alert.priority: Critical, High, Moderate, Low, Information, Unknown (OpenAPI), lower-cased.
      severity: priority ? priority.toLowerCase() : null,
      deviceSourceId: text(source?.deviceUid),
      openedAt: parseVendorTime(a.timestamp),
    },
  };
}

async function* fetchIncidents(ctx: SyncContext): AsyncGenerator<FetchedRecord<'incidents'>[]> {
  for (const page of await openAlertPages(ctx)) {
    const mapped = page.map(incidentRecord).filter((r): r is FetchedRecord<'incidents'> => r != null);
    if (mapped.length > 0) yield mapped;
  }
}

/**
 * The families a component runs on. Datto RMM's Component has no operating-system field (OpenAPI:
 * id, uid, name, description, categoryCode, credentialsRequired, variables), and a quick job is accepted
 * for any device: the agent reports a component it cannot run as a failed job. So every family.
 */
const ANY_OS = ['linux', 'mac', 'windows'];

/** Component categories a quick job runs (monitors are attached to policies, not run as jobs). */
const RUNNABLE = new Set(['applications', 'scripts']);

async function* fetchPackages(ctx: SyncContext): AsyncGenerator<FetchedRecord<'packages'>[]> {
  for await (const page of pages<Native>(ctx, '/v2/account/components', 'components')) {
    const mapped = page.flatMap((c): FetchedRecord<'packages'>[] => {
      const uid = text(c.uid);
      const name = text(c.name);
      if (!uid || !name) return [];
      const category = text(c.categoryCode)?.toLowerCase() ?? null;
      return [{
        sourceId: uid,
        native: c,
        vendorUpdatedAt: null,
        fields: { name, description: text(c.description), operatingSystems: ANY_OS, active: category == null || RUNNABLE.has(category) },
      }];
    });
    if (mapped.length > 0) yield mapped;
  }
}

/**
 * The canonical OS family (windows, mac, linux) of a device from its `operatingSystem`, as Datto RMM
 * writes it ("Microsoft Windows 11 Pro 10.0.22631", "macOS Sonoma 14.5", "Ubuntu 22.04.4 LTS").
 */
export function deviceOsFamily(native: Record<string, unknown>): string | null {
  return osFamilyFromText(text(native.operatingSystem));
}

export const dattoRmmConnector: ReadConnector = {
  name: 'dattormm',
  kind: 'rmm',
  resources: ['devices', 'applications', 'incidents', 'packages'],
  incremental: [],
  // A token, then the smallest documented read: one site of the account.
  async probe(ctx: SyncContext): Promise<void> {
    await dattoGet(ctx, '/v2/account/sites', { max: 1 });
  },
  fetch: fetchFrom('dattormm', { devices: fetchDevices, applications: fetchApplications, incidents: fetchIncidents, packages: fetchPackages }),
};
