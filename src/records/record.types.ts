/**
 * GraphQL types of the canonical records. Field names are the documented record fields (snake_case)
 * so that REST, MCP and the graph speak one shape and no layer renames anything.
 */
import { GraphQLJSONObject } from 'graphql-scalars';
import { Field, Float, ID, Int, ObjectType } from 'type-graphql';

@ObjectType({ description: 'Which vendor record this is; `native` is the same payload as `raw`.' })
export class VendorEnvelope {
  @Field() connector!: string;
  @Field() native_id!: string;
  @Field(() => GraphQLJSONObject) native!: Record<string, unknown>;
}

@ObjectType()
abstract class VendorRecord {
  @Field(() => GraphQLJSONObject, { description: 'The vendor payload, verbatim (read-only).' }) raw!: Record<string, unknown>;
  @Field(() => String, { nullable: true }) synced_at!: string | null;
  @Field(() => VendorEnvelope, { nullable: true }) vendor!: VendorEnvelope | null;
}

@ObjectType()
export class Ticket extends VendorRecord {
  @Field(() => ID) id!: string;
  @Field() source!: string;
  @Field() source_id!: string;
  @Field(() => ID) connection_id!: string;
  @Field() summary!: string;
  @Field(() => String, { nullable: true }) description!: string | null;
  @Field(() => String, { nullable: true, description: 'Canonical: new, in_progress, waiting, resolved, closed.' }) status!: string | null;
  @Field(() => String, { nullable: true }) native_status!: string | null;
  @Field(() => String, { nullable: true, description: 'Canonical: low, medium, high, critical.' }) priority!: string | null;
  @Field(() => String, { nullable: true }) native_priority!: string | null;
  @Field(() => String, { nullable: true, description: 'Board id from the ticket-boards list.' }) board!: string | null;
  @Field(() => String, { nullable: true }) board_name!: string | null;
  @Field(() => String, { nullable: true }) company_name!: string | null;
  @Field(() => String, { nullable: true }) company_source_id!: string | null;
  @Field(() => String, { nullable: true }) project_source_id!: string | null;
  @Field(() => String, { nullable: true }) record_type!: string | null;
  @Field({ description: 'Created through this service (in the link store).' }) linked!: boolean;
  @Field(() => String, { nullable: true }) created_at!: string | null;
  @Field(() => String, { nullable: true }) updated_at!: string | null;
  @Field(() => String, { nullable: true }) closed_at!: string | null;
}

@ObjectType()
export class Device extends VendorRecord {
  @Field(() => ID) id!: string;
  @Field() source!: string;
  @Field() source_id!: string;
  @Field() hostname!: string;
  @Field(() => String, { nullable: true }) company_name!: string | null;
  @Field(() => String, { nullable: true }) company_source_id!: string | null;
  @Field(() => String, { nullable: true }) os!: string | null;
  @Field() online!: boolean;
  @Field() needs_attention!: boolean;
  @Field(() => Int) patches_pending!: number;
  @Field(() => String, { nullable: true }) last_contact_at!: string | null;
}

@ObjectType()
export class Member extends VendorRecord {
  @Field({ description: 'The value CreateTimeEntryBody.member accepts.' }) id!: string;
  @Field() display_name!: string;
  @Field(() => Boolean, { nullable: true }) active!: boolean | null;
  @Field(() => String, { nullable: true }) email!: string | null;
  @Field() source!: string;
  @Field() source_id!: string;
  @Field(() => ID) connection_id!: string;
}

@ObjectType()
export class TicketBoard extends VendorRecord {
  @Field({ description: 'The value CreateTicketBody.board accepts.' }) id!: string;
  @Field() name!: string;
  @Field(() => Boolean, { nullable: true }) active!: boolean | null;
  @Field() source!: string;
  @Field(() => ID) connection_id!: string;
}

@ObjectType()
export class TicketStatus extends VendorRecord {
  @Field({ description: 'The value CreateTicketBody.status accepts.' }) id!: string;
  @Field() name!: string;
  @Field(() => String, { nullable: true }) board!: string | null;
  @Field() closed!: boolean;
  @Field(() => String, { nullable: true }) canonical!: string | null;
  @Field() source!: string;
  @Field(() => ID) connection_id!: string;
}

