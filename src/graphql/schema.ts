/** The domain graph: one type-graphql schema generated from every feature's operations. */
import { lexicographicSortSchema, printSchema, type GraphQLSchema } from 'graphql';
import { buildSchemaSync, type ClassType } from 'type-graphql';
import { allOperations } from '../features';
import { GraphTypeFactory, operationResolver } from './zod-graphql';

let built: GraphQLSchema | undefined;

export function domainSchema(): GraphQLSchema {
  if (built) return built;
  const types = new GraphTypeFactory();
  const resolvers = allOperations().filter((op) => op.graph !== false).map((op) => operationResolver(op, types));
  built = buildSchemaSync({
    resolvers: resolvers as [ClassType, ...ClassType[]],
    validate: false,
    emitSchemaFile: false,
  });
  return built;
}

/** The SDL we check in under schema/ (sorted so that it is stable). */
export function domainSdl(): string {
  return printSchema(lexicographicSortSchema(domainSchema())) + '\n';
}
