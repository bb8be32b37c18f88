/**
 * The ConnectWise rules around writes on projects that the sandbox enforces on top of
 * projects-and-time.ts: the project must exist (404 NotFound), a baseline project takes no new work,
 * (a project ticket's `initialDescription` is kept as its first note by projects-and-time.ts).
 *
 * Baseline refusal: ConnectWise keeps real templates in /project/projectTemplates, where no note or
 * ticket can be posted at all; a project of type "Baseline" is an MSP's frozen plan. Whether
 * ConnectWise itself refuses work on it is unconfirmed, so the sandbox refuses it the way ConnectWise
 * refuses an object (400 InvalidObject with a field error): never kinder than the vendor.
 */
import { FieldErrors, notFound } from './errors';
import { addProjectNote, createProjectTicket } from './projects-and-time';
import { resolveRef } from './references';
import type { CwRecord, Instance } from './store';
import type { Change } from './tickets';

const BASELINE_TYPE = 'baseline';

function isBaseline(project: CwRecord | undefined): boolean {
  return typeof project?.type?.name === 'string' && project.type.name.trim().toLowerCase() === BASELINE_TYPE;
}

function refuseBaseline(project: CwRecord, resource: string): void {
  const errors = new FieldErrors(resource);
  errors.invalid('project', `Project ${project.id} is a baseline project and cannot take new notes or tickets.`);
  errors.throwIfAny();
}

/** POST /project/projects/{id}/notes. */
export function addCheckedProjectNote(inst: Instance, projectId: number, body: unknown, change: Change): CwRecord {
  const project = inst.table('projects').get(projectId);
  if (!project) throw notFound('Project', projectId);
  if (isBaseline(project)) refuseBaseline(project, 'projectNote');
  return addProjectNote(inst, projectId, body, change);
}

/** POST /project/tickets. */
export function createCheckedProjectTicket(inst: Instance, body: unknown, change: Change): CwRecord {
  const b = (body && typeof body === 'object' && !Array.isArray(body) ? body : {}) as CwRecord;
  const phase = b.phase != null ? resolveRef(inst, 'project_phases', b.phase) : undefined;
  const project = phase ? inst.table('projects').get(phase.projectId) : undefined;
  if (project && isBaseline(project)) refuseBaseline(project, 'ticket');
  // createProjectTicket keeps initialDescription as the ticket's first note (projects-and-time.ts).
  return createProjectTicket(inst, body, change);
}
