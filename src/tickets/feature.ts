import type { FeatureModule } from '../feature';

export const ticketsFeature: FeatureModule = { name: 'tickets' };
