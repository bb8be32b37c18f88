/**
 * The write side of projects (interface document rule 9, docs/architecture.md, Projects): a note or an item
 * (ConnectWise project ticket, Autotask task, the limited connector's project note) on an existing
 * project; never a project header. Like write-types.ts: the connector checks its vendor's rules,
 * shows the exact requests (preview), sends them (commit) and finds a write it may already have made
 * by our marker (reconcile, before any retried send).
 */
import type { FieldProblem, VendorRequestPreview, WriteContext } from './write-types';

export interface ProjectNoteDraft {
  /** Our write marker, kept in the vendor record (a `[ref:<marker>]` line or an external id field). */
  marker: string;
  text: string;
}

export interface ProjectItemDraft {
  marker: string;
  summary: string;
  description: string | null;
  /** ConnectWise: the phase (id or name) the project ticket goes into; null: the project's first phase. */
  phase: string | null;
}

/** What a project write created at the vendor. */
export interface ProjectWriteRef {
  /** The created record's id (note, project ticket, task). */
  ref: string;
  /** Set when the item is a ticket the service may write back to (the ConnectWise project ticket). */
  ticketRef: string | null;
}

export interface ProjectWriter {
  /** What an item is at this vendor (documentation and the answer's `item_kind`). */
  readonly itemKind: 'project_ticket' | 'task' | 'project_note';
  checkNote(n: ProjectNoteDraft): FieldProblem[];
  checkItem(i: ProjectItemDraft): FieldProblem[];
  previewNote(projectRef: string, n: ProjectNoteDraft): VendorRequestPreview[];
  previewItem(projectRef: string, i: ProjectItemDraft): VendorRequestPreview[];
  addNote(ctx: WriteContext, projectRef: string, n: ProjectNoteDraft): Promise<ProjectWriteRef>;
  findNote(ctx: WriteContext, projectRef: string, marker: string): Promise<ProjectWriteRef | null>;
  addItem(ctx: WriteContext, projectRef: string, i: ProjectItemDraft): Promise<ProjectWriteRef>;
  findItem(ctx: WriteContext, projectRef: string, i: ProjectItemDraft): Promise<ProjectWriteRef | null>;
}
