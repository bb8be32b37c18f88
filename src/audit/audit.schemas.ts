/** The audit log as the API answers it. */
import { listEnvelope } from '../shared/paging';
import { z } from '../shared/request';

const json = z.record(z.string(), z.unknown());

export const AuditEntry = z.object({
  id: z.string(), action: z.string(), outcome: z.string(), connection_id: z.string().nullable(),
  subject_ref: z.string().nullable(), detail: json, created_at: z.string(),
}).strict().openapi('AuditEntry');

export const AuditList = listEnvelope('AuditList', 'audit', AuditEntry);

