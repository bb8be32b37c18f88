import { GraphQLJSONObject } from 'graphql-scalars';
import { Args, Ctx, Field, ID, ObjectType, Query, Resolver } from 'type-graphql';
import type { GraphContext } from '../graphql/context';
import { ListArgs } from '../records/list-args';
import { toRfc3339 } from '../records/record-lists';
import { ServiceError } from '../errors/service-error';

@ObjectType()
export class AuditEntryView {
  @Field(() => ID) id!: string;
  @Field() action!: string;
  @Field() outcome!: string;
  @Field(() => String, { nullable: true }) connection_id!: string | null;
  @Field(() => String, { nullable: true }) subject_ref!: string | null;
  @Field(() => GraphQLJSONObject) detail!: Record<string, unknown>;
  @Field() created_at!: string;
}

@ObjectType()
export class AuditList {
  @Field(() => [AuditEntryView]) entries!: AuditEntryView[];
  @Field() sandbox!: boolean;
  @Field(() => String, { nullable: true }) next_cursor!: string | null;
}

@Resolver()
export class AuditResolver {
  @Query(() => AuditList, { description: 'Newest first. An ISV sees the system entries and its own.' })
  async audit(@Args() args: ListArgs, @Ctx() { caller, services }: GraphContext): Promise<AuditList> {
    if (args.limit < 1 || args.limit > 500) throw new ServiceError('request_invalid', 'limit must be an integer from 1 to 500.');
    let before: string | null = null;
    if (args.cursor) {
      before = Buffer.from(args.cursor, 'base64url').toString('utf8');
      if (!/^\d{1,18}$/.test(before)) throw new ServiceError('request_invalid', 'cursor is not a next_cursor this service issued.');
    }
    const access = await services.access.tenantAccess(caller, args.tenant_id);
    const page = await services.audit.list(access.tenant.id, args.limit, before, caller.kind === 'isv' ? caller.isvId : null);
    return {
      entries: page.items.map((e) => ({
        id: e.id, action: e.action, outcome: e.outcome, connection_id: e.connectionId, subject_ref: e.subjectRef,
        detail: e.detail, created_at: toRfc3339(e.createdAt)!,
      })),
      sandbox: access.tenant.sandbox,
      next_cursor: page.next ? Buffer.from(page.next, 'utf8').toString('base64url') : null,
    };
  }
}
