/**
 * ConnectWise PSA project writes (docs/architecture.md, Projects): notes on a project and project tickets (the
 * project's items), on existing projects only.
 *
 * - Note: POST /project/projects/{id}/notes, `text` required; our marker is a trailing `[ref:<marker>]`
 *   line of `text` (project notes have no reference field), found with `text contains`.
 * - Item: POST /project/tickets, `summary` (max 100) and `phase` required (docs/vendors.md; connectwise-rest
 *   `ManageTypes.d.ts` ProjectTicket). ProjectTicket has no `externalXRef` (connectwise-rest
 *   ManageTypes.d.ts, pyconnectwise ProjectTicketModel.py), so the marker line goes in
 *   `initialInternalAnalysis`, which ConnectWise keeps as the ticket's first internal note (the customer
 *   never sees it; `initialDescription`, the detail-description note, is customer-visible and holds the
 *   caller's description only), as the ticket writer does (writer.ts); reconciliation lists the
 *   project's tickets with the same summary and reads their notes (GET /project/tickets/{id}/notes)
 *   for the marker line.
 * - Phase: `phase` names one of the project's phases by id or by name (the phase's `description`);
 *   without it, the project's first phase that is not closed, else its first phase.
 *
 * Baseline projects: ConnectWise keeps templates apart, in /project/projectTemplates (ProjectTemplates
 * API, e.g. ai-connor/connectwise build/docs/ProjectTemplatesAPI.md), so nothing read from
 * /project/projects is a template; a project MSPs keep as a baseline is marked by its project type
 * `type: {name: "Baseline"}` (mapping.ts `isBaselineProject`, read by the sync into `baseline`).
 *
 * Writes are sent once (`retry: false`); lookups (GET) retry throttling as reads do.
 */
import { VendorValidationError, type FieldMap } from '../vendor-errors';
import { writerCall } from '../writer-http';
import { defined, hasMarker, markerLine, markerSearchText, quoted, resolvedAtCommit, vendorId, withMarker } from '../write-support';
import type { FieldProblem, WriteContext } from '../write-types';
import type { ProjectItemDraft, ProjectNoteDraft, ProjectWriter } from '../project-write-types';
import { cwDialect, CW_MAX_PAGE_SIZE, type CwNative } from './client';

const SUMMARY_MAX = 100;
/** Reconciliation reads the notes of at most this many same-summary tickets of the project. */
const MAX_CANDIDATES = 20;

const NOTE_FIELDS: FieldMap = { text: 'text' };
const ITEM_FIELDS: FieldMap = {
  summary: 'summary', phase: 'phase', project: 'project_source_id', initialdescription: 'description',
  initialinternalanalysis: 'idempotency_key',
};

type Body = Record<string, unknown>;

const notesPath = (projectRef: string) => `/project/projects/${projectRef}/notes`;
const phasesPath = (projectRef: string) => `/project/projects/${projectRef}/phases`;

function noteBody(n: ProjectNoteDraft): Body {
  return { text: withMarker(n.text, n.marker) };
}

function itemBody(projectRef: string, i: ProjectItemDraft, phaseId: number | string): Body {
  return defined({
    summary: i.summary,
    project: { id: vendorId(projectRef) },
    phase: { id: phaseId },
    initialDescription: i.description?.trim() ? i.description : undefined,
    initialInternalAnalysis: markerLine(i.marker),
  });
}

