/**
 * A feature plugs into the service in one place: its REST routes, graph resolvers, the graph
 * operations its routes run (validated at start), and `install`, which wires its job handlers and
 * sync listeners before the queue starts. `mount` adds non-REST HTTP endpoints (MCP).
 */
import type { Express } from 'express';
import type { GraphExecutor } from './graphql/executor';
import type { RouteDef } from './rest/route';
import type { Services } from './services';

export interface FeatureModule {
  name: string;
  routes?: RouteDef[];
  // eslint-disable-next-line @typescript-eslint/no-unsafe-function-type
  resolvers?: Function[];
  documents?: string[];
  install?(services: Services): void;
  mount?(app: Express, services: Services, graph: GraphExecutor): void;
}
