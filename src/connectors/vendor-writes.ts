/**
 * The vendor writes, by name (docs/architecture.md, Writes): what each one takes (its input, the draft a
 * `vendor.write` job carries, JSON), the capability a connector declares to make it, and the one shape
 * every connector's write has: its vendor rules, its preview (the exact requests, built by the same
 * function as the commit's), its send, and its look-up by marker. Each connector registers the writes it
 * makes beside itself (`src/connectors/<vendor>/writes.ts`); the registry (registry.ts, `vendorWrite`)
 * answers a write by its name and the connection's connector, or a typed refusal when the connector does
 * not declare the capability. Nothing else names a write.
 */
import type { AgreementLineChange, AgreementLineDraft, AgreementLineEnd, AgreementLineWriter, WrittenLine } from './agreement-write-types';
import type { WriteCapability } from './capabilities';
import type { DeployDraft, DeployOutcome, DeviceWriter } from './device-write-types';
import type { DistributorCompany, DistributorCompanyDraft, DistributorCompanyWriter } from './distributor-write-types';
import type { ProjectItemDraft, ProjectNoteDraft, ProjectWriteRef, ProjectWriter } from './project-write-types';
import { timeEntryHoursProblems } from './write-support';
import type {
  FieldProblem, NoteDraft, TicketDraft, TicketPatch, TimeEntryDraft, VendorRequestPreview, WriteConnector, WriteContext,
} from './write-types';

/** What a write made or changed at the vendor, as the job answers it (every field optional: each write fills its own). */
export interface WriteRefs {
  ticketRef?: string | null;
  noteRef?: string | null;
  timeEntryRef?: string | null;
  /** A company created at a distributor. */
  companyRef?: string | null;
  /** project.note / project.item: the created note, project ticket or task. */
  itemRef?: string | null;
  /** agreement.line.*: the line written (its source_id at the vendor). */
  lineRef?: string | null;
  /** device.deploy: the device was offline and the run waits for it. */
  queued?: boolean;
  native?: Record<string, unknown> | null;
}

/** One vendor write of one connector. */
export interface VendorWrite<Input, Result extends WriteRefs = WriteRefs> {
  /**
   * The vendor's rules, the same for a preview and its commit (a preview refuses exactly what the commit
   * would). Empty: it may be sent.
   */
  check(input: Input): FieldProblem[];
  /** The exact requests `send` makes, in order; nothing is sent. */
  preview(input: Input): VendorRequestPreview[];
  /** Sends it once; a refusal of its content is a VendorValidationError, a failed call a VendorHttpError. */
  send(ctx: WriteContext, input: Input): Promise<Result>;
  /** What an earlier try landed, found by its marker; null: the write has none, and sending it again is harmless. */
  find: ((ctx: WriteContext, input: Input) => Promise<Result | null>) | null;
  /** False when this input leaves no marker (a ticket update without a note): it is treated as having no `find`. */
  marked?(input: Input): boolean;
}

/** ticket.update: a patch (absolute values) and/or a note on a linked ticket. */
export interface TicketUpdate {
  ticketRef: string;
  patch: TicketPatch | null;
  note: NoteDraft | null;
}

/** time.create: the entry, its start as ISO text (it crosses the queue). */
export type TimeEntryInput = Omit<TimeEntryDraft, 'start'> & { start: string };

export interface ProjectNoteInput {
  projectRef: string;
  note: ProjectNoteDraft;
}

export interface ProjectItemInput {
  projectRef: string;
  item: ProjectItemDraft;
}

/** device.deploy; `since`: when the commit was first reserved (ISO), a retried send looks for a run from then on (null in a preview). */
export interface DeployInput {
  draft: DeployDraft;
  since: string | null;
}

/** Every vendor write by name. A new write: one entry here, its capability below, and its registration beside each connector that makes it. */
export interface VendorWrites {
  'ticket.create': VendorWrite<TicketDraft>;
  'ticket.update': VendorWrite<TicketUpdate>;
  'time.create': VendorWrite<TimeEntryInput>;
  /** A note or an item on an existing project (docs/architecture.md, Projects). */
  'project.note': VendorWrite<ProjectNoteInput>;
  /** `itemKind`: what an item is at this vendor (the answer's `item_kind`). */
  'project.item': VendorWrite<ProjectItemInput> & { itemKind: ProjectWriter['itemKind'] };
  /** Company create at a distributor (docs/architecture.md, Distributor). */
  'company.create': VendorWrite<DistributorCompanyDraft>;
  'device.deploy': VendorWrite<DeployInput>;
  /** Line items on an existing agreement (rule 8); a replace is an end then an add, two jobs. */
  'agreement.line.add': VendorWrite<AgreementLineDraft>;
  'agreement.line.rewrite': VendorWrite<AgreementLineChange>;
  'agreement.line.end': VendorWrite<AgreementLineEnd>;
}

