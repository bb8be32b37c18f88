/** The events feed in the graph: `events(tenant_id, kind, cursor, limit)`; REST runs the same query. */
import { GraphQLJSONObject } from 'graphql-scalars';
import { Args, ArgsType, Ctx, Field, ID, Int, ObjectType, Query, Resolver } from 'type-graphql';
import { ServiceError } from '../errors/service-error';
import type { GraphContext } from '../graphql/context';
import { toRfc3339 } from '../records/record-lists';
import { decodeEventCursor, encodeEventCursor } from './event-cursor';
import { isKindFilter, KIND_FILTERS } from './event-kinds';
import type { EventRow } from './events.service';

@ObjectType('Event', { description: 'A watch event (ticket.*, device.*, company.*), a health row (kind health) or sandbox_reset. No payload: re-read the list for the record.' })
export class EventView {
  @Field(() => ID, { nullable: true }) id!: string | null;
  @Field(() => ID, { nullable: true }) event_id!: string | null;
  @Field(() => ID, { nullable: true }) tenant_id!: string | null;
  @Field(() => ID, { nullable: true }) connection_id!: string | null;
  @Field(() => String, { nullable: true }) kind!: string | null;
  @Field(() => String, { nullable: true, description: 'Health rows: attention_needed or resolved.' }) type!: string | null;
  @Field(() => String, { nullable: true }) occurred_at!: string | null;
  @Field(() => String, { nullable: true }) actor!: string | null;
  @Field(() => String, { nullable: true }) summary!: string | null;
  @Field(() => String, { nullable: true }) subject_ref!: string | null;
  @Field(() => String, { nullable: true }) incident_id!: string | null;
  @Field(() => String, { nullable: true }) canonical_ticket_id!: string | null;
  @Field(() => String, { nullable: true }) canonical_device_id!: string | null;
  @Field(() => String, { nullable: true }) canonical_company_id!: string | null;
  @Field(() => String, { nullable: true }) previous_status!: string | null;
  @Field(() => String, { nullable: true }) new_status!: string | null;
  @Field(() => String, { nullable: true }) vendor!: string | null;
  @Field(() => String, { nullable: true }) vendor_id!: string | null;
  @Field(() => String, { nullable: true }) vendor_url!: string | null;
  @Field(() => GraphQLJSONObject) detail!: Record<string, unknown>;
}

@ObjectType()
export class EventList {
  @Field(() => [EventView]) events!: EventView[];
  @Field() sandbox!: boolean;
  @Field(() => String, { nullable: true }) next_cursor!: string | null;
}

@ArgsType()
export class EventsArgs {
  @Field(() => ID) tenant_id!: string;
  @Field(() => String, { nullable: true, description: 'An exact kind, a family (ticket, device, company, health), sandbox_reset, or null for every granted kind.' })
  kind?: string | null;
  @Field(() => String, { nullable: true, description: 'next_cursor of the previous page' }) cursor?: string | null;
  @Field(() => Int, { defaultValue: 100, description: '1 to 500' }) limit!: number;
}

/** A stored event as the documented Event (`id` and `event_id` are both our id). */
export function toEvent(r: EventRow): EventView {
  return {
    id: r.id, event_id: r.id, tenant_id: r.tenant_id, connection_id: r.connection_id, kind: r.kind, type: r.type,
    occurred_at: toRfc3339(r.occurred_at), actor: r.actor, summary: r.summary, subject_ref: r.subject_ref,
    incident_id: r.incident_id, canonical_ticket_id: r.canonical_ticket_id, canonical_device_id: r.canonical_device_id,
    canonical_company_id: r.canonical_company_id, previous_status: r.previous_status, new_status: r.new_status,
    vendor: r.vendor, vendor_id: r.vendor_id, vendor_url: r.vendor_url, detail: r.detail ?? {},
  };
}

@Resolver()
export class EventsResolver {
  @Query(() => EventList, { description: 'Change events and health rows of the tenant, oldest first.' })
  async events(@Args() args: EventsArgs, @Ctx() { caller, services }: GraphContext): Promise<EventList> {
    // The graph checks its own arguments: REST validates first, but the graph is a surface of its own.
    if (!Number.isInteger(args.limit) || args.limit < 1 || args.limit > 500) {
      throw new ServiceError('request_invalid', 'limit must be an integer from 1 to 500.');
    }
    if (args.kind != null && !isKindFilter(args.kind)) {
      throw new ServiceError('request_invalid', `kind must be one of ${KIND_FILTERS.join(', ')}.`);
    }
    let after: string | null = null;
    if (args.cursor) {
      after = decodeEventCursor(args.cursor);
      if (!after) throw new ServiceError('request_invalid', 'cursor is not a next_cursor this service issued.');
    }
    const access = await services.access.tenantAccess(caller, args.tenant_id);
    const page = await services.events.page(access, { kind: args.kind ?? null, after, limit: args.limit });
    return {
      events: page.events.map(toEvent),
      sandbox: access.tenant.sandbox,
      next_cursor: page.next ? encodeEventCursor(page.next) : null,
    };
  }
}
