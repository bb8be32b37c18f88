/**
 * Synthetic NinjaOne records for `grow` (benchmarks, paging tests): cheap to make, native shape,
 * ids continuing after the instance's highest.
 */
import { randomUUID } from 'node:crypto';
import type { NinjaInstance } from './store';
import type { NinjaAlert, NinjaDevice, NinjaOrganization, NinjaOsPatch, NinjaResource, NinjaSoftware } from './types';

const CLASSES = ['WINDOWS_WORKSTATION', 'WINDOWS_WORKSTATION', 'WINDOWS_WORKSTATION', 'WINDOWS_SERVER', 'MAC', 'LINUX_SERVER'];
const OS_NAME: Record<string, string> = {
  WINDOWS_WORKSTATION: 'Windows 11 Professional Edition',
  WINDOWS_SERVER: 'Windows Server 2022 Standard Edition',
  MAC: 'macOS Sequoia',
  LINUX_SERVER: 'Ubuntu 24.04.3 LTS',
};

function syntheticOrganization(id: number): NinjaOrganization {
  return { id, name: `Synthetic Customer ${id}`, description: 'Generated for load tests', nodeApprovalMode: 'AUTOMATIC', tags: [], fields: {} };
}

function syntheticDevice(id: number, organizationId: number, nowSec: number): NinjaDevice {
  const nodeClass = CLASSES[id % CLASSES.length];
  const systemName = `SYN-${String(id).padStart(6, '0')}`;
  return {
    id,
    uid: randomUUID(),
    organizationId,
    locationId: organizationId * 10 + 1,
    nodeClass,
    nodeRoleId: 1,
    approvalStatus: 'APPROVED',
    offline: id % 7 === 0,
    displayName: systemName,
    systemName,
    dnsName: `${systemName.toLowerCase()}.synthetic.local`,
    created: nowSec - 86_400 * 90,
    lastContact: nowSec - (id % 7 === 0 ? 86_400 : 60),
    lastUpdate: nowSec,
    tags: [],
    fields: {},
    os: { manufacturer: nodeClass === 'MAC' ? 'Apple Inc.' : 'Microsoft Corporation', name: OS_NAME[nodeClass], architecture: '64-bit' },
  };
}

/** At least one device to hang rows on. */
function ensureDevices(inst: NinjaInstance, nowSec: number): readonly NinjaDevice[] {
  if (inst.devices.length === 0) growNinjaInstance(inst, 'devices', 1, nowSec);
  return inst.devices;
}

export function growNinjaInstance(inst: NinjaInstance, resource: NinjaResource, count: number, nowSec: number): void {
  switch (resource) {
    case 'organizations': {
      let id = inst.nextOrganizationId();
      for (let i = 0; i < count; i++) inst.insert('organizations', syntheticOrganization(id++));
      return;
    }
    case 'devices': {
      if (inst.organizations.length === 0) inst.insert('organizations', syntheticOrganization(inst.nextOrganizationId()));
      const orgs = inst.organizations;
      let id = inst.nextDeviceId();
      for (let i = 0; i < count; i++, id++) inst.insert('devices', syntheticDevice(id, orgs[id % orgs.length].id, nowSec));
      return;
    }
    case 'software': {
      const devices = ensureDevices(inst, nowSec);
      const start = inst.software.length;
      for (let i = 0; i < count; i++) {
        const n = start + i;
        const row: NinjaSoftware = {
          name: `Synthetic Application ${n}`,
          publisher: 'Synthetic Software Ltd',
          version: `1.${n % 10}.${n % 100}`,
          installDate: '2026-01-15T00:00:00.000Z',
          size: 1_048_576,
          deviceId: devices[n % devices.length].id,
          timestamp: nowSec,
        };
        inst.insert('software', row);
      }
      return;
    }
    case 'os-patches': {
      const devices = ensureDevices(inst, nowSec);
      const statuses = ['MANUAL', 'APPROVED', 'FAILED', 'REJECTED'] as const;
      const start = inst.osPatches.length;
      for (let i = 0; i < count; i++) {
        const n = start + i;
        const row: NinjaOsPatch = {
          id: randomUUID(),
          name: `Synthetic Cumulative Update (KB${9_000_000 + n})`,
          severity: 'IMPORTANT',
          status: statuses[n % statuses.length],
          type: 'SECURITY_UPDATES',
          deviceId: devices[n % devices.length].id,
          timestamp: nowSec,
          kbNumber: `KB${9_000_000 + n}`,
        };
        inst.insert('os-patches', row);
      }
      return;
    }
    case 'alerts': {
      const devices = ensureDevices(inst, nowSec);
      const start = inst.alerts.length;
      for (let i = 0; i < count; i++) {
        const n = start + i;
        const row: NinjaAlert = {
          uid: randomUUID(),
          deviceId: devices[n % devices.length].id,
          message: `Synthetic condition ${n} triggered`,
          createTime: nowSec,
          updateTime: nowSec,
          sourceType: 'CONDITION_AGENT_CPU',
          sourceName: 'Synthetic condition',
          subject: 'CPU',
          data: {},
        };
        inst.insert('alerts', row);
      }
      return;
    }
  }
}
