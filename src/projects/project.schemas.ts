/**
 * Project writes (interface document rule 9, docs/architecture.md, Projects): a note or an item on an existing
 * project, and the header create the service refuses. A commit (dry_run false) must carry its
 * idempotency_key (body or Idempotency-Key header); without it, 422 HTTPValidationError.
 */
import { commitResult, keyedWrite, previewResult } from '../operations/write-results';
import { pathId, TenantPath, text, z } from '../shared/request';



export const ProjectPath = TenantPath.extend({
  project_source_id: pathId('project_source_id', 'The project\'s id in the PSA (`source_id` from GET /tenants/{tenant_id}/projects).'),
}).strict();

export const ProjectNoteBody = keyedWrite('ProjectNoteBody', {
  text: text(100_000).min(1),
});

export const ProjectItemBody = keyedWrite('ProjectItemBody', {
  summary: text(1000).min(1),
  description: text(100_000).nullable().optional(),
  phase: text(200).min(1).nullable().optional()
    .openapi({ description: 'A phase of the project: by id or name where items are project tickets (default: its first open phase), by id where they are tasks.' }),
  company_name: text(200).min(1).nullable().optional()
    .openapi({ description: 'Optional check: must be the project\'s company; another company is 409 project_company_cannot_update.' }),
});

/** Declared so the refusal is documented; every request is answered 422 `project_header_not_supported`. */
export const CreateProjectBody = keyedWrite('CreateProjectBody', {
  name: text(200).min(1),
  company_name: text(200).min(1),
  description: text(100_000).nullable().optional(),
});

const projectId = z.string().openapi({ description: 'The project\'s id in the PSA.' });
const itemKind = z.enum(['project_ticket', 'task', 'project_note'])
  .openapi({ description: 'What the item is at the vendor: a project ticket, a task, or a note on the project (the limited PSA connector).' });

export const ProjectNotePreview = previewResult('ProjectNotePreview', { project_source_id: projectId });
export const ProjectNoteResult = commitResult('ProjectNoteResult', {
  project_source_id: projectId, connection_id: z.string(), connector: z.string(),
  note_ref: z.string().nullable(), reconciled: z.boolean(),
});

export const ProjectItemPreview = previewResult('ProjectItemPreview', { project_source_id: projectId, item_kind: itemKind });
export const ProjectItemResult = commitResult('ProjectItemResult', {
  project_source_id: projectId, connection_id: z.string(), connector: z.string(), item_kind: itemKind,
  item_ref: z.string().nullable(),
  ticket_ref: z.string().nullable().openapi({ description: 'Set when the item is a ticket (write-back and time apply to it).' }),
  reconciled: z.boolean(),
});
