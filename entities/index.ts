import { ApiKey, Connection, Grant, Isv, SyncState, Tenant } from './tenancy';
import {
  AgreementLineRecord, AgreementRecord, BoardRecord, CompanyRecord, ContactRecord, DeviceRecord,
  IncidentRecord, InstalledApplicationRecord, MemberRecord, PackageRecord, PriorityRecord, ProductRecord, ProjectRecord, StatusRecord,
  SubscriptionRecord, TicketRecord,
} from './records';
import { AuditEntry, EventRecord, IdempotencyRecord, RoutingConfig, TicketLink, Webhook, WebhookDelivery } from './activity';
import { IdentityMatch, IdentitySkip, ImportEndpoint, IsvCustomer } from './identity';
import { QuarantinedRecord } from './quarantine';
import { ConnectSession } from './connect';
import { ConnectionHealthRow } from './connection-health';
import { ConsoleLink, ConsoleSession } from './console';
import { SsoAttempt, SsoConfig, SsoDomain } from './sso';
import { AgreementLineMapping, BillingVersion, ChargeRecord, CostResolution, IsvCostRow, PartnerMinimumRow } from './billing';

export * from './tenancy';
export * from './records';
export * from './activity';
export * from './identity';
export * from './quarantine';
export * from './billing';
export * from './connect';
export * from './connection-health';
export * from './console';
export * from './sso';

export const ALL_ENTITIES = [
  Isv, ApiKey, Tenant, Connection, Grant, SyncState,
  TicketRecord, CompanyRecord, ContactRecord, MemberRecord, BoardRecord, StatusRecord, PriorityRecord,
  DeviceRecord, InstalledApplicationRecord, IncidentRecord, AgreementRecord, AgreementLineRecord, ProjectRecord,
  ProductRecord, SubscriptionRecord, PackageRecord,
  EventRecord, AuditEntry, IdempotencyRecord, TicketLink, RoutingConfig, Webhook, WebhookDelivery,
  IsvCustomer, IdentityMatch, IdentitySkip, ImportEndpoint,
  QuarantinedRecord,
  IsvCostRow, PartnerMinimumRow, AgreementLineMapping, ChargeRecord, CostResolution, BillingVersion,
  ConnectSession, ConnectionHealthRow,
  ConsoleLink, ConsoleSession,
  SsoConfig, SsoDomain, SsoAttempt,
];
