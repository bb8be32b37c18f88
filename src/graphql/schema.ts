/** The domain graph: one type-graphql schema that REST, internal GraphQL and MCP all execute. */
import { lexicographicSortSchema, printSchema, type GraphQLSchema } from 'graphql';
import { buildSchemaSync, type AuthChecker } from 'type-graphql';
import { AuditResolver } from '../audit/audit.resolver';
import { RecordsResolver } from '../records/records.resolver';
import { SyncResolver } from '../sync/sync.resolver';
import { TenantsResolver } from '../tenants/tenants.resolver';
import type { GraphContext } from './context';
import { FEATURES } from '../features';

const authChecker: AuthChecker<GraphContext> = ({ context }, roles) =>
  roles.includes('admin') ? context.caller.kind === 'admin' : true;

export const RESOLVERS = [TenantsResolver, RecordsResolver, AuditResolver, SyncResolver] as const;

let built: GraphQLSchema | undefined;

export function domainSchema(): GraphQLSchema {
  built ??= buildSchemaSync({
    resolvers: [...RESOLVERS, ...FEATURES.flatMap((f) => f.resolvers ?? [])] as unknown as [Function, ...Function[]],
    authChecker,
    authMode: 'error',
    validate: false,
    emitSchemaFile: false,
  });
  return built;
}

/** The SDL we check in under schema/ (sorted so that it is stable). */
export function domainSdl(): string {
  return printSchema(lexicographicSortSchema(domainSchema())) + '\n';
}
