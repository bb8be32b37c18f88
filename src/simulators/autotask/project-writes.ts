/**
 * Autotask's write rules for project notes (ProjectNotes) and tasks (Tasks), created through their
 * parent only (POST Projects/{id}/Notes, Projects/{id}/Tasks: the swagger has no root POST for them). Refusals are `AutotaskError(500, [...])`, as Autotask answers validation failures (writes.ts).
 *
 * Plans are not work: a project whose projectType is Template or Baseline takes no notes or tasks
 * here. Autotask's exact message is unconfirmed; the refusal keeps its shape (500 `{errors}`), so the
 * sandbox is never kinder than the vendor. The sandbox has no project phases: a phaseID is refused.
 */
import { AutotaskError, type Row } from './store';
import { readFields, refuse, type WriteContext } from './writes';

type Entity = 'ProjectNotes' | 'Tasks';

function withParent(body: Record<string, unknown>, parentProjectId: number | undefined): Record<string, unknown> {
  const input = { ...body };
  if (parentProjectId != null) {
    const given = input.projectID ?? input.ProjectID;
    if (given != null && Number(given) !== parentProjectId) throw new AutotaskError(500, ['projectID does not match the parent project of the URL.']);
    input.projectID = parentProjectId;
  }
  return input;
}

/** The project the row goes on: it must exist and be work, not a plan. */
function workProject(ctx: WriteContext, projectId: unknown): Row {
  const project = ctx.state.table('Projects').get(projectId as number);
  if (!project) throw new AutotaskError(500, [`projectID ${String(projectId)} does not reference an existing project.`]);
  const types = ctx.state.fields('Projects').find((f) => f.name === 'projectType')?.picklistValues ?? [];
  const label = types.find((v) => v.value === String(project.projectType))?.label ?? '';
  if (/template|baseline/i.test(label)) {
    throw new AutotaskError(500, [`Project ${String(project.id)} is a ${label} project; notes and tasks can only be added to a working project.`]);
  }
  return project;
}

function create(ctx: WriteContext, entity: Entity, body: Record<string, unknown>, parentProjectId: number | undefined): Row {
  const { state } = ctx;
  const errors: string[] = [];
  const values = readFields(state, entity, withParent(body, parentProjectId), 'create', errors);
  if (entity === 'Tasks' && values.phaseID != null) errors.push(`phaseID ${String(values.phaseID)} does not reference an existing phase.`);
  refuse(errors);
  const project = workProject(ctx, values.projectID);
  const stamp = ctx.now().toISOString();
  const activity = entity === 'Tasks' ? { lastActivityDateTime: stamp } : { lastActivityDate: stamp };
  const id = state.table(entity).nextId();
  const row = state.normalize(entity, {
    ...values, id, createDateTime: stamp, ...activity, creatorResourceID: ctx.impersonatedResourceId,
    ...(entity === 'Tasks' ? { taskNumber: `T${id}` } : {}),
  });
  state.table(entity).insert(row);
  project.lastActivityDateTime = stamp;
  return row;
}

export function createProjectNote(ctx: WriteContext, body: Record<string, unknown>, parentProjectId?: number): Row {
  return create(ctx, 'ProjectNotes', body, parentProjectId);
}

export function createTask(ctx: WriteContext, body: Record<string, unknown>, parentProjectId?: number): Row {
  return create(ctx, 'Tasks', body, parentProjectId);
}
