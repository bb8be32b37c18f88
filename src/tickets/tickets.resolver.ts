import { GraphQLJSONObject } from 'graphql-scalars';
import { Arg, Args, Ctx, Field, ID, Mutation, ObjectType, Query, Resolver } from 'type-graphql';
import type { ZodType } from 'zod';
import type { GraphContext } from '../graphql/context';
import { ServiceError } from '../errors/service-error';
import { TenantArgs } from '../records/list-args';
import {
  CreateTicketBody, CreateTimeEntryBody, ResolveFindingBody, RouteFindingBody, RoutingConfigBody, TicketWriteBody,
} from '../rest/write-schemas';

/** The graph checks write bodies with the same schemas as REST (MCP and internal callers come here directly). */
function parse<T>(schema: ZodType<T>, body: unknown): T {
  const r = schema.safeParse(body);
  if (!r.success) {
    const first = r.error.issues[0];
    throw new ServiceError('request_invalid', `body.${first.path.join('.') || '(root)'}: ${first.message}`, {
      details: { issues: r.error.issues.map((i) => ({ path: i.path.map(String), message: i.message })) },
    });
  }
  return r.data;
}

@ObjectType()
export class RoutingConfigView {
  @Field(() => GraphQLJSONObject) recommended!: Record<string, string | null>;
  @Field(() => GraphQLJSONObject) overrides!: Record<string, string>;
  @Field(() => GraphQLJSONObject) effective!: Record<string, string>;
  @Field(() => [String]) supported_targets!: string[];
}

/** Writes: each returns the answer body (preview or commit) as JSON; errors are ServiceErrors. */
@Resolver()
export class TicketWritesResolver {
  @Mutation(() => GraphQLJSONObject, { description: 'Ticket create (CreateTicketBody). REST only for ISVs; not offered over MCP.' })
  async create_ticket(@Args() { tenant_id }: TenantArgs, @Arg('body', () => GraphQLJSONObject) body: unknown, @Ctx() { caller, services }: GraphContext) {
    return (await services.tickets.createTicket(caller, tenant_id, parse(CreateTicketBody, body))).body;
  }

  @Mutation(() => GraphQLJSONObject, { description: 'Update, note, close or reopen a linked ticket.' })
  async write_ticket(@Args() { tenant_id }: TenantArgs, @Arg('body', () => GraphQLJSONObject) body: unknown, @Ctx() { caller, services }: GraphContext) {
    return (await services.tickets.writeTicket(caller, tenant_id, parse(TicketWriteBody, body))).body;
  }

  @Mutation(() => GraphQLJSONObject, { description: 'Hours on a linked ticket (CreateTimeEntryBody).' })
  async create_time_entry(@Args() { tenant_id }: TenantArgs, @Arg('body', () => GraphQLJSONObject) body: unknown, @Ctx() { caller, services }: GraphContext) {
    return (await services.tickets.createTimeEntry(caller, tenant_id, parse(CreateTimeEntryBody, body))).body;
  }

  @Mutation(() => GraphQLJSONObject, { description: 'Route a finding per the routing configuration (RouteFindingBody).' })
  async route_finding(@Args() { tenant_id }: TenantArgs, @Arg('body', () => GraphQLJSONObject) body: unknown, @Ctx() { caller, services }: GraphContext) {
    return (await services.findings.route(caller, tenant_id, parse(RouteFindingBody, body))).body;
  }

  @Mutation(() => GraphQLJSONObject, { description: 'Record that a finding was fixed; auto-closes only with psa.ticket.auto_close.' })
  async resolve_finding(
    @Args() { tenant_id }: TenantArgs,
    @Arg('finding_id', () => ID) findingId: string,
    @Arg('body', () => GraphQLJSONObject) body: unknown,
    @Ctx() { caller, services }: GraphContext,
  ) {
    return (await services.findings.resolve(caller, tenant_id, findingId, parse(ResolveFindingBody, body))).body;
  }

  @Query(() => RoutingConfigView)
  routing(@Args() { tenant_id }: TenantArgs, @Ctx() { caller, services }: GraphContext) {
    return services.findings.routing(caller, tenant_id);
  }

  @Mutation(() => RoutingConfigView)
  set_routing(@Args() { tenant_id }: TenantArgs, @Arg('body', () => GraphQLJSONObject) body: unknown, @Ctx() { caller, services }: GraphContext) {
    return services.findings.setRouting(caller, tenant_id, parse(RoutingConfigBody, body));
  }
}
