/**
 * Synthetic Datto RMM records for `grow` (the limits test, benchmarks): cheap, native shape, ids
 * continuing after the account's highest.
 */
import { randomUUID } from 'node:crypto';
import type { DattoAccount } from './store';
import type { DattoDevice, DattoResource, DattoSite } from './types';

const OS = ['Microsoft Windows 11 Pro 10.0.22631', 'Microsoft Windows 11 Pro 10.0.22631', 'Microsoft Windows Server 2022 Standard 10.0.20348', 'macOS Sonoma 14.5', 'Ubuntu 22.04.4 LTS'];
const SITES_PER_GROWTH = 20;

function site(id: number, accountUid: string): DattoSite {
  return { id, uid: randomUUID(), accountUid, name: `Synthetic Customer ${id}`, description: 'Generated for load tests', onDemand: false, splashtopAutoInstall: false };
}

function device(id: number, s: DattoSite, nowIso: string): DattoDevice {
  const hostname = `DSYN-${String(id).padStart(6, '0')}`;
  return {
    id, uid: randomUUID(), siteId: s.id, siteUid: s.uid, siteName: s.name,
    deviceType: { category: 'Desktop', type: 'Desktop' }, hostname, intIpAddress: `10.${(id >> 16) & 255}.${(id >> 8) & 255}.${id & 255}`,
    operatingSystem: OS[id % OS.length], a64Bit: true, rebootRequired: false, online: id % 7 !== 0, suspended: false, deleted: false,
    lastSeen: nowIso, lastAuditDate: nowIso, creationDate: '2026-01-15T00:00:00Z', deviceClass: 'device',
    patchManagement: { patchStatus: 'ApprovedPending', patchesApprovedPending: id % 3, patchesNotApproved: 0, patchesInstalled: 40 },
  };
}

export function growDattoAccount(acct: DattoAccount, resource: DattoResource, count: number, nowIso: string): void {
  switch (resource) {
    case 'sites': {
      for (let i = 0; i < count; i++) acct.sites.push(site(acct.nextId(acct.sites, 0), acct.uid));
      return;
    }
    case 'devices': {
      if (acct.sites.length === 0) growDattoAccount(acct, 'sites', Math.max(1, Math.min(SITES_PER_GROWTH, Math.ceil(count / 50))), nowIso);
      let id = acct.nextId(acct.devices, 100_000);
      for (let i = 0; i < count; i++, id++) acct.devices.push(device(id, acct.sites[id % acct.sites.length], nowIso));
      return;
    }
    case 'software': {
      if (acct.devices.length === 0) growDattoAccount(acct, 'devices', 1, nowIso);
      for (let i = 0; i < count; i++) {
        const d = acct.devices[i % acct.devices.length];
        const rows = acct.software.get(d.uid) ?? [];
        rows.push({ name: `Synthetic Application ${rows.length}`, version: `1.${i % 10}.${i % 100}` });
        acct.software.set(d.uid, rows);
      }
      return;
    }
    case 'alerts': {
      if (acct.devices.length === 0) growDattoAccount(acct, 'devices', 1, nowIso);
      for (let i = 0; i < count; i++) {
        const d = acct.devices[i % acct.devices.length];
        acct.alerts.push({
          alertUid: randomUUID(), priority: 'Moderate', diagnostics: `Synthetic condition ${i} triggered`, resolved: false, muted: false, timestamp: nowIso,
          alertContext: { '@class': 'perf_resource_usage_ctx', type: 'CPU', percentage: 97 },
          alertSourceInfo: { deviceUid: d.uid, deviceName: d.hostname, siteUid: d.siteUid, siteName: d.siteName },
        });
      }
      return;
    }
    case 'components': {
      let id = acct.nextId(acct.components, 0);
      for (let i = 0; i < count; i++, id++) acct.components.push({ id, uid: randomUUID(), name: `Synthetic Component ${id}`, categoryCode: 'scripts', credentialsRequired: false, variables: [] });
      return;
    }
  }
}
