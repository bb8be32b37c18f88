/**
 * N-central records in the REST API's own shapes. N-central publishes no central API description (each
 * server serves its own Swagger page); the field names follow the shapes the public modules mirror
 * (npycentral's models Device, Customer, Site, ActiveIssue, DeviceAssets; docs/vendors.md).
 */
export interface NcServiceOrg {
  soId: number;
  soName: string;
  orgUnitType: 'SO';
  parentId: number;
  externalId?: string;
  [k: string]: unknown;
}

export interface NcCustomer {
  customerId: number;
  customerName: string;
  orgUnitType: 'CUSTOMER';
  parentId: number;
  soId?: number;
  externalId?: string;
  externalId2?: string;
  contactFirstName?: string;
  contactLastName?: string;
  contactEmail?: string;
  city?: string;
  country?: string | null;
  isSystem?: boolean;
  isServiceOrg?: boolean;
  [k: string]: unknown;
}

export interface NcSite {
  siteId: number;
  siteName: string;
  orgUnitType: 'SITE';
  /** The customer's org unit id. */
  parentId: number;
  externalId?: string;
  city?: string;
  [k: string]: unknown;
}

/** GET /api/devices row (npycentral model Device). There is no online flag: the agent's connectivity shows as an active issue. */
export interface NcDevice {
  deviceId: number;
  uri: string;
  remoteControlUri?: string | null;
  sourceUri?: string | null;
  longName: string;
  deviceClass: string;
  description: string;
  isProbe: boolean;
  osId: string;
  supportedOs: string;
  discoveredName: string;
  deviceClassLabel: string;
  supportedOsLabel: string;
  lastLoggedInUser: string;
  stillLoggedIn: boolean | null;
  licenseMode: string;
  orgUnitId: number;
  soId: number;
  soName: string;
  customerId: number;
  customerName: string;
  siteId: number | null;
  siteName: string | null;
  applianceId: number;
  lastApplianceCheckinTime: string | null;
  [k: string]: unknown;
}

/** GET /api/org-units/{orgUnitId}/active-issues row (npycentral model ActiveIssue). */
export interface NcActiveIssue {
  orgUnitId: number;
  deviceId: number;
  /** 3/4 warning, 5 critical, 6 failed, 7 disconnected (npycentral's reading of the states). */
  notificationState: number;
  serviceId: number;
  serviceName: string;
  serviceType: string;
  taskId: number;
  serviceItemId: number;
  _extra: { deviceName: string; transitionTime: string; customerTree: string[]; soCustomerID: number; numberOfActiveNotification: number; [k: string]: unknown };
}

export interface NcApplication { _index: number; displayname: string; publisher: string; version: string; installationdate: string | null; licensetype?: string | null; licensekey?: string | null }
export interface NcPatch { _index: number; title: string; category: string; installationresult: string; installeddate: string | null }

/**
 * fixtures/<tenant>/ncentral/assets.json: one device's asset inventory, keyed by its id; the simulator
 * answers it as GET /api/devices/{deviceId}/assets `{data: {os, device, _extra: {application, patch}}}`.
 * `scanPending`: asset discovery has not run, answered as an error message in a 200 OK.
 */
export interface NcDeviceAssets {
  deviceId: number;
  reportedos: string;
  applications: NcApplication[];
  patches: NcPatch[];
  scanPending?: boolean;
}

export const NCENTRAL_RESOURCES = ['service-orgs', 'customers', 'sites', 'devices', 'active-issues', 'assets'] as const;
export type NcResource = (typeof NCENTRAL_RESOURCES)[number];
