/** The ISV's console at /app: mounted with the graph, as the MSP's console is (its pages run operations by name). */
import type { FeatureModule } from '../operations/feature-module';
import { isvConsoleRouter } from './router';
import type { IsvConsoleServices } from './shell';

export const isvConsolePagesFeature: FeatureModule<IsvConsoleServices> = {
  name: 'isv-console-pages',
  mount(app, services) {
    app.use(isvConsoleRouter(services, services.peopleSessions));
  },
};
