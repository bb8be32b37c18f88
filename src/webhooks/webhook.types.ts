/** Graph types of the webhook operations (REST answers are these, field for field). */
import { Field, ID, Int, ObjectType } from 'type-graphql';

@ObjectType({ description: 'A registered webhook. The secret is shown here once and never again.' })
export class RegisteredWebhook {
  @Field(() => ID) id!: string;
  @Field() url!: string;
  @Field({ description: 'whsec_<base64>: the Standard Webhooks signing secret. Keep it; it is not shown again.' }) secret!: string;
  @Field() created_at!: string;
  @Field() enabled!: boolean;
  @Field(() => [String], { description: 'Event kinds this webhook receives under your current grants.' }) kinds!: string[];
}

@ObjectType()
export class WebhookDeliveryCounts {
  @Field(() => Int) delivered!: number;
  @Field(() => Int, { description: 'Ended without delivery: gave up, refused address, receiver gone.' }) failed!: number;
  @Field(() => Int, { description: 'Not yet delivered, retries still to come.' }) pending!: number;
}

@ObjectType()
export class WebhookInfo {
  @Field(() => ID) id!: string;
  @Field() url!: string;
  @Field() enabled!: boolean;
  @Field(() => String, { nullable: true }) disabled_reason!: string | null;
  @Field() created_at!: string;
  @Field(() => WebhookDeliveryCounts) deliveries!: WebhookDeliveryCounts;
}

@ObjectType()
export class WebhookList {
  @Field(() => [WebhookInfo]) webhooks!: WebhookInfo[];
  @Field() sandbox!: boolean;
}

@ObjectType()
export class WebhookDeliveryView {
  @Field(() => ID) id!: string;
  @Field(() => ID) event_id!: string;
  @Field({ description: 'pending, delivered, failed or gave_up' }) status!: string;
  @Field(() => Int) attempts!: number;
  @Field(() => Int, { nullable: true }) last_status_code!: number | null;
  @Field(() => String, { nullable: true }) last_error!: string | null;
  @Field(() => String, { nullable: true }) delivered_at!: string | null;
  @Field() created_at!: string;
  @Field() updated_at!: string;
}

@ObjectType()
export class WebhookDeliveryList {
  @Field(() => [WebhookDeliveryView]) deliveries!: WebhookDeliveryView[];
  @Field(() => String, { nullable: true }) next_cursor!: string | null;
}
