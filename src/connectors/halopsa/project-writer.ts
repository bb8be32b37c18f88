/**
 * HaloPSA project writes, the limited PSA connector (interface document rule 14): a project is a
 * ticket in Halo, and both a project note and a project item are the connector's existing project
 * write, an internal Action on the project (writer.ts `previewProjectNote`/`addProjectNote`, marker
 * line in the action's `note`, found with `findNoteByMarker`). It previews on any host and
 * commits only on its fixture host (the write skeleton's assertLiveAllowed).
 *
 * Baseline projects: the connector reads a locked project (`locked: true`, Halo's lock on a ticket or
 * project; writes to it are refused with 400 "... is locked and cannot be edited") as the baseline
 * (mapping.ts `projectFields`); there is no template flag on Halo projects in the swagger we checked
 * (covenanttechnologysolutions/halopsa-rest generator/spec/swagger.json, Faults/Projects).
 */
import type { ProjectItemDraft, ProjectNoteDraft, ProjectWriter } from '../project-write-types';
import type { FieldProblem, TicketDraft } from '../write-types';
import { addProjectNote, haloPsaWriter, previewProjectNote } from './writer';

/** The draft the existing project write takes: `summary` then `description` make the action's note. */
function draftOf(marker: string, summary: string, description: string | null): TicketDraft {
  return {
    marker, summary, description, companyName: '', companySourceId: null, boardSourceId: null, statusSourceId: null,
    prioritySourceId: null, projectSourceId: null, vendorNative: null,
  };
}

const noteDraft = (n: ProjectNoteDraft) => draftOf(n.marker, n.text, null);
const itemDraft = (i: ProjectItemDraft) => draftOf(i.marker, i.summary, i.description);

export const haloPsaProjectWriter: ProjectWriter = {
  itemKind: 'project_note',

  checkNote(n) {
    return n.text.trim() ? [] : [{ field: 'text', message: 'HaloPSA requires the text of a note.' }];
  },

  checkItem(i) {
    const problems: FieldProblem[] = [];
    if (!i.summary.trim()) problems.push({ field: 'summary', message: 'HaloPSA requires a summary.' });
    if (i.phase != null) problems.push({ field: 'phase', message: 'HaloPSA projects have no phases through this limited connector; leave phase out.' });
    return problems;
  },

  previewNote(projectRef, n) {
    return previewProjectNote(projectRef, noteDraft(n));
  },

  previewItem(projectRef, i) {
    return previewProjectNote(projectRef, itemDraft(i));
  },

  async addNote(ctx, projectRef, n) {
    return { ref: await addProjectNote(ctx, projectRef, noteDraft(n)), ticketRef: null };
  },

  async findNote(ctx, projectRef, marker) {
    const r = await haloPsaWriter.findNoteByMarker(ctx, projectRef, marker);
    return r ? { ref: r.noteRef, ticketRef: null } : null;
  },

  async addItem(ctx, projectRef, i) {
    return { ref: await addProjectNote(ctx, projectRef, itemDraft(i)), ticketRef: null };
  },

  async findItem(ctx, projectRef, i) {
    return this.findNote(ctx, projectRef, i.marker);
  },
};
