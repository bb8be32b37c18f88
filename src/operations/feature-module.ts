/**
 * A feature plugs into the service in one place: its operations (each declared once; REST, GraphQL
 * and MCP come from them), `reactions`, its reactions to committed changes (a written page, a sync's end,
 * committed events: src/shared/committed-changes.ts), `install`, which does what else must be done before
 * the queue starts, and `mount` for HTTP endpoints that are not operations (the MCP transport). Job processors
 * are registered in one place, jobs/processors/index.ts, against the typed job registry.
 *
 * `S` is the services the feature uses, an interface declared in its folder (`TicketsServices`, ...):
 * its handlers, `install` and `mount` are given those and see nothing else of the graph. src/features.ts
 * lists every feature against the graph, so a feature asking for a service the graph lacks, or of
 * another type, does not compile (docs/architecture.md, Adding things).
 */
import type { Express } from 'express';
import type { Operation } from './operation';
import type { Subscription } from '../shared/committed-changes';

export interface FeatureModule<S = unknown> {
  name: string;
  operations?: Operation<any, any, any, any, S>[];
  install?: (services: S) => void;
  /**
   * The feature's reactions to changes other features commit (src/shared/committed-changes.ts): who listens
   * to which change, declared here and nowhere else; subscribed in feature order before `install`.
   */
  reactions?: (services: S) => Subscription[];
  /** `operations`: every operation of the service (the MCP adapter offers four of them). */
  mount?: (app: Express, services: S, operations: Operation[]) => void;
}
