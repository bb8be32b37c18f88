/**
 * Autotask PSA project writes (docs/architecture.md, Projects): project notes and tasks (the project's items),
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
 * - Picklist values (noteType, publish, task status and type) are per database (docs/vendors.md), so they
 *   are read at commit from the database's field information, GET ProjectNotes/entityInformation/fields
 *   and GET Tasks/entityInformation/fields (both in the Autotask REST swagger), by label: note type
 *   "Project Notes", publish "All Autotask Users", task status "New", task type "Fixed Work". A
 *   database without such a value refuses the write rather than guess. A preview names them.
 *
 * Baseline projects: Autotask marks them by `projectType` (Projects field information picklist:
 * Proposal, Template, Baseline, Archived, Client, Internal). Template and Baseline projects are plans,
 * not work, and take no notes or tasks here; mapping.ts `mapProject` sets `baseline` for both.
 */
import { VendorValidationError, type FieldMap } from '../vendor-errors';
import { writerCall } from '../writer-http';
import { defined, hasMarker, markerSearchText, quoted, resolvedAtCommit, vendorId, withMarker } from '../write-support';
import type { FieldProblem, WriteContext } from '../write-types';
import type { ProjectItemDraft, ProjectNoteDraft, ProjectWriter } from '../project-write-types';
import { AUTOTASK_PAGE_SIZE, autotaskDialect, pickByLabel, picklistId, type FieldInfo, type FilterItem, type Native } from './client';

const NOTE_TITLE_MAX = 250;
const NOTE_DESCRIPTION_MAX = 32000;
const TASK_TITLE_MAX = 255;
const TASK_DESCRIPTION_MAX = 8000;
const EXTERNAL_ID_MAX = 50;

/** The picklist values a write takes, by field, and the labels that choose them (first match wins). */
const NOTE_PICKS = { noteType: [/^project notes?$/i, /\bnotes?\b/i], publish: [/^all\b/i, /\ball\b/i] };
const TASK_PICKS = { status: [/^new$/i], taskType: [/^fixed work$/i] };
type Picks = Record<string, number | string>;

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

function noteBody(projectRef: string, n: ProjectNoteDraft, picks: Picks): Body {
  return {
    projectID: vendorId(projectRef), title: noteTitle(n.text), description: withMarker(n.text, n.marker),
    noteType: picks.noteType, publish: picks.publish,
  };
}

function taskBody(projectRef: string, i: ProjectItemDraft, picks: Picks): Body {
  return defined({
    projectID: vendorId(projectRef),
    title: i.summary,
    description: i.description || undefined,
    status: picks.status,
    taskType: picks.taskType,
    phaseID: i.phase != null ? vendorId(i.phase.trim()) : undefined,
    externalID: i.marker,
  });
}

const call = writerCall(autotaskDialect);

async function query(ctx: WriteContext, entity: string, filter: FilterItem[]): Promise<Native[]> {
  const body = await call<{ items?: Native[] }>(ctx, {
    method: 'POST', path: `/${entity}/query`, body: { filter, MaxRecords: AUTOTASK_PAGE_SIZE }, read: true,
  }, {}, 'project_source_id');
  if (!body || !Array.isArray(body.items)) throw new Error(`autotask ${entity}/query: expected {items} in the answer`);
  return body.items;
}

/** What a preview shows for the picklist values the commit reads. */
function previewPicks(entity: string, wanted: Record<string, RegExp[]>): Picks {
  return Object.fromEntries(Object.keys(wanted).map((name) => [name, resolvedAtCommit(`the ${name} value of the database's ${entity} picklist`)]));
}

/** The database's picklist values for `wanted` (GET <entity>/entityInformation/fields), or a refusal naming the missing one. */
async function picks(ctx: WriteContext, entity: 'ProjectNotes' | 'Tasks', wanted: Record<string, RegExp[]>, field: string): Promise<Picks> {
  const body = await call<{ fields?: FieldInfo[] }>(ctx, { method: 'GET', path: `/${entity}/entityInformation/fields` }, {}, field);
  const fields = Array.isArray(body?.fields) ? body.fields.filter((f) => f && typeof f.name === 'string') : [];
  const out: Picks = {};
  for (const [name, labels] of Object.entries(wanted)) {
    const hit = pickByLabel(fields, name, labels);
    if (!hit) throw new VendorValidationError('autotask', [{ field, message: `This Autotask database has no ${entity} ${name} picklist value this service can use.` }], 200, body);
    out[name] = picklistId(hit);
  }
  return out;
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
    return [
      { method: 'GET', path: '/ProjectNotes/entityInformation/fields' },
      { method: 'POST', path: notesPath(projectRef), body: noteBody(projectRef, n, previewPicks('ProjectNotes', NOTE_PICKS)) },
    ];
  },

  previewItem(projectRef, i) {
    return [
      { method: 'GET', path: '/Tasks/entityInformation/fields' },
      { method: 'POST', path: tasksPath(projectRef), body: taskBody(projectRef, i, previewPicks('Tasks', TASK_PICKS)) },
    ];
  },

  async addNote(ctx, projectRef, n) {
    const { itemId } = await call<{ itemId: number }>(ctx, { method: 'POST', path: notesPath(projectRef), body: noteBody(projectRef, n, await picks(ctx, 'ProjectNotes', NOTE_PICKS, 'text')) }, NOTE_FIELDS, 'text');
    return { ref: String(itemId), ticketRef: null };
  },

  async findNote(ctx, projectRef, marker) {
    const notes = await query(ctx, 'ProjectNotes', [
      { op: 'eq', field: 'projectID', value: vendorId(projectRef) },
      { op: 'contains', field: 'description', value: markerSearchText(marker) },
    ]);
    const note = notes.find((x) => hasMarker(x.description, marker));
    return note ? { ref: String(note.id), ticketRef: null } : null;
  },

  async addItem(ctx, projectRef, i) {
    const { itemId } = await call<{ itemId: number }>(ctx, { method: 'POST', path: tasksPath(projectRef), body: taskBody(projectRef, i, await picks(ctx, 'Tasks', TASK_PICKS, 'summary')) }, TASK_FIELDS, 'summary');
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
