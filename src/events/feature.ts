import type { FeatureModule } from '../feature';

export const eventsFeature: FeatureModule = { name: 'events' };
