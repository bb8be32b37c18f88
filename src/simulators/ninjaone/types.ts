/**
 * NinjaOne v2 native record shapes, as the public API returns them (OpenAPI "NinjaOne Public API
 * 2.0": Organization, Device, DeviceApplication, DeviceOSPatch, Alert). Times are epoch seconds as
 * numbers (doubles). Only the fields the simulator itself reads are typed; the rest pass through.
 */

export interface NinjaOrganization {
  id: number;
  name: string;
  description?: string;
  nodeApprovalMode?: 'AUTOMATIC' | 'MANUAL' | 'REJECT';
  [field: string]: unknown;
}

/** A device as /v2/devices-detailed and /v2/device/{id} return it (superset of /v2/devices). */
export interface NinjaDevice {
  id: number;
  organizationId: number;
  locationId?: number;
  nodeClass: string;
  approvalStatus?: 'PENDING' | 'APPROVED';
  offline: boolean;
  displayName?: string;
  systemName?: string;
  dnsName?: string;
  created?: number;
  lastContact?: number;
  /** Last data submission timestamp (epoch seconds). */
  lastUpdate?: number;
  os?: { name?: string; [field: string]: unknown };
  [field: string]: unknown;
}

/** A /v2/queries/software row. NinjaOne gives these rows no id of their own. */
export interface NinjaSoftware {
  deviceId: number;
  name: string;
  publisher?: string;
  version?: string;
  /** ISO date-time string. */
  installDate?: string;
  /** When the data was collected/updated (epoch seconds). */
  timestamp?: number;
  [field: string]: unknown;
}

export type NinjaPatchStatus = 'MANUAL' | 'APPROVED' | 'FAILED' | 'REJECTED';

/** A /v2/queries/os-patches row: a patch with no successful installation yet. */
export interface NinjaOsPatch {
  id: string;
  deviceId: number;
  name?: string;
  status: NinjaPatchStatus;
  severity?: string;
  type?: string;
  kbNumber?: string;
  timestamp?: number;
  [field: string]: unknown;
}

/** A /v2/alerts row: an active (triggered) condition. */
export interface NinjaAlert {
  uid: string;
  deviceId?: number;
  message: string;
  createTime: number;
  updateTime?: number;
  sourceType?: string;
  [field: string]: unknown;
}

/**
 * A /v2/automation/scripts row (AutomationScript): the catalogue a deploy picks from.
 * `operatingSystems` holds WINDOWS, MAC, LINUX.
 */
export interface NinjaScript {
  id: number;
  name: string;
  description?: string;
  active?: boolean;
  language?: string;
  architecture?: string[];
  operatingSystems?: string[];
  createdOn?: number;
  updatedOn?: number;
  [field: string]: unknown;
}

/** A /v2/device/{id}/activities row (Activity). Times are epoch seconds. */
export interface NinjaActivity {
  id: number;
  activityTime: number;
  deviceId: number;
  activityType: string;
  statusCode: string;
  status?: string;
  activityResult?: string;
  sourceName?: string;
  subject?: string;
  message?: string;
  seriesUid?: string;
  [field: string]: unknown;
}

export const NINJA_RESOURCES = ['organizations', 'devices', 'software', 'os-patches', 'alerts', 'scripts'] as const;
export type NinjaResource = (typeof NINJA_RESOURCES)[number];

export interface NinjaRecordByResource {
  organizations: NinjaOrganization;
  devices: NinjaDevice;
  software: NinjaSoftware;
  'os-patches': NinjaOsPatch;
  alerts: NinjaAlert;
  scripts: NinjaScript;
}

/** The software rows' composite key (NinjaOne has no row id): `${deviceId}:${name}:${version}`. */
export function softwareKey(row: Pick<NinjaSoftware, 'deviceId' | 'name' | 'version'>): string {
  return `${row.deviceId}:${row.name}:${row.version ?? ''}`;
}
