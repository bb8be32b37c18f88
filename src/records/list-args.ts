import { ArgsType, Field, ID, Int } from 'type-graphql';
import { ServiceError } from '../errors/service-error';
import { decodeCursor, type ListQuery } from './records.service';

@ArgsType()
export class TenantArgs {
  @Field(() => ID) tenant_id!: string;
}

@ArgsType()
export class ListArgs extends TenantArgs {
  @Field(() => Int, { defaultValue: 100, description: '1 to 500' }) limit!: number;
  @Field(() => String, { nullable: true, description: 'next_cursor of the previous page' }) cursor?: string | null;
  @Field(() => String, { nullable: true, description: 'RFC 3339; records updated at or after it' }) updated_since?: string | null;
}

/** The graph checks its own arguments too: REST validates first, but the graph is a surface of its own. */
export function toListQuery(args: ListArgs): ListQuery {
  if (!Number.isInteger(args.limit) || args.limit < 1 || args.limit > 500) {
    throw new ServiceError('request_invalid', 'limit must be an integer from 1 to 500.');
  }
  let after: string | null = null;
  if (args.cursor) {
    after = decodeCursor(args.cursor);
    if (!after) throw new ServiceError('request_invalid', 'cursor is not a next_cursor this service issued.');
  }
  let updatedSince: Date | null = null;
  if (args.updated_since) {
    updatedSince = new Date(args.updated_since);
    if (Number.isNaN(updatedSince.getTime())) throw new ServiceError('request_invalid', 'updated_since must be an RFC 3339 timestamp.');
  }
  return { limit: args.limit, after, updatedSince };
}
