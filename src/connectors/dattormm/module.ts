/** The Datto RMM connector as the registry lists it: read side, deploy writer, capabilities. */
import type { ConnectorModule } from '../registry';
import { dattoRmmCapabilities } from './capabilities';
import { dattoRmmConnector } from './connector';
import { dattoRmmWriter } from './writer';

export const dattoRmmModule: ConnectorModule = { read: dattoRmmConnector, write: null, deviceWrite: dattoRmmWriter, capabilities: dattoRmmCapabilities };
