/**
 * Every feature module, in mount order; their operations are the whole API (REST, GraphQL, MCP). Each
 * module is checked here against the service graph: the graph must offer every service a feature
 * declares, with its type (FeatureModule's `S`), and that is all the feature's handlers are given.
 */
import type { FeatureModule } from './operations/feature-module';
import type { Services } from './services';
import type { Operation } from './operations/operation';
import { askFeature } from './ask/feature';
import { auditFeature } from './audit/feature';
import { companiesFeature } from './companies/feature';
import { identityFeature } from './identity/feature';
import { devicesFeature } from './devices/feature';
import { eventsFeature } from './events/feature';
import { mcpFeature } from './mcp/feature';
import { projectsFeature } from './projects/feature';
import { recordsFeature } from './records/feature';
import { sandboxFeature } from './sandbox/feature';
import { syncFeature } from './sync/feature';
import { tenantsFeature } from './tenants/feature';
import { ticketsFeature } from './tickets/feature';
import { webhooksFeature } from './webhooks/feature';
import { agreementsFeature } from './agreements/feature';
import { billingFeature } from './billing/feature';
import { connectFeature } from './connect/feature';
import { consoleFeature, consolePagesFeature } from './console/feature';
import { isvConsolePagesFeature } from './isv-console/feature';
import { peopleFeature, peoplePagesFeature } from './people/feature';
import { ssoFeature } from './people/sso/feature';
import { requestsFeature } from './requests/feature';

export const FEATURES: FeatureModule<Services>[] = [
  tenantsFeature, recordsFeature, auditFeature, syncFeature, sandboxFeature, ticketsFeature, eventsFeature, webhooksFeature,
  identityFeature, companiesFeature, projectsFeature, devicesFeature, askFeature, mcpFeature,
  agreementsFeature, billingFeature, connectFeature, ssoFeature, consoleFeature, consolePagesFeature, peopleFeature, peoplePagesFeature,
  isvConsolePagesFeature, requestsFeature,
];

/** Every feature's reactions subscribed, then its `install`, in feature order (the order reactions run in). */
export function installFeatures(services: Services): void {
  for (const f of FEATURES) {
    for (const subscription of f.reactions?.(services) ?? []) services.changes.subscribe(subscription);
    f.install?.(services);
  }
}

let operations: Operation[] | undefined;

/** Every operation; names are unique (GraphQL fields, OpenAPI operationIds, MCP tools). */
export function allOperations(): Operation[] {
  if (operations) return operations;
  const all = FEATURES.flatMap((f) => f.operations ?? []);
  const seen = new Set<string>();
  for (const op of all) {
    if (seen.has(op.name)) throw new Error(`two operations are named ${op.name}`);
    seen.add(op.name);
  }
  operations = all;
  return all;
}
