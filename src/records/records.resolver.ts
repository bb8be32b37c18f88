import { Args, Ctx, Query, Resolver } from 'type-graphql';
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
  const p = await ctx.services.records.list(access, name, query);
  return {
    [RECORD_LISTS[name].itemsField]: p.items,
    sandbox: p.sandbox,
    last_synced_at: p.lastSyncedAt,
    next_cursor: p.nextCursor,
    served_from: p.servedFrom,
  };
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
}
