/**
 * Autotask PSA project writes (design.md section 15): project notes and tasks (the project's items),
 * on existing projects only. Child collections of Projects, as Autotask's REST API exposes them:
 * POST Projects/{id}/Notes and POST Projects/{id}/Tasks; answers `{itemId}`.
 *
 * - ProjectNotes: `projectID`, `title`, `description`, `noteType`, `publish` (the fields of the
 *   ProjectNote entity, opendns/autotask-php src/AutotaskObjects/ProjectNote.php; required like
 *   TicketNotes' — unconfirmed for REST). Our marker is a trailing `[ref:<marker>]` line of
 *   `description`, found with a ProjectNotes query (`contains`).
 * - Tasks: required `projectID`, `status`, `taskType`, `title` (opendns/autotask-php
 *   src/AutotaskObjects/Task.php, "Required"); `externalID` holds our marker (found with `eq`);
 *   `phaseID` takes a phase id when the caller names one.
 * - Picklist values (noteType, publish, task status and type) are per database (vendors.md); these are
 *   the values every database ships with and the sandbox's: Project Notes (3), All Autotask Users (1),
 *   task status New (1), task type Fixed Work (1).
 *
 * Baseline projects: Autotask marks them by `projectType` (Projects field information picklist:
 * Proposal, Template, Baseline, Archived, Client, Internal). Template and Baseline projects are plans,
 * not work, and take no notes or tasks here; mapping.ts `mapProject` sets `baseline` for both.
 */
import { fieldNamedIn, VendorValidationError, type FieldMap } from '../vendor-errors';
import type { VendorHttpError } from '../vendor-http';
import { defined, hasMarker, markerLine, quoted, vendorId, withMarker } from '../write-support';
import type { FieldProblem, VendorRequestPreview, WriteContext } from '../write-types';
import type { ProjectItemDraft, ProjectNoteDraft, ProjectWriter } from '../project-write-types';
import { AUTOTASK_PAGE_SIZE, type FilterItem, type Native } from './client';
import { autotaskErrorMessages, isAutotaskValidationError } from './errors';

const NOTE_TITLE_MAX = 250;
const NOTE_DESCRIPTION_MAX = 32000;
const TASK_TITLE_MAX = 255;
const TASK_DESCRIPTION_MAX = 8000;
const EXTERNAL_ID_MAX = 50;

const NOTE_TYPE_PROJECT_NOTES = 3;
const PUBLISH_ALL = 1;
const TASK_STATUS_NEW = 1;
const TASK_TYPE_FIXED_WORK = 1;

const NOTE_FIELDS: FieldMap = { description: 'text', title: 'text', projectid: 'project_source_id', project: 'project_source_id' };
const TASK_FIELDS: FieldMap = {
  title: 'summary', description: 'description', phaseid: 'phase', phase: 'phase', projectid: 'project_source_id',
  project: 'project_source_id', externalid: 'idempotency_key',
};

type Body = Record<string, unknown>;

const notesPath = (projectRef: string) => `/Projects/${projectRef}/Notes`;
const tasksPath = (projectRef: string) => `/Projects/${projectRef}/Tasks`;

/** The note's title (Autotask requires one): its first line, at most 250 characters. */
function noteTitle(text: string): string {
  const first = text.split(/\r?\n/).map((l) => l.replace(/\s+/g, ' ').trim()).find((l) => l) ?? '';
  return first.length > NOTE_TITLE_MAX ? `${first.slice(0, NOTE_TITLE_MAX - 1)}…` : first;
}

function noteBody(projectRef: string, n: ProjectNoteDraft): Body {
  return {
    projectID: vendorId(projectRef), title: noteTitle(n.text), description: withMarker(n.text, n.marker),
    noteType: NOTE_TYPE_PROJECT_NOTES, publish: PUBLISH_ALL,
  };
}

function taskBody(projectRef: string, i: ProjectItemDraft): Body {
  return defined({
    projectID: vendorId(projectRef),
    title: i.summary,
    description: i.description || undefined,
    status: TASK_STATUS_NEW,
    taskType: TASK_TYPE_FIXED_WORK,
    phaseID: i.phase != null ? vendorId(i.phase.trim()) : undefined,
    externalID: i.marker,
  });
}

function headers(credentials: Record<string, string>): Record<string, string> {
  const { username, secret, integrationCode } = credentials;
  if (!username || !secret || !integrationCode) throw new Error('autotask credentials need username, secret and integrationCode');
  return { ApiIntegrationCode: integrationCode, UserName: username, Secret: secret };
}

