import type { FeatureModule } from '../feature';

export const mcpFeature: FeatureModule = { name: 'mcp' };
