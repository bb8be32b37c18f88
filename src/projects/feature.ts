/**
 * Projects (docs/architecture.md, Projects): the store-served list lives with the other lists (src/records);
 * here the writes on existing projects (a note, an item) and the header create the service refuses.
 */
import type { ErrorCode } from '../errors/error-codes';
import { Grant } from '../access/caller';
import type { FeatureModule } from '../operations/feature-module';
import { headerRefusal } from '../operations/header-refusal';
import { operationsUsing, tenantOf } from '../operations/operation';
import { writeResponses, writeStatus } from '../operations/write-results';
import * as S from './project.schemas';
import type { ProjectsService } from './projects.service';

/** The services this feature's operations use, and all they see of the service graph (src/operations/feature-module.ts). */
export interface ProjectsServices {
  projects: ProjectsService;
}
const defineOperation = operationsUsing<ProjectsServices>();

const WRITE_ERRORS: ErrorCode[] = ['grant_missing', 'validation', 'idempotency_conflict', 'idempotency_in_progress', 'not_supported',
  'rate_limited', 'vendor_error', 'vendor_unavailable', 'role_required', 'project_requires_existing', 'project_not_writable',
  'project_company_cannot_update'];

const createProject = headerRefusal({
  name: 'create_project', noun: 'project', rule: 9, path: '/tenants/{tenant_id}/projects', body: S.CreateProjectBody,
  code: 'project_header_not_supported', instead: 'write notes or items on an existing project instead',
});

const addProjectNote = defineOperation({
  name: 'add_project_note', kind: 'mutation', summary: 'Add a note to an existing project (preview or commit)', tag: 'Writes', role: 'isv', grant: Grant.ProjectWrite,
  unknownPathId: 'project_requires_existing',
  description: 'A note on the project in the PSA (the limited PSA connector commits only on its fixture host). Unknown project 404 `project_requires_existing`; baseline project 409 `project_not_writable`.',
  http: { method: 'post', path: '/tenants/{tenant_id}/projects/{project_source_id}/notes', documented: false },
  path: S.ProjectPath, body: S.ProjectNoteBody,
  responses: writeResponses(S.ProjectNotePreview, S.ProjectNoteResult),
  statusOf: writeStatus,
  errors: WRITE_ERRORS,
  handle: async ({ path, body }, ctx) => ctx.services.projects.addNote(ctx.caller, tenantOf(ctx), path.project_source_id, body),
});

const addProjectItem = defineOperation({
  name: 'add_project_item', kind: 'mutation', summary: 'Add an item to an existing project (preview or commit)', tag: 'Writes', role: 'isv', grant: Grant.ProjectWrite,
  unknownPathId: 'project_requires_existing',
  description: 'A project ticket (in `phase`, by id or name, or the first open phase), a task, or on the limited PSA connector a note on the project: `item_kind` says which. Unknown project 404 `project_requires_existing`; baseline project 409 `project_not_writable`; a `company_name` other than the project\'s 409 `project_company_cannot_update`.',
  http: { method: 'post', path: '/tenants/{tenant_id}/projects/{project_source_id}/items', documented: false },
  path: S.ProjectPath, body: S.ProjectItemBody,
  responses: writeResponses(S.ProjectItemPreview, S.ProjectItemResult),
  statusOf: writeStatus,
  errors: WRITE_ERRORS,
  handle: async ({ path, body }, ctx) => ctx.services.projects.addItem(ctx.caller, tenantOf(ctx), path.project_source_id, body),
});

export const projectsFeature: FeatureModule<ProjectsServices> = { name: 'projects', operations: [createProject, addProjectNote, addProjectItem] };