async function call<T>(ctx: WriteContext, req: { method: VendorRequestPreview['method']; path: string; body?: unknown; read?: boolean }, fields: FieldMap, fallback: string): Promise<T> {
  try {
    const res = await ctx.http.request<T>({
      method: req.method, url: `${ctx.baseUrl}${req.path}`, headers: headers(ctx.credentials), json: req.body,
      retry: req.read ?? req.method === 'GET',
    });
    return res.body;
  } catch (err) {
    if (!isAutotaskValidationError(err)) throw err;
    const problems = autotaskErrorMessages(err.body).map((message) => ({ field: fieldNamedIn(message, fields, fallback), message }));
    throw new VendorValidationError('autotask', problems, (err as VendorHttpError).status, err.body);
  }
}

async function query(ctx: WriteContext, entity: string, filter: FilterItem[]): Promise<Native[]> {
  const body = await call<{ items?: Native[] }>(ctx, {
    method: 'POST', path: `/${entity}/query`, body: { filter, MaxRecords: AUTOTASK_PAGE_SIZE }, read: true,
  }, {}, 'project_source_id');
  if (!body || !Array.isArray(body.items)) throw new Error(`autotask ${entity}/query: expected {items} in the answer`);
  return body.items;
}

function lengthProblem(field: string, what: string, value: string | null | undefined, max: number): FieldProblem[] {
  return value && value.length > max ? [{ field, message: `Autotask allows at most ${max} characters in ${what}; this one has ${value.length}.` }] : [];
}

export const autotaskProjectWriter: ProjectWriter = {
  itemKind: 'task',

  checkNote(n) {
    if (!n.text.trim()) return [{ field: 'text', message: 'Autotask requires the text of a project note.' }];
    return lengthProblem('text', 'a project note', withMarker(n.text, n.marker), NOTE_DESCRIPTION_MAX);
  },

  checkItem(i) {
    const problems: FieldProblem[] = [];
    if (!i.summary.trim()) problems.push({ field: 'summary', message: 'Autotask requires a task title.' });
    problems.push(...lengthProblem('summary', 'a task title', i.summary, TASK_TITLE_MAX));
    problems.push(...lengthProblem('description', 'a task description', i.description, TASK_DESCRIPTION_MAX));
    if (i.phase != null && !/^\d+$/.test(i.phase.trim())) problems.push({ field: 'phase', message: `${quoted(i.phase)} is not an Autotask phase id.` });
    if (i.marker.length > EXTERNAL_ID_MAX) {
      problems.push({ field: 'idempotency_key', message: `The write marker is longer than the ${EXTERNAL_ID_MAX} characters Autotask keeps in externalID.` });
    }
    return problems;
  },

  previewNote(projectRef, n) {
    return [{ method: 'POST', path: notesPath(projectRef), body: noteBody(projectRef, n) }];
  },

  previewItem(projectRef, i) {
    return [{ method: 'POST', path: tasksPath(projectRef), body: taskBody(projectRef, i) }];
  },

  async addNote(ctx, projectRef, n) {
    const { itemId } = await call<{ itemId: number }>(ctx, { method: 'POST', path: notesPath(projectRef), body: noteBody(projectRef, n) }, NOTE_FIELDS, 'text');
    return { ref: String(itemId), ticketRef: null };
  },

  async findNote(ctx, projectRef, marker) {
    const notes = await query(ctx, 'ProjectNotes', [
      { op: 'eq', field: 'projectID', value: vendorId(projectRef) },
      { op: 'contains', field: 'description', value: markerLine(marker) },
    ]);
    const note = notes.find((x) => hasMarker(x.description, marker));
    return note ? { ref: String(note.id), ticketRef: null } : null;
  },

  async addItem(ctx, projectRef, i) {
    const { itemId } = await call<{ itemId: number }>(ctx, { method: 'POST', path: tasksPath(projectRef), body: taskBody(projectRef, i) }, TASK_FIELDS, 'summary');
    return { ref: String(itemId), ticketRef: null };
  },

  async findItem(ctx, projectRef, i) {
    const tasks = await query(ctx, 'Tasks', [
      { op: 'eq', field: 'projectID', value: vendorId(projectRef) },
      { op: 'eq', field: 'externalID', value: i.marker },
    ]);
    const task = tasks.find((t) => t.externalID === i.marker);
    return task ? { ref: String(task.id), ticketRef: null } : null;
  },
};
