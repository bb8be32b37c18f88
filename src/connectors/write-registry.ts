/** Connector name -> write connector. Only the PSA connectors write tickets, notes and time. */
import type { ConnectorName } from '../../entities/tenancy';
import { ServiceError } from '../errors/service-error';
import type { WriteConnector } from './write-types';
import { autotaskWriter } from './autotask/writer';
import { connectwiseWriter } from './connectwise/writer';
import { haloPsaWriter } from './halopsa/writer';

export const WRITE_CONNECTORS: Partial<Record<ConnectorName, WriteConnector>> = {
  connectwise: connectwiseWriter,
  autotask: autotaskWriter,
  halopsa: haloPsaWriter,
};

/** The write side of a connector; 501 `not_supported` for a connector that has none (RMM, distributor). */
export function writeConnector(name: ConnectorName): WriteConnector {
  const c = WRITE_CONNECTORS[name];
  if (!c) throw ServiceError.notSupported(`The ${name} connector does not write tickets.`);
  return c;
}
