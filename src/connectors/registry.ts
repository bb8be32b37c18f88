/**
 * Connector name -> the connector: its read side, its write side (PSAs) and what it declares it can
 * do. The one place that lists the vendors; everything else asks it.
 */
import { ServiceError } from '../errors/service-error';
import type { ConnectorCapabilities, LinkedRecord } from './capabilities';
import type { ReadConnector, SyncResource } from './types';
import type { WriteConnector } from './write-types';
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
import { pax8Capabilities } from './pax8/capabilities';
import { pax8Connector } from './pax8/connector';

export interface ConnectorModule {
  read: ReadConnector;
  write: WriteConnector | null;
  /** The RMM write side (device deploy), where the connector declares `device.deploy`. */
  deviceWrite?: DeviceWriter;
  capabilities: ConnectorCapabilities;
}

const CONNECTORS: Record<string, ConnectorModule> = {
  connectwise: { read: connectwiseConnector, write: connectwiseWriter, capabilities: connectwiseCapabilities },
  autotask: { read: autotaskConnector, write: autotaskWriter, capabilities: autotaskCapabilities },
  halopsa: { read: haloPsaConnector, write: haloPsaWriter, capabilities: haloPsaCapabilities },
  ninjaone: { read: ninjaOneConnector, write: null, deviceWrite: ninjaOneWriter, capabilities: ninjaOneCapabilities },
  pax8: { read: pax8Connector, write: null, capabilities: pax8Capabilities },
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

/** The device write side of an RMM connector; 501 `not_supported` for one that has none. */
export function deviceWriter(name: string): DeviceWriter {
  const c = connectorModule(name).deviceWrite;
  if (!c || !capabilitiesOf(name).writes.includes('device.deploy')) throw ServiceError.notSupported(`The ${name} connector does not deploy to devices.`);
  return c;
}

export function connectorsSyncing(resource: SyncResource): string[] {
  return CONNECTOR_NAMES.filter((n) => CONNECTORS[n].read.resources.includes(resource));
}

/** Every credential name any connector takes (the typed credentials input of create_connection). */
export function credentialNames(): string[] {
  return [...new Set(CONNECTOR_NAMES.flatMap((n) => CONNECTORS[n].capabilities.credentials))].sort();
}

/** A deep link to a record in the vendor's UI, or null when the vendor has no stable one. */
export function recordUrl(connector: string, baseUrl: string, record: LinkedRecord, id: string): string | null {
  let base: URL;
  try { base = new URL(baseUrl); } catch { return null; }
  return capabilitiesOf(connector).recordUrl?.(base, record, id) ?? null;
}