export type WriteName = keyof VendorWrites;
export type WriteInput<K extends WriteName> = Parameters<VendorWrites[K]['preview']>[0];
/** The writes one connector makes. */
export type ConnectorWrites = Partial<VendorWrites>;
/** One write as a job carries it: its name and its input. */
export type WriteCall = { [K in WriteName]: { name: K; input: WriteInput<K> } }[WriteName];

/** The capability a connector declares (its `capabilities.ts`) to make each write. */
export const WRITE_CAPABILITY: { readonly [K in WriteName]: WriteCapability } = {
  'ticket.create': 'ticket.create',
  'ticket.update': 'ticket.update',
  'time.create': 'time.create',
  'project.note': 'project.write',
  'project.item': 'project.write',
  'company.create': 'company.create',
  'device.deploy': 'device.deploy',
  'agreement.line.add': 'agreement.write',
  'agreement.line.rewrite': 'agreement.write',
  'agreement.line.end': 'agreement.write',
};

export const WRITE_NAMES = Object.keys(WRITE_CAPABILITY) as WriteName[];

// The writes of each writer contract, for the connectors to register. Written once here: what is the
// same for every vendor (a ticket update is its patch, then its note; the neutral hours rule) stays out
// of the vendors' code.

/** A writer's functions for one write, and how its answer reads as WriteRefs. */
interface WriterParts<I, R> {
  check(input: I): FieldProblem[];
  preview(input: I): VendorRequestPreview[];
  send(ctx: WriteContext, input: I): Promise<R>;
  find: ((ctx: WriteContext, input: I) => Promise<R | null>) | null;
}

function fromWriter<I, R>(parts: WriterParts<I, R>, refs: (r: R) => WriteRefs): VendorWrite<I> {
  const find = parts.find;
  return {
    check: parts.check,
    preview: parts.preview,
    send: async (ctx, input) => refs(await parts.send(ctx, input)),
    find: find && (async (ctx, input) => { const r = await find(ctx, input); return r ? refs(r) : null; }),
  };
}

const created = (t: { ticketRef: string; native: Record<string, unknown> | null }): WriteRefs => ({ ticketRef: t.ticketRef, native: t.native });
const entryOf = (t: TimeEntryInput): TimeEntryDraft => ({ ...t, start: new Date(t.start) });

/** ticket.create, ticket.update and time.create of a PSA's ticket writer. */
export function ticketWrites(w: WriteConnector): Pick<VendorWrites, 'ticket.create' | 'ticket.update' | 'time.create'> {
  return {
    'ticket.create': fromWriter<TicketDraft, { ticketRef: string; native: Record<string, unknown> | null }>({
      check: (d) => w.checkTicket(d), preview: (d) => w.previewCreateTicket(d),
      send: (ctx, d) => w.createTicket(ctx, d), find: (ctx, d) => w.findTicketByMarker(ctx, d.marker),
    }, created),
    'ticket.update': {
      check: (u) => [...(u.patch ? w.checkPatch(u.patch) : []), ...(u.note ? w.checkNote(u.note) : [])],
      preview: (u) => [
        ...(u.patch ? w.previewUpdateTicket(u.ticketRef, u.patch) : []),
        ...(u.note ? w.previewAddNote(u.ticketRef, u.note) : []),
      ],
      // The patch sets absolute values (harmless again), then the note.
      send: async (ctx, u) => {
        const r: WriteRefs = { ticketRef: u.ticketRef };
        if (u.patch && Object.keys(u.patch).length > 0) r.native = await w.updateTicket(ctx, u.ticketRef, u.patch);
        if (u.note) r.noteRef = (await w.addNote(ctx, u.ticketRef, u.note)).noteRef;
        return r;
      },
      // Found by the note's marker: the patch went before the note, so it landed too. A patch alone has no
      // marker, and sending it again is harmless.
      find: async (ctx, u) => {
        const note = u.note ? await w.findNoteByMarker(ctx, u.ticketRef, u.note.marker) : null;
        return note ? { ticketRef: u.ticketRef, noteRef: note.noteRef } : null;
      },
      marked: (u) => u.note != null,
    },
    'time.create': fromWriter<TimeEntryInput, { timeEntryRef: string; ticketRef: string }>({
      // Hours that round to nothing are refused on every connector, before the connector's own rules.
      check: (t) => [...timeEntryHoursProblems(t.hours), ...w.checkTimeEntry(entryOf(t))],
      preview: (t) => w.previewTimeEntry(entryOf(t)),
      send: async (ctx, t) => ({ ...(await w.createTimeEntry(ctx, entryOf(t))), ticketRef: t.ticketRef }),
      find: async (ctx, t) => { const e = await w.findTimeEntryByMarker(ctx, entryOf(t)); return e && { ...e, ticketRef: t.ticketRef }; },
    }, (e) => ({ timeEntryRef: e.timeEntryRef, ticketRef: e.ticketRef })),
  };
}