/** A text value inside ConnectWise conditions: double quotes, backslash-escaped. */
function condText(value: string): string {
  return `"${value.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}

/** ConnectWise refuses an object with 400 and an unknown parent with 404 (writer-http.ts). */
const call = writerCall(cwDialect, [400, 404]);

async function list(ctx: WriteContext, path: string, conditions: string | null, fields: FieldMap): Promise<CwNative[]> {
  const query = { pageSize: CW_MAX_PAGE_SIZE, page: 1, orderBy: 'id asc', ...(conditions ? { conditions } : {}) };
  const rows = await call<unknown>(ctx, { method: 'GET', path, query }, fields, 'project_source_id');
  if (!Array.isArray(rows)) throw new Error(`connectwise ${path}: expected a JSON array`);
  return rows as CwNative[];
}

/** The phase the item goes into (see the header comment); a named phase the project lacks is a 422 on `phase`. */
async function resolvePhase(ctx: WriteContext, projectRef: string, phase: string | null): Promise<number | string> {
  const phases = await list(ctx, phasesPath(projectRef), null, ITEM_FIELDS);
  const problem = (message: string) => new VendorValidationError('connectwise', [{ field: 'phase', message }], 200, phases);
  if (phase != null) {
    const wanted = phase.trim().toLowerCase();
    const found = phases.find((p) => String(p.id) === phase.trim()) ?? phases.find((p) => String(p.description ?? '').trim().toLowerCase() === wanted);
    if (!found) {
      const names = phases.map((p) => `${p.id} ${quoted(String(p.description ?? ''))}`).join(', ') || 'none';
      throw problem(`ConnectWise project ${projectRef} has no phase ${quoted(phase)} (its phases: ${names}).`);
    }
    return found.id as number;
  }
  const chosen = phases.find((p) => !/closed/i.test(String(p.status?.name ?? ''))) ?? phases[0];
  if (!chosen) throw problem(`ConnectWise project ${projectRef} has no phase to put a ticket in.`);
  return chosen.id as number;
}

function phasePlaceholder(projectRef: string, phase: string | null): number | string {
  if (phase != null && /^\d+$/.test(phase.trim())) return Number(phase.trim());
  return resolvedAtCommit(phase != null ? `the phase named ${quoted(phase)} of project ${projectRef}` : `the first open phase of project ${projectRef}`);
}

export const connectwiseProjectWriter: ProjectWriter = {
  itemKind: 'project_ticket',

  checkNote(n) {
    return n.text.trim() ? [] : [{ field: 'text', message: 'ConnectWise requires the text of a project note.' }];
  },

  checkItem(i) {
    const problems: FieldProblem[] = [];
    if (!i.summary.trim()) problems.push({ field: 'summary', message: 'ConnectWise requires a ticket summary.' });
    else if (i.summary.length > SUMMARY_MAX) {
      problems.push({ field: 'summary', message: `ConnectWise allows at most ${SUMMARY_MAX} characters in a ticket summary; this one has ${i.summary.length}.` });
    }
    return problems;
  },

  previewNote(projectRef, n) {
    return [{ method: 'POST', path: notesPath(projectRef), body: noteBody(n) }];
  },

  previewItem(projectRef, i) {
    return [
      { method: 'GET', path: phasesPath(projectRef) },
      { method: 'POST', path: '/project/tickets', body: itemBody(projectRef, i, phasePlaceholder(projectRef, i.phase)) },
    ];
  },

  async addNote(ctx, projectRef, n) {
    const note = await call<CwNative>(ctx, { method: 'POST', path: notesPath(projectRef), body: noteBody(n) }, NOTE_FIELDS, 'text');
    return { ref: String(note.id), ticketRef: null };
  },

  async findNote(ctx, projectRef, marker) {
    const notes = await list(ctx, notesPath(projectRef), `text contains ${condText(markerSearchText(marker))}`, NOTE_FIELDS);
    const note = notes.find((x) => hasMarker(x.text, marker));
    return note ? { ref: String(note.id), ticketRef: null } : null;
  },

  async addItem(ctx, projectRef, i) {
    const phaseId = await resolvePhase(ctx, projectRef, i.phase);
    const ticket = await call<CwNative>(ctx, { method: 'POST', path: '/project/tickets', body: itemBody(projectRef, i, phaseId) }, ITEM_FIELDS, 'summary');
    return { ref: String(ticket.id), ticketRef: String(ticket.id) };
  },

  async findItem(ctx, projectRef, i) {
    const candidates = await list(ctx, '/project/tickets', `project/id = ${Number(projectRef)} and summary = ${condText(i.summary)}`, ITEM_FIELDS);
    for (const t of candidates.slice(-MAX_CANDIDATES)) {
      const notes = await list(ctx, `/project/tickets/${t.id}/notes`, null, NOTE_FIELDS);
      if (notes.some((x) => hasMarker(x.text, i.marker))) return { ref: String(t.id), ticketRef: String(t.id) };
    }
    return null;
  },
};
