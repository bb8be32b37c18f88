import type { FeatureModule } from '../feature';

export const webhooksFeature: FeatureModule = { name: 'webhooks' };
