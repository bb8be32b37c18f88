/** The Datto RMM connector as the registry lists it: read side, the writes it registers, capabilities. */
import { dattoRmmCapabilities } from './capabilities';
import { dattoRmmConnector } from './connector';
import { dattoRmmWrites } from './writes';

export const dattoRmmModule = { read: dattoRmmConnector, writes: dattoRmmWrites, capabilities: dattoRmmCapabilities };
