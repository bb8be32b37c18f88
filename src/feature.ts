/**
 * A feature plugs into the service in one place: its operations (each declared once; REST, GraphQL
 * and MCP come from them), `install`, which wires its sync listeners and subscribers before the queue
 * starts, and `mount` for HTTP endpoints that are not operations (the MCP transport). Job processors
 * are registered in one place, jobs/processors/index.ts, against the typed job registry.
 */
import type { Express } from 'express';
import type { Operation } from './operations/operation';
import type { Services } from './services';

export interface FeatureModule {
  name: string;
  operations?: Operation[];
  install?(services: Services): void;
  /** `operations`: every operation of the service (the MCP adapter offers four of them). */
  mount?(app: Express, services: Services, operations: Operation[]): void;
}
