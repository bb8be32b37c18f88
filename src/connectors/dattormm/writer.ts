/**
 * Datto RMM write side: device deploy runs a component of the account on a device as a quick job.
 *
 * Endpoints (Datto RMM OpenAPI, build 235, fixtures/vendor-api/dattormm):
 *   GET /v2/device/{deviceUid}           [getByUid] Device: `online` says whether the job waits for the
 *        agent; `id` and `siteId` narrow the look-up below.
 *   PUT /v2/device/{deviceUid}/quickjob  [createQuickJob] CreateQuickJobRequest {jobName (required),
 *        jobComponent {componentUid, variables [{name, value}]} (required)} -> CreateQuickJobResponse
 *        {job {id, uid, name, dateCreated, status}, jobComponents}.
 *   GET /v2/activity-logs                [getActivities] from, until, entities, categories, siteIds,
 *        searchQuery (words; rmm.datto.com/help/en/Content/3NEWUI/Analytics/ActivityLog.htm), size, order,
 *        page (next/previous) -> {pageDetails, activities [ActivityLog {id, entity, category,
 *        action, date, site, deviceId, hostname, user, details}]}.
 *
 * Marker: the job's name carries our marker line, `Deploy <package> [ref:<marker>]`, one marker per
 * idempotency key. A quick job can only be found again through the activity log (the API has no job
 * list): a job created on a device is logged as a device activity of category `job` whose `details` (a
 * string) holds the job's name. The fields are documented; what `details` holds is our reading (the
 * OpenAPI gives no example), and the simulator logs jobs so. Before a retried send we search the
 * device's site's job activities since the commit was first reserved for the bare marker
 * (markerSearchText) and confirm the marker line on the device (hasMarker). The look-up is bounded: at most RECONCILE_PAGES pages; if the window is still not covered
 * we refuse to send rather than risk a second run.
 */
import { createHash } from 'node:crypto';
import { DeployUnreconciledError, type DeployDraft, type DeployOutcome, type DeviceWriter } from '../device-write-types';
import { hasMarker, markerLine, markerSearchText } from '../write-support';
import type { VendorRequestPreview, WriteContext } from '../write-types';
import { dattoGet, dattoPaging, dattoProfile, dattoWrite } from './client';
import { vendorSession } from '../vendor-session';

type Native = Record<string, unknown>;

/** Activity-log page size (`size`); the OpenAPI gives no maximum, the list maximum (250) is used. */
const ACTIVITY_PAGE = 250;
const RECONCILE_PAGES = 4;

/** The marker of this deploy: the pipeline's (one per idempotency key), or one derived from the draft. */
function markerOf(d: DeployDraft): string {
  return d.marker ?? `msp-${createHash('sha256').update(`${d.deviceRef}\n${d.packageRef}`).digest('hex').slice(0, 24)}`;
}

/** The quick-job request: the same for preview and commit. */
export function quickJobRequest(d: DeployDraft): { path: string; body: { jobName: string; jobComponent: { componentUid: string; variables: { name: string; value: string }[] } } } {
  return {
    path: `/v2/device/${encodeURIComponent(d.deviceRef)}/quickjob`,
    body: { jobName: `Deploy ${d.packageName} ${markerLine(markerOf(d))}`, jobComponent: { componentUid: d.packageRef, variables: [] } },
  };
}

async function device(ctx: WriteContext, deviceRef: string): Promise<Native> {
  return (await dattoGet<Native>(ctx, `/v2/device/${encodeURIComponent(deviceRef)}`)) ?? {};
}

/** `yyyy-MM-ddTHH:mm:ssZ`, the activity log's `from` format (OpenAPI parameter description). */
function activityTime(t: Date): string {
  return `${t.toISOString().slice(0, 19)}Z`;
}

/** The job activity of this device whose details carry the marker line, in at most RECONCILE_PAGES pages. */
export async function findJobActivity(ctx: WriteContext, dev: Native, marker: string, since: Date): Promise<Native | null> {
  const query: Record<string, string | number> = {
    entities: 'device', categories: 'job', from: activityTime(since), searchQuery: markerSearchText(marker), size: ACTIVITY_PAGE, order: 'desc',
  };
  if (typeof dev.siteId === 'number') query.siteIds = dev.siteId;
  const pages = vendorSession(dattoProfile, ctx).pages<Native>({ path: '/v2/activity-logs', query }, dattoPaging('activities', {
    pageSize: ACTIVITY_PAGE,
    maxPages: RECONCILE_PAGES,
    limitError: () => new DeployUnreconciledError(`dattormm: more than ${RECONCILE_PAGES * ACTIVITY_PAGE} job activities since the deploy was first tried; not sending it again`),
  }));
  for await (const activities of pages) {
    const hit = activities.find((a) => (dev.id == null || a.deviceId === dev.id) && hasMarker(a.details, marker));
    if (hit) return hit;
  }
  return null;
}

export const dattoRmmWriter: DeviceWriter = {
  name: 'dattormm',

  previewDeploy(d): VendorRequestPreview[] {
    const r = quickJobRequest(d);
    return [{ method: 'PUT', path: r.path, body: r.body }];
  },

  async deploy(ctx, d): Promise<DeployOutcome> {
    const queued = (await device(ctx, d.deviceRef)).online !== true;
    const r = quickJobRequest(d);
    const answer = await dattoWrite<unknown>(ctx, 'PUT', r.path, r.body);
    return { queued, native: answer && typeof answer === 'object' ? (answer as Native) : null };
  },

  async findDeploy(ctx, d, since): Promise<DeployOutcome | null> {
    const dev = await device(ctx, d.deviceRef);
    const run = await findJobActivity(ctx, dev, markerOf(d), since);
    return run ? { queued: dev.online !== true, native: run } : null;
  },
};
