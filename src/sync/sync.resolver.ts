import { Arg, Args, Ctx, Field, ID, Int, Mutation, ObjectType, Resolver } from 'type-graphql';
import type { GraphContext } from '../graphql/context';
import { TenantArgs } from '../records/list-args';
import { ServiceError } from '../errors/service-error';

@ObjectType()
export class ResourceSyncReport {
  @Field() resource!: string;
  @Field() mode!: string;
  @Field(() => Int) fetched!: number;
  @Field(() => Int) created!: number;
  @Field(() => Int) updated!: number;
  @Field(() => Int) unchanged!: number;
}

@ObjectType()
export class ConnectionSyncReport {
  @Field(() => ID) connection_id!: string;
  @Field() connector!: string;
  @Field() ok!: boolean;
  @Field(() => String, { nullable: true }) error!: string | null;
  @Field(() => [ResourceSyncReport]) resources!: ResourceSyncReport[];
}

@ObjectType()
export class SyncResult {
  @Field(() => ID) tenant_id!: string;
  @Field() sandbox!: boolean;
  @Field({ description: 'Every connection synced.' }) ok!: boolean;
  @Field(() => [ConnectionSyncReport]) connections!: ConnectionSyncReport[];
}

@ObjectType()
export class SandboxResetResult {
  @Field(() => ID) tenant_id!: string;
  @Field() sandbox!: boolean;
  @Field(() => [ConnectionSyncReport]) connections!: ConnectionSyncReport[];
}

@Resolver()
export class SyncResolver {
  @Mutation(() => SyncResult, { description: 'Sync every connection of the tenant now; returns when finished.' })
  async sync_tenant(
    @Args() { tenant_id }: TenantArgs,
    @Arg('full', { defaultValue: false }) full: boolean,
    @Ctx() { caller, services }: GraphContext,
  ): Promise<SyncResult> {
    const access = await services.access.tenantAccess(caller, tenant_id);
    const connections = await services.syncJobs.syncTenantNow(access.tenant.id, { full });
    return { tenant_id: access.tenant.id, sandbox: access.tenant.sandbox, ok: connections.every((c) => c.ok), connections };
  }

  @Mutation(() => SandboxResetResult, { description: 'Re-seed a sandbox tenant from fixtures.' })
  async reset_sandbox(@Args() { tenant_id }: TenantArgs, @Ctx() { caller, services }: GraphContext): Promise<SandboxResetResult> {
    const access = await services.access.tenantAccess(caller, tenant_id);
    if (!services.sandbox) {
      throw new ServiceError('request_invalid', 'The sandbox is not enabled on this server.');
    }
    const r = await services.sandbox.reset(access.tenant.id);
    return { tenant_id: r.tenant_id, sandbox: true, connections: r.synced };
  }
}
