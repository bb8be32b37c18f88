/** The audit log as the API answers it. */
import { z } from '../shared/request';

const json = z.record(z.string(), z.unknown());

export const AuditList = z.object({
  entries: z.array(z.object({
    id: z.string(), action: z.string(), outcome: z.string(), connection_id: z.string().nullable(),
    subject_ref: z.string().nullable(), detail: json, created_at: z.string(),
  }).strict()),
  sandbox: z.boolean(),
  next_cursor: z.string().nullable(),
}).strict().openapi('AuditList');

