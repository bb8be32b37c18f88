/**
 * Connector name -> the connector: its read side, its write side (PSAs) and what it declares it can
 * do. The one place that lists the vendors; everything else asks it.
 */
import { ServiceError } from '../errors/service-error';
import type { ConnectorCapabilities, LinkedRecord, WriteCapability } from './capabilities';
import type { ReadConnector, SyncResource } from './types';
import { WRITE_CAPABILITY, type ConnectorWrites, type VendorWrites, type WriteName } from './vendor-writes';
import { autotaskCapabilities } from './autotask/capabilities';
import { autotaskConnector } from './autotask/connector';
import { autotaskWrites } from './autotask/writes';
import { connectwiseCapabilities } from './connectwise/capabilities';
import { connectwiseConnector } from './connectwise/connector';
import { connectwiseWrites } from './connectwise/writes';
import { haloPsaCapabilities } from './halopsa/capabilities';
import { haloPsaConnector } from './halopsa/connector';
import { haloPsaWrites } from './halopsa/writes';
import { ninjaOneCapabilities } from './ninjaone/capabilities';
import { ninjaOneConnector } from './ninjaone/connector';
import { ninjaOneWrites } from './ninjaone/writes';
import { dattoRmmModule } from './dattormm/module';
import { pax8Capabilities } from './pax8/capabilities';
import { pax8Connector } from './pax8/connector';
import { pax8Writes } from './pax8/writes';
import { kaseyaBmsCapabilities } from './kaseyabms/capabilities';
import { kaseyaBmsConnector } from './kaseyabms/connector';
import { kaseyaBmsWrites } from './kaseyabms/writes';

export interface ConnectorModule {
  read: ReadConnector;
  /** The vendor writes it makes, registered beside it (`<vendor>/writes.ts`); answered only where `capabilities.writes` declares them. */
  writes: ConnectorWrites;
  capabilities: ConnectorCapabilities;
}

const CONNECTORS: Record<string, ConnectorModule> = {
  connectwise: { read: connectwiseConnector, writes: connectwiseWrites, capabilities: connectwiseCapabilities },
  autotask: { read: autotaskConnector, writes: autotaskWrites, capabilities: autotaskCapabilities },
  halopsa: { read: haloPsaConnector, writes: haloPsaWrites, capabilities: haloPsaCapabilities },
  ninjaone: { read: ninjaOneConnector, writes: ninjaOneWrites, capabilities: ninjaOneCapabilities },
  dattormm: dattoRmmModule,
  pax8: { read: pax8Connector, writes: pax8Writes, capabilities: pax8Capabilities },
  kaseyabms: { read: kaseyaBmsConnector, writes: kaseyaBmsWrites, capabilities: kaseyaBmsCapabilities },
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

/** The vendor's own name of its product, for a person (a page); the connector's name when it has none. */
export function connectorTitle(name: string): string {
  return isConnectorName(name) ? capabilitiesOf(name).connect.title : name;
}

/** The expected refusal of a write a connector does not make (501 `not_supported` when thrown). */
export interface WriteNotSupported {
  refused: 'not_supported';
  connector: string;
  write: WriteName;
  /** The capability the connector does not declare. */
  capability: WriteCapability;
  message: string;
}

/**
 * The write `name` as `connector` registered it, or the typed refusal: a write is answered only where the
 * connector's capabilities declare its capability (and the connector registered it).
 */
export function lookupWrite<K extends WriteName>(connector: string, name: K): { write: VendorWrites[K] } | WriteNotSupported {
  const capability = WRITE_CAPABILITY[name];
  const m = connectorModule(connector);
  const write = m.writes[name] as VendorWrites[K] | undefined;
  if (write && m.capabilities.writes.includes(capability)) return { write };
  return { refused: 'not_supported', connector, write: name, capability, message: `The ${connector} connector does not make the ${name} write (it does not declare ${capability}).` };
}

/** The write `name` of `connector`; its refusal thrown as 501 `not_supported`. */
export function vendorWrite<K extends WriteName>(connector: string, name: K): VendorWrites[K] {
  const found = lookupWrite(connector, name);
  if ('refused' in found) throw ServiceError.notSupported(found.message);
  return found.write;
}

/** Whether `connector` declares `capability` (a feature's own question, such as charge.approve). */
export function declares(connector: string, capability: WriteCapability): boolean {
  return capabilitiesOf(connector).writes.includes(capability);
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
export function recordUrl(connector: string, baseUrl: string | URL | null, record: LinkedRecord, id: string): string | null {
  let base: URL;
  if (baseUrl === null) return null;
  try { base = typeof baseUrl === 'string' ? new URL(baseUrl) : baseUrl; } catch { return null; }
  return capabilitiesOf(connector).recordUrl?.(base, record, id) ?? null;
}
