/** Datto RMM records in the API's own shapes (Datto RMM OpenAPI, build 235: Site, Device, Software, Alert, Component, Job, ActivityLog). */
export interface DattoSite {
  id: number;
  uid: string;
  accountUid: string;
  name: string;
  description?: string;
  notes?: string;
  onDemand?: boolean;
  splashtopAutoInstall?: boolean;
  devicesStatus?: { numberOfDevices: number; numberOfOnlineDevices: number; numberOfOfflineDevices: number };
  portalUrl?: string;
  [k: string]: unknown;
}

export interface DattoDevice {
  id: number;
  uid: string;
  siteId: number;
  siteUid: string;
  siteName: string;
  deviceType?: { category: string; type: string };
  hostname: string;
  intIpAddress?: string;
  operatingSystem?: string;
  lastLoggedInUser?: string;
  domain?: string;
  description?: string;
  a64Bit?: boolean;
  rebootRequired?: boolean;
  online: boolean;
  suspended?: boolean;
  deleted?: boolean;
  lastSeen?: string;
  lastReboot?: string;
  lastAuditDate?: string;
  creationDate?: string;
  deviceClass: 'device' | 'printer' | 'esxihost' | 'rmmnetworkdevice' | 'unknown';
  portalUrl?: string;
  antivirus?: { antivirusProduct: string; antivirusStatus: string };
  patchManagement?: { patchStatus: string; patchesApprovedPending: number; patchesNotApproved: number; patchesInstalled: number };
  [k: string]: unknown;
}

export interface DattoSoftware { name: string; version?: string }
/** fixtures/<tenant>/dattormm/software.json: each device's audit, keyed by the device's uid. */
export interface DattoDeviceSoftware { deviceUid: string; software: DattoSoftware[] }

export interface DattoAlert {
  alertUid: string;
  priority: 'Critical' | 'High' | 'Moderate' | 'Low' | 'Information' | 'Unknown';
  diagnostics?: string;
  resolved: boolean;
  resolvedBy?: string;
  resolvedOn?: string;
  muted?: boolean;
  ticketNumber?: string;
  timestamp: string;
  alertContext?: Record<string, unknown>;
  alertSourceInfo: { deviceUid: string; deviceName: string; siteUid: string; siteName: string };
  [k: string]: unknown;
}

export interface DattoComponent {
  id: number;
  uid: string;
  name: string;
  description?: string;
  categoryCode: string;
  credentialsRequired?: boolean;
  variables?: { name: string; defaultVal: string; type: string; direction: boolean; description: string; variablesIdx: number }[];
}

export interface DattoJob { id: number; uid: string; name: string; dateCreated: string; status: 'active' | 'completed' }

export interface DattoActivity {
  id: string;
  entity: 'DEVICE' | 'USER';
  category: string;
  action: string;
  /** Seconds since the epoch, with a fraction (OpenAPI: "seconds.nanoseconds"). */
  date: number;
  site: { id: number; name: string };
  deviceId: number;
  hostname: string;
  user?: { id: number; userName: string; firstName: string; lastName: string };
  details: string;
  hasStdOut: boolean;
  hasStdErr: boolean;
}

/** A quick job the simulator received, with the device and component it runs: what tests count. */
export interface QuickJobRun { job: DattoJob; deviceUid: string; componentUid: string; done: boolean }

export const DATTO_RESOURCES = ['sites', 'devices', 'software', 'alerts', 'components'] as const;
export type DattoResource = (typeof DATTO_RESOURCES)[number];