@ObjectType()
export class TicketPriority extends VendorRecord {
  @Field({ description: 'The value CreateTicketBody.priority accepts.' }) id!: string;
  @Field() name!: string;
  @Field(() => String, { nullable: true }) canonical!: string | null;
  @Field() source!: string;
  @Field(() => ID) connection_id!: string;
}

@ObjectType()
export class InstalledApplication extends VendorRecord {
  @Field(() => ID) id!: string;
  @Field() source!: string;
  @Field() source_id!: string;
  @Field() name!: string;
  @Field(() => String, { nullable: true }) publisher!: string | null;
  @Field(() => String, { nullable: true }) version!: string | null;
  @Field() device_source_id!: string;
  @Field(() => String, { nullable: true }) installed_at!: string | null;
}

@ObjectType()
export class Incident extends VendorRecord {
  @Field(() => ID) id!: string;
  @Field() source!: string;
  @Field() source_id!: string;
  @Field() message!: string;
  @Field(() => String, { nullable: true }) severity!: string | null;
  @Field(() => String, { nullable: true }) device_source_id!: string | null;
  @Field(() => String, { nullable: true }) opened_at!: string | null;
}

@ObjectType()
export class AgreementLine extends VendorRecord {
  @Field() source!: string;
  @Field() source_id!: string;
  @Field() agreement_source_id!: string;
  @Field(() => String, { nullable: true }) product_name!: string | null;
  @Field(() => String, { nullable: true }) product_source_id!: string | null;
  @Field(() => Float, { nullable: true }) quantity!: number | null;
  @Field(() => Float, { nullable: true }) unit_cost!: number | null;
  @Field(() => Float, { nullable: true }) unit_price!: number | null;
  @Field(() => String, { nullable: true }) effective_start!: string | null;
  @Field(() => String, { nullable: true }) effective_end!: string | null;
}

@ObjectType()
export class Agreement extends VendorRecord {
  @Field() source!: string;
  @Field() source_id!: string;
  @Field() name!: string;
  @Field() status!: string;
  @Field() billing_cycle!: string;
  @Field(() => String, { nullable: true }) company_name!: string | null;
  @Field(() => String, { nullable: true }) company_source_id!: string | null;
  @Field(() => String, { nullable: true }) start_date!: string | null;
  @Field(() => String, { nullable: true }) end_date!: string | null;
  @Field(() => Float, { nullable: true }) monthly_recurring_revenue!: number | null;
  @Field(() => [AgreementLine]) lines!: AgreementLine[];
}

@ObjectType()
export abstract class PageInfo {
  @Field() sandbox!: boolean;
  @Field(() => String, { nullable: true }) last_synced_at!: string | null;
  @Field(() => String, { nullable: true }) next_cursor!: string | null;
  @Field(() => String, { nullable: true }) served_from!: string | null;
}

@ObjectType() export class TicketList extends PageInfo { @Field(() => [Ticket]) tickets!: Ticket[]; }
@ObjectType() export class DeviceList extends PageInfo { @Field(() => [Device]) devices!: Device[]; }
@ObjectType() export class MemberList extends PageInfo { @Field(() => [Member]) members!: Member[]; }
@ObjectType() export class TicketBoardList extends PageInfo { @Field(() => [TicketBoard]) boards!: TicketBoard[]; }
@ObjectType() export class TicketStatusList extends PageInfo { @Field(() => [TicketStatus]) statuses!: TicketStatus[]; }
@ObjectType() export class TicketPriorityList extends PageInfo { @Field(() => [TicketPriority]) priorities!: TicketPriority[]; }
@ObjectType() export class ApplicationList extends PageInfo { @Field(() => [InstalledApplication]) applications!: InstalledApplication[]; }
@ObjectType() export class IncidentList extends PageInfo { @Field(() => [Incident]) incidents!: Incident[]; }
@ObjectType() export class AgreementList extends PageInfo { @Field(() => [Agreement]) agreements!: Agreement[]; }
