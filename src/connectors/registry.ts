/** Connector name -> read connector. The one place that knows which vendors exist. */
import type { ConnectorName } from '../../entities/tenancy';
import type { ReadConnector, SyncResource } from './types';
import { connectwiseConnector } from './connectwise/connector';
import { autotaskConnector } from './autotask/connector';
import { haloPsaConnector } from './halopsa/connector';
import { ninjaOneConnector } from './ninjaone/connector';
import { pax8Connector } from './pax8/connector';

export const READ_CONNECTORS: Record<ConnectorName, ReadConnector> = {
  connectwise: connectwiseConnector,
  autotask: autotaskConnector,
  halopsa: haloPsaConnector,
  ninjaone: ninjaOneConnector,
  pax8: pax8Connector,
};

/** The limited PSA connector of rule 14 of the interface document. */
export const LIMITED_PSA_CONNECTORS: readonly ConnectorName[] = ['halopsa'];

export function readConnector(name: ConnectorName): ReadConnector {
  const c = READ_CONNECTORS[name];
  if (!c) throw new Error(`unknown connector ${name}`);
  return c;
}

export function connectorsSyncing(resource: SyncResource): ConnectorName[] {
  return (Object.keys(READ_CONNECTORS) as ConnectorName[]).filter((n) => READ_CONNECTORS[n].resources.includes(resource));
}
