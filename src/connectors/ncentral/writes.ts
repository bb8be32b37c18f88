/** N-central makes no write: device deploy is declared unsupported, with the reason (./capabilities.ts). */
import type { ConnectorWrites } from '../vendor-writes';

export const ncentralWrites: ConnectorWrites = {};
