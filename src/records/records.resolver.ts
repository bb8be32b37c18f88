import { Args, ArgsType, Ctx, Field, Query, Resolver } from 'type-graphql';
import { ServiceError } from '../errors/service-error';
import { envelope } from './records.service';
import type { GraphContext } from '../graphql/context';
import {
  AgreementList, ApplicationList, DeviceList, IncidentList, MemberList, TicketBoardList, TicketList,
  TicketPriorityList, TicketStatusList,
} from './record.types';
import { ListArgs, toListQuery } from './list-args';
import type { RecordListName } from './record-lists';
import { RECORD_LISTS } from './record-lists';

async function page(ctx: GraphContext, name: RecordListName, args: ListArgs) {
  const query = toListQuery(args);
  const access = await ctx.services.access.tenantAccess(ctx.caller, args.tenant_id);
  return envelope(name, await ctx.services.records.list(access, name, query));
}

@ArgsType()
class JsonListArgs extends ListArgs {
  @Field(() => String, { description: `One of: ${Object.keys(RECORD_LISTS).join(', ')}` }) list!: string;
}

/** Store-served record lists of a tenant visible to the caller. */
@Resolver()
export class RecordsResolver {
  @Query(() => TicketList) tickets(@Args() a: ListArgs, @Ctx() c: GraphContext) { return page(c, 'tickets', a); }
  @Query(() => DeviceList) devices(@Args() a: ListArgs, @Ctx() c: GraphContext) { return page(c, 'devices', a); }
  @Query(() => MemberList) members(@Args() a: ListArgs, @Ctx() c: GraphContext) { return page(c, 'members', a); }
  @Query(() => TicketBoardList) ticket_boards(@Args() a: ListArgs, @Ctx() c: GraphContext) { return page(c, 'boards', a); }
  @Query(() => TicketStatusList) ticket_statuses(@Args() a: ListArgs, @Ctx() c: GraphContext) { return page(c, 'statuses', a); }
  @Query(() => TicketPriorityList) ticket_priorities(@Args() a: ListArgs, @Ctx() c: GraphContext) { return page(c, 'priorities', a); }
  @Query(() => ApplicationList) applications(@Args() a: ListArgs, @Ctx() c: GraphContext) { return page(c, 'applications', a); }
  @Query(() => IncidentList) incidents(@Args() a: ListArgs, @Ctx() c: GraphContext) { return page(c, 'incidents', a); }
  @Query(() => AgreementList) agreements(@Args() a: ListArgs, @Ctx() c: GraphContext) { return page(c, 'agreements', a); }

  @Query(() => String, { description: 'A page of any list as the JSON text of its documented envelope (the REST read path).' })
  async list_page_json(@Args() a: JsonListArgs, @Ctx() c: GraphContext): Promise<string> {
    if (!Object.hasOwn(RECORD_LISTS, a.list)) throw new ServiceError('request_invalid', `Unknown list "${a.list}".`);
    const access = await c.services.access.tenantAccess(c.caller, a.tenant_id);
    return c.services.records.listJson(access, a.list as RecordListName, toListQuery(a));
  }
}
