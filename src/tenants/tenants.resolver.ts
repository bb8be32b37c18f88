import { Arg, Args, Authorized, Ctx, ID, Mutation, Query, Resolver } from 'type-graphql';
import { ApiKey, Isv } from '../../entities';
import type { GraphContext } from '../graphql/context';
import { TenantArgs } from '../records/list-args';
import { toRfc3339 } from '../records/record-lists';
import {
  ApiKeyInfo, ConnectionInfo, ConnectionList, CreateConnectionInput, GrantInfo, IssuedApiKey, IsvInfo,
  TenantInfo, TenantListPayload, TenantStatus,
} from './tenant.types';
import { connectionInfos, tenantStatus } from './tenant-status';

const keyInfo = (k: ApiKey): ApiKeyInfo => ({
  id: k.id, isv_id: k.isvId, prefix: k.prefix, label: k.label, created_at: toRfc3339(k.createdAt)!, revoked_at: toRfc3339(k.revokedAt),
});
const isvInfo = (i: Isv): IsvInfo => ({ id: i.id, name: i.name, supported_targets: i.supportedTargets, routing_recommendation: i.routingRecommendation });

@Resolver()
export class TenantsResolver {
  @Query(() => TenantListPayload, { description: 'Tenants visible to the caller.' })
  async tenants(@Ctx() { caller, services }: GraphContext): Promise<TenantListPayload> {
    const tenants = await services.access.visibleTenants(caller);
    const out: TenantInfo[] = [];
    for (const t of tenants) {
      const access = await services.access.tenantAccess(caller, t.id);
      out.push({
        id: t.id, name: t.name, slug: t.slug, sandbox: t.sandbox,
        connections: access.connections.map((c) => ({ id: c.id, kind: c.kind, connector: c.connector })),
      });
    }
    return { tenants: out };
  }

  @Query(() => ConnectionList)
  async connections(@Args() { tenant_id }: TenantArgs, @Ctx() { caller, services }: GraphContext): Promise<ConnectionList> {
    const access = await services.access.tenantAccess(caller, tenant_id);
    return { connections: await connectionInfos(services.ds, access), sandbox: access.tenant.sandbox };
  }

  @Query(() => TenantStatus)
  async tenant_status(@Args() { tenant_id }: TenantArgs, @Ctx() { caller, services }: GraphContext): Promise<TenantStatus> {
    return tenantStatus(services.ds, await services.access.tenantAccess(caller, tenant_id));
  }

  // Internal tooling below: admin token only.

  @Authorized('admin') @Query(() => [IsvInfo])
  async isvs(@Ctx() { services }: GraphContext): Promise<IsvInfo[]> {
    return (await services.ds.getRepository(Isv).find({ order: { createdAt: 'ASC' } })).map(isvInfo);
  }

  @Authorized('admin') @Query(() => [ApiKeyInfo])
  async api_keys(@Arg('isv_id', () => ID) isvId: string, @Ctx() { services }: GraphContext): Promise<ApiKeyInfo[]> {
    return (await services.ds.getRepository(ApiKey).find({ where: { isvId }, order: { createdAt: 'ASC' } })).map(keyInfo);
  }

  @Authorized('admin') @Mutation(() => IsvInfo)
  async create_isv(
    @Arg('name') name: string,
    @Arg('supported_targets', () => [String], { nullable: true }) targets: string[] | null,
    @Ctx() { services }: GraphContext,
  ): Promise<IsvInfo> {
    return isvInfo(await services.admin.createIsv(name, targets ?? undefined));
  }

  @Authorized('admin') @Mutation(() => IssuedApiKey)
  async issue_api_key(
    @Arg('isv_id', () => ID) isvId: string,
    @Arg('label', () => String, { nullable: true }) label: string | null,
    @Ctx() { services }: GraphContext,
  ): Promise<IssuedApiKey> {
    const { row, key } = await services.admin.issueApiKey(isvId, label ?? '');
    return { ...keyInfo(row), key };
  }

  @Authorized('admin') @Mutation(() => Boolean)
  revoke_api_key(@Arg('id', () => ID) id: string, @Ctx() { services }: GraphContext): Promise<boolean> {
    return services.admin.revokeApiKey(id);
  }

  @Authorized('admin') @Mutation(() => TenantInfo)
  async create_tenant(
    @Arg('name') name: string,
    @Arg('slug') slug: string,
    @Arg('sandbox', { defaultValue: false }) sandbox: boolean,
    @Ctx() { services }: GraphContext,
  ): Promise<TenantInfo> {
    const t = await services.admin.createTenant(name, slug, sandbox);
    return { id: t.id, name: t.name, slug: t.slug, sandbox: t.sandbox, connections: [] };
  }

  @Authorized('admin') @Mutation(() => ConnectionInfo)
  async create_connection(@Arg('input') input: CreateConnectionInput, @Ctx() { caller, services }: GraphContext): Promise<ConnectionInfo> {
    const c = await services.admin.createConnection({
      tenantId: input.tenant_id, kind: input.kind, connector: input.connector, baseUrl: input.base_url,
      credentials: input.credentials, statusMapping: input.status_mapping,
    });
    await services.syncJobs.schedule(c);
    const access = await services.access.tenantAccess(caller, c.tenantId);
    return (await connectionInfos(services.ds, access)).find((x) => x.id === c.id)!;
  }

  @Authorized('admin') @Mutation(() => GrantInfo)
  async set_grant(
    @Arg('isv_id', () => ID) isvId: string,
    @Arg('connection_id', () => ID) connectionId: string,
    @Arg('keys', () => [String]) keys: string[],
    @Ctx() { services }: GraphContext,
  ): Promise<GrantInfo> {
    const g = await services.admin.setGrant(isvId, connectionId, keys);
    return { id: g.id, isv_id: g.isvId, connection_id: g.connectionId, tenant_id: g.tenantId, keys: g.keys };
  }
}
