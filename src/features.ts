/** Every feature module, in mount order. */
import type { FeatureModule } from './feature';
import { eventsFeature } from './events/feature';
import { mcpFeature } from './mcp/feature';
import { ticketsFeature } from './tickets/feature';
import { webhooksFeature } from './webhooks/feature';

export const FEATURES: FeatureModule[] = [ticketsFeature, eventsFeature, webhooksFeature, mcpFeature];