/** project.note and project.item of a PSA's project writer. */
export function projectWrites(w: ProjectWriter): Pick<VendorWrites, 'project.note' | 'project.item'> {
  // The limited connector's item is a note on the project: report it where findings read notes.
  const item = (r: ProjectWriteRef): WriteRefs => ({ ticketRef: r.ticketRef, noteRef: w.itemKind === 'project_note' ? r.ref : null, itemRef: r.ref });
  return {
    'project.note': fromWriter<ProjectNoteInput, ProjectWriteRef>({
      check: (n) => w.checkNote(n.note), preview: (n) => w.previewNote(n.projectRef, n.note),
      send: (ctx, n) => w.addNote(ctx, n.projectRef, n.note), find: (ctx, n) => w.findNote(ctx, n.projectRef, n.note.marker),
    }, (r) => ({ noteRef: r.ref, itemRef: r.ref })),
    'project.item': {
      itemKind: w.itemKind,
      ...fromWriter<ProjectItemInput, ProjectWriteRef>({
        check: (i) => w.checkItem(i.item), preview: (i) => w.previewItem(i.projectRef, i.item),
        send: (ctx, i) => w.addItem(ctx, i.projectRef, i.item), find: (ctx, i) => w.findItem(ctx, i.projectRef, i.item),
      }, item),
    },
  };
}

/** The three agreement-line writes of a PSA's agreement writer. Rewrite and end set absolute values: sending them again is harmless. */
export function agreementLineWrites(w: AgreementLineWriter): Pick<VendorWrites, 'agreement.line.add' | 'agreement.line.rewrite' | 'agreement.line.end'> {
  const line = (l: WrittenLine): WriteRefs => ({ lineRef: l.lineRef, native: l.native });
  return {
    'agreement.line.add': fromWriter<AgreementLineDraft, WrittenLine>({
      check: (d) => w.checkAdd(d), preview: (d) => w.previewAdd(d),
      send: (ctx, d) => w.addLine(ctx, d), find: (ctx, d) => w.findLineByMarker(ctx, d.agreementSourceId, d.marker),
    }, line),
    'agreement.line.rewrite': fromWriter<AgreementLineChange, WrittenLine>({
      check: (c) => w.checkRewrite(c), preview: (c) => w.previewRewrite(c), send: (ctx, c) => w.rewriteLine(ctx, c), find: null,
    }, line),
    'agreement.line.end': fromWriter<AgreementLineEnd, WrittenLine>({
      check: (e) => w.checkEnd(e), preview: (e) => w.previewEnd(e), send: (ctx, e) => w.endLine(ctx, e), find: null,
    }, line),
  };
}

/** company.create of a distributor's company writer. */
export function companyWrites(w: DistributorCompanyWriter): Pick<VendorWrites, 'company.create'> {
  return {
    'company.create': fromWriter<DistributorCompanyDraft, DistributorCompany>({
      check: (d) => w.checkCompany(d), preview: (d) => w.previewCreateCompany(d),
      send: (ctx, d) => w.createCompany(ctx, d), find: (ctx, d) => w.findCompany(ctx, d),
    }, (c) => ({ companyRef: c.companyRef, native: c.native })),
  };
}

/** device.deploy of an RMM's device writer. A script run has no marker: an earlier run is found in the device's activity since `since`. */
export function deviceWrites(w: DeviceWriter): Pick<VendorWrites, 'device.deploy'> {
  return {
    'device.deploy': fromWriter<DeployInput, DeployOutcome>({
      check: () => [], preview: (d) => w.previewDeploy(d.draft),
      send: (ctx, d) => w.deploy(ctx, d.draft), find: (ctx, d) => w.findDeploy(ctx, d.draft, new Date(d.since ?? Date.now())),
    }, (r) => ({ native: r.native, queued: r.queued })),
  };
}
