import { ApiKey, Connection, Grant, Isv, SyncState, Tenant } from './tenancy';
import {
  AgreementLineRecord, AgreementRecord, BoardRecord, CompanyRecord, ContactRecord, DeviceRecord,
  IncidentRecord, InstalledApplicationRecord, MemberRecord, PackageRecord, PriorityRecord, ProjectRecord, StatusRecord,
  TicketRecord,
} from './records';
import { AuditEntry, EventRecord, IdempotencyRecord, RoutingConfig, TicketLink, Webhook, WebhookDelivery } from './activity';

export * from './tenancy';
export * from './records';
export * from './activity';

export const ALL_ENTITIES = [
  Isv, ApiKey, Tenant, Connection, Grant, SyncState,
  TicketRecord, CompanyRecord, ContactRecord, MemberRecord, BoardRecord, StatusRecord, PriorityRecord,
  DeviceRecord, InstalledApplicationRecord, IncidentRecord, AgreementRecord, AgreementLineRecord, ProjectRecord, PackageRecord,
  EventRecord, AuditEntry, IdempotencyRecord, TicketLink, RoutingConfig, Webhook, WebhookDelivery,
];
