import { GraphQLJSONObject } from 'graphql-scalars';
import { Field, ID, InputType, Int, ObjectType } from 'type-graphql';

@ObjectType()
export class ConnectionSummary {
  @Field(() => ID) id!: string;
  @Field() kind!: string;
  @Field() connector!: string;
}

@ObjectType()
export class TenantInfo {
  @Field(() => ID) id!: string;
  @Field() name!: string;
  @Field() slug!: string;
  @Field() sandbox!: boolean;
  @Field(() => [ConnectionSummary]) connections!: ConnectionSummary[];
}

@ObjectType()
export class TenantListPayload {
  @Field(() => [TenantInfo]) tenants!: TenantInfo[];
}

@ObjectType()
export class ResourceSyncState {
  @Field() resource!: string;
  @Field({ description: 'never, running, ok or failed' }) last_status!: string;
  @Field(() => String, { nullable: true }) last_synced_at!: string | null;
  @Field(() => String, { nullable: true }) last_attempt_at!: string | null;
  @Field(() => String, { nullable: true }) last_mode!: string | null;
  @Field(() => String, { nullable: true }) last_error!: string | null;
  @Field(() => Int) records!: number;
}

@ObjectType()
export class ConnectionInfo {
  @Field(() => ID) id!: string;
  @Field() kind!: string;
  @Field() connector!: string;
  @Field() base_url!: string;
  @Field({ description: 'The limited PSA connector (interface document rule 14).' }) limited!: boolean;
  @Field(() => [String], { description: "The caller's grant keys on this connection." }) grants!: string[];
  @Field(() => String, { nullable: true }) last_synced_at!: string | null;
  @Field({ description: 'ok, failed, running or never' }) sync_status!: string;
  @Field(() => [ResourceSyncState]) resources!: ResourceSyncState[];
}

@ObjectType()
export class ConnectionList {
  @Field(() => [ConnectionInfo]) connections!: ConnectionInfo[];
  @Field() sandbox!: boolean;
}

@ObjectType()
export class TenantStatus {
  @Field(() => ID) tenant_id!: string;
  @Field() name!: string;
  @Field() sandbox!: boolean;
  @Field({ description: 'Every connection synced and none failing.' }) healthy!: boolean;
  @Field(() => String, { nullable: true }) last_synced_at!: string | null;
  @Field(() => [ConnectionInfo]) connections!: ConnectionInfo[];
}

@ObjectType()
export class IsvInfo {
  @Field(() => ID) id!: string;
  @Field() name!: string;
  @Field(() => [String]) supported_targets!: string[];
  @Field(() => GraphQLJSONObject) routing_recommendation!: Record<string, string>;
}

@ObjectType()
export class ApiKeyInfo {
  @Field(() => ID) id!: string;
  @Field(() => ID) isv_id!: string;
  @Field() prefix!: string;
  @Field() label!: string;
  @Field() created_at!: string;
  @Field(() => String, { nullable: true }) revoked_at!: string | null;
}

@ObjectType({ description: 'The key itself is shown here once and never again.' })
export class IssuedApiKey extends ApiKeyInfo {
  @Field() key!: string;
}

@ObjectType()
export class GrantInfo {
  @Field(() => ID) id!: string;
  @Field(() => ID) isv_id!: string;
  @Field(() => ID) connection_id!: string;
  @Field(() => ID) tenant_id!: string;
  @Field(() => [String]) keys!: string[];
}

@InputType()
export class CreateConnectionInput {
  @Field(() => ID) tenant_id!: string;
  @Field() kind!: string;
  @Field() connector!: string;
  @Field() base_url!: string;
  @Field(() => GraphQLJSONObject, { description: 'Vendor credentials; encrypted at rest, never returned.' }) credentials!: Record<string, string>;
  @Field(() => GraphQLJSONObject, { nullable: true, description: 'Vendor status name -> canonical status.' }) status_mapping?: Record<string, string>;
}
