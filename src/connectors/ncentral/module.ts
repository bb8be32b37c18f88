/** The N-central connector as the registry lists it: read side, the writes it registers (none), capabilities. */
import { ncentralCapabilities } from './capabilities';
import { ncentralConnector } from './connector';
import { ncentralWrites } from './writes';

export const ncentralModule = { read: ncentralConnector, writes: ncentralWrites, capabilities: ncentralCapabilities };
