/**
 * The domain graph: one type-graphql schema generated from every feature's operations (given by the
 * composition root, src/features.ts `allOperations`, which lists the features above this surface).
 */
import { lexicographicSortSchema, printSchema, type GraphQLSchema } from 'graphql';
import { buildSchemaSync, type ClassType } from 'type-graphql';
import type { Operation } from '../operations/operation';
import { GraphTypeFactory, operationResolver } from './zod-graphql';

// One schema per list of operations: type-graphql builds a resolver class once.
const built = new WeakMap<readonly Operation[], GraphQLSchema>();

export function domainSchema(operations: readonly Operation[]): GraphQLSchema {
  const known = built.get(operations);
  if (known) return known;
  const types = new GraphTypeFactory();
  const resolvers = operations.filter((op) => op.graph !== false).map((op) => operationResolver(op, types));
  const schema = buildSchemaSync({
    resolvers: resolvers as [ClassType, ...ClassType[]],
    validate: false,
    emitSchemaFile: false,
  });
  built.set(operations, schema);
  return schema;
}

/** The SDL we check in under schema/ (sorted so that it is stable). */
export function domainSdl(operations: readonly Operation[]): string {
  return printSchema(lexicographicSortSchema(domainSchema(operations))) + '\n';
}
