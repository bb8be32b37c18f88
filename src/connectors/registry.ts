/**
 * Connector name -> the connector: its read side, its write side (PSAs) and what it declares it can
 * do. The one place that lists the vendors; everything else asks it.
 */
import { ServiceError } from '../errors/service-error';
import type { ConnectorCapabilities, LinkedRecord } from './capabilities';
import type { ReadConnector, SyncResource } from './types';
import type { WriteConnector } from './write-types';
import type { DistributorCompanyWriter } from './distributor-write-types';
import type { AgreementLineWriter } from './agreement-write-types';
import type { ProjectWriter } from './project-write-types';
import { autotaskProjectWriter } from './autotask/project-writer';
import { connectwiseProjectWriter } from './connectwise/project-writer';
import { haloPsaProjectWriter } from './halopsa/project-writer';
import { autotaskAgreementWriter } from './autotask/agreement-writer';
import { connectwiseAgreementWriter } from './connectwise/agreement-writer';
import { haloPsaAgreementWriter } from './halopsa/agreement-writer';
import type { DeviceWriter } from './device-write-types';
import { autotaskCapabilities } from './autotask/capabilities';
import { autotaskConnector } from './autotask/connector';
import { autotaskWriter } from './autotask/writer';
import { connectwiseCapabilities } from './connectwise/capabilities';
import { connectwiseConnector } from './connectwise/connector';
import { connectwiseWriter } from './connectwise/writer';
import { haloPsaCapabilities } from './halopsa/capabilities';
import { haloPsaConnector } from './halopsa/connector';
import { haloPsaWriter } from './halopsa/writer';
import { ninjaOneCapabilities } from './ninjaone/capabilities';
import { ninjaOneConnector } from './ninjaone/connector';
import { ninjaOneWriter } from './ninjaone/writer';
import { dattoRmmModule } from './dattormm/module';
import { pax8Capabilities } from './pax8/capabilities';
import { pax8Connector } from './pax8/connector';
import { pax8CompanyWriter } from './pax8/company-writer';

export interface ConnectorModule {
  read: ReadConnector;
  write: WriteConnector | null;
  /** Company create at a distributor. */
  companies?: DistributorCompanyWriter;
  /** Line items on existing agreements (rule 8); whether commits go live is `capabilities.commits`. */
  agreements?: AgreementLineWriter;
  /** Notes and items on existing projects (rule 9). */
  projects?: ProjectWriter;
  /** The RMM write side (device deploy), where the connector declares `device.deploy`. */
  deviceWrite?: DeviceWriter;
  capabilities: ConnectorCapabilities;
}

const CONNECTORS: Record<string, ConnectorModule> = {
  connectwise: { read: connectwiseConnector, write: connectwiseWriter, agreements: connectwiseAgreementWriter, projects: connectwiseProjectWriter, capabilities: connectwiseCapabilities },
  autotask: { read: autotaskConnector, write: autotaskWriter, agreements: autotaskAgreementWriter, projects: autotaskProjectWriter, capabilities: autotaskCapabilities },
  halopsa: { read: haloPsaConnector, write: haloPsaWriter, agreements: haloPsaAgreementWriter, projects: haloPsaProjectWriter, capabilities: haloPsaCapabilities },
  ninjaone: { read: ninjaOneConnector, write: null, deviceWrite: ninjaOneWriter, capabilities: ninjaOneCapabilities },
  dattormm: dattoRmmModule,
  pax8: { read: pax8Connector, write: null, companies: pax8CompanyWriter, capabilities: pax8Capabilities },
};

export const CONNECTOR_NAMES: readonly string[] = Object.keys(CONNECTORS);

export function isConnectorName(name: string): boolean {
  return Object.hasOwn(CONNECTORS, name);
}

export function connectorModule(name: string): ConnectorModule {
  if (!isConnectorName(name)) throw new Error(`unknown connector ${name}`);
  return CONNECTORS[name];
}

export function readConnector(name: string): ReadConnector {
  return connectorModule(name).read;
}

export function capabilitiesOf(name: string): ConnectorCapabilities {
  return connectorModule(name).capabilities;
}

/** The write side of a connector; 501 `not_supported` for a connector that has none (RMM, distributor). */
export function writeConnector(name: string): WriteConnector {
  const c = connectorModule(name).write;
  if (!c) throw ServiceError.notSupported(`The ${name} connector does not write tickets.`);
  return c;
}

/** The company writer of a distributor connector; 501 `not_supported` for one that has none. */
export function distributorWriter(name: string): DistributorCompanyWriter {
  const w = connectorModule(name).companies;
  if (!w) throw ServiceError.notSupported(`The ${name} connector does not create companies.`);
  return w;
}

/** The agreement-line writer of a connector; 501 `not_supported` for one that has none. */
export function agreementLineWriter(name: string): AgreementLineWriter {
  const w = connectorModule(name).agreements;
  if (!w) throw ServiceError.notSupported(`The ${name} connector does not write agreement lines.`);
  return w;
}

/** The project writer of a connector; 501 `not_supported` for one that has none. */
export function projectWriter(name: string): ProjectWriter {
  const w = connectorModule(name).projects;
  if (!w) throw ServiceError.notSupported(`The ${name} connector does not write to projects.`);
  return w;
}

/** The device write side of an RMM connector; 501 `not_supported` for one that has none. */
export function deviceWriter(name: string): DeviceWriter {
  const c = connectorModule(name).deviceWrite;
  if (!c || !capabilitiesOf(name).writes.includes('device.deploy')) throw ServiceError.notSupported(`The ${name} connector does not deploy to devices.`);
  return c;
}

export function connectorsSyncing(resource: SyncResource): string[] {
  return CONNECTOR_NAMES.filter((n) => CONNECTORS[n].read.resources.includes(resource));
}

/** Connectors that serve `resource` as a list (some sync a resource only for their writes). */
export function connectorsListing(resource: SyncResource): string[] {
  return connectorsSyncing(resource).filter((n) => !CONNECTORS[n].capabilities.unlisted?.includes(resource));
}

/** Every credential name any connector takes (the typed credentials input of create_connection). */
export function credentialNames(): string[] {
  return [...new Set(CONNECTOR_NAMES.flatMap((n) => [...CONNECTORS[n].capabilities.credentials, ...(CONNECTORS[n].capabilities.optionalCredentials ?? [])]))].sort();
}

/** A deep link to a record in the vendor's UI, or null when the vendor has no stable one. */
export function recordUrl(connector: string, baseUrl: string, record: LinkedRecord, id: string): string | null {
  let base: URL;
  try { base = new URL(baseUrl); } catch { return null; }
  return capabilitiesOf(connector).recordUrl?.(base, record, id) ?? null;
}
