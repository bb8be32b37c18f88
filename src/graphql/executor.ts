/**
 * Runs graph operations in-process for REST and MCP: each document is parsed and validated once,
 * then executed with the caller in the context. A ServiceError thrown in a resolver comes back out
 * as itself so the boundary maps it to the documented error.
 */
import { execute, GraphQLError, parse, validate, type DocumentNode, type GraphQLSchema } from 'graphql';
import { ServiceError } from '../errors/service-error';
import type { Services } from '../services';
import type { Caller } from '../tenants/caller';
import type { GraphContext } from './context';

export class GraphExecutor {
  private readonly documents = new Map<string, DocumentNode>();

  constructor(private readonly schema: GraphQLSchema, private readonly services: Services) {}

  /** Parses and validates a document once; throws at start-up if an operation does not fit the schema. */
  prepare(source: string): DocumentNode {
    let doc = this.documents.get(source);
    if (doc) return doc;
    doc = parse(source);
    const errors = validate(this.schema, doc);
    if (errors.length) throw new Error(`invalid operation: ${errors.map((e) => e.message).join('; ')}\n${source}`);
    this.documents.set(source, doc);
    return doc;
  }

  async run<T = Record<string, unknown>>(source: string, variables: Record<string, unknown>, caller: Caller): Promise<T> {
    const document = this.prepare(source);
    const contextValue: GraphContext = { caller, services: this.services };
    const result = await execute({ schema: this.schema, document, variableValues: variables, contextValue });
    if (result.errors?.length) throw unwrap(result.errors[0]);
    return result.data as T;
  }
}

export function unwrap(error: GraphQLError): Error {
  let e: unknown = error;
  while (e instanceof GraphQLError && e.originalError) e = e.originalError;
  if (e instanceof ServiceError) return e;
  if (e instanceof GraphQLError) {
    // Variables that do not fit the schema: a client error, not a crash.
    if (/Variable "\$|Expected value of type|Int cannot represent/.test(e.message)) {
      return new ServiceError('request_invalid', e.message);
    }
    if (e.extensions?.code === 'UNAUTHORIZED' || /Access denied/.test(e.message)) {
      return new ServiceError('unauthenticated', 'This operation needs the admin token.');
    }
  }
  return e instanceof Error ? e : new Error(String(e));
}
