/**
 * NinjaOne write side: device deploy runs a catalogue script on a device.
 *
 * Endpoints (NinjaOne public OpenAPI 2.0.9-draft, github.com/JunknerdGit/NinjaOneAPI,
 * ninjaone-api-core-resources.yaml; the same calls as homotechsual/NinjaOne Invoke-NinjaOneDeviceScript):
 *   GET  /v2/device/{id}              (getDevice): `offline` says whether the run waits for the agent.
 *   POST /v2/device/{id}/script/run   (runScriptOnDevice): RunScriptRequest {type: ACTION|SCRIPT, id
 *        (script id), uid (built-in action), parameters, runAs}; the answer has no documented body.
 *   GET  /v2/device/{id}/activities   (getDeviceActivities): activityType, olderThan, newerThan,
 *        pageSize (10..1000, default 200) -> {lastActivityId, activities: Activity[], lastNodeActivityId}.
 *
 * Reconcile: a script run carries no marker of ours (RunScriptRequest has no external reference and
 * `parameters` is handed to the script, not recorded where the API shows it). What the API does
 * document is the device's activity log (activityType, statusCode, sourceName, activityTime). We
 * take a run to show as an ACTION activity whose `sourceName` is the script's name: the fields are
 * documented, those values are our reading (the spec gives none), and the simulator logs runs so.
 * So before a retried send we look for such an activity on the
 * device since the commit was first reserved. That cannot tell our run from someone else's run of the
 * same script on the same device in that window; the deploy then counts as done (never twice), which
 * is the safe side. The look-up is bounded: at most RECONCILE_PAGES pages of 1000; if the window is
 * still not covered we refuse to send rather than risk a second run.
 *
 * User context: NinjaOne refuses script/run for a client-credentials token with `user_context_required`
 * ("Access key does not have user context which is required for this request"; homotechsual/NinjaOne
 * issue 90, NangoHQ/nango PR 5429); the OpenAPI does not say so. That refusal is a 422 naming the reason
 * and what the MSP must do (authorise the connection with the authorization-code grant, which gives
 * the connection a refresh token: client.ts). Nothing runs.
 */
import { DeployUnreconciledError, type DeployDraft, type DeployOutcome, type DeviceWriter } from '../device-write-types';
import type { VendorRequestPreview, WriteContext } from '../write-types';
import { VendorValidationError } from '../vendor-errors';
import { VendorHttpError } from '../vendor-http';
import { ninjaGet, ninjaPost, ninjaProfile } from './client';
import { vendorSession } from '../vendor-session';

type Native = Record<string, unknown>;

/** The credential role the install runs as: installers need the machine's system account. */
const RUN_AS = 'system';
const ACTIVITY_PAGE = 1000;
const RECONCILE_PAGES = 3;

function runRequest(d: DeployDraft): { path: string; body: Record<string, unknown> } {
  return {
    path: `/v2/device/${encodeURIComponent(d.deviceRef)}/script/run`,
    body: { type: 'SCRIPT', id: Number(d.packageRef), runAs: RUN_AS },
  };
}

async function offline(ctx: WriteContext, deviceRef: string): Promise<boolean> {
  const device = await ninjaGet<Native>(ctx, `/v2/device/${encodeURIComponent(deviceRef)}`);
  return device?.offline === true;
}

export const ninjaOneWriter: DeviceWriter = {
  name: 'ninjaone',

  previewDeploy(d): VendorRequestPreview[] {
    const r = runRequest(d);
    return [{ method: 'POST', path: r.path, body: r.body }];
  },

  async deploy(ctx, d) {
    const queued = await offline(ctx, d.deviceRef);
    const r = runRequest(d);
    let answer: unknown;
    try {
      answer = await ninjaPost<unknown>(ctx, r.path, r.body);
    } catch (err) {
      if (err instanceof VendorHttpError && (err.body as { error?: unknown } | null)?.error === 'user_context_required') {
        throw new VendorValidationError('ninjaone', [{
          field: 'connection',
          message: 'NinjaOne runs scripts only for a token with a user\'s context (user_context_required: "Access key does not have user context '
            + 'which is required for this request"). This connection authenticates with client credentials: the MSP must authorise it '
            + 'with NinjaOne\'s authorization-code grant (a NinjaOne user signs in), which gives it a refresh token.',
        }], err.status, err.body);
      }
      throw err;
    }
    return { queued, native: answer && typeof answer === 'object' ? (answer as Native) : null };
  },

  async findDeploy(ctx, d, since): Promise<DeployOutcome | null> {
    const sinceSeconds = since.getTime() / 1000;
    const pages = vendorSession(ninjaProfile, ctx).pages<Native>(
      { path: `/v2/device/${encodeURIComponent(d.deviceRef)}/activities`, query: { activityType: 'ACTION' } },
      {
        style: 'after-id', items: 'activities', after: 'olderThan', size: 'pageSize', pageSize: ACTIVITY_PAGE, id: 'id', down: true,
        maxPages: RECONCILE_PAGES,
        limitError: () => new DeployUnreconciledError(`ninjaone: more than ${RECONCILE_PAGES * ACTIVITY_PAGE} device activities since the deploy was first tried; not sending it again`),
      },
    );
    // A short page is the whole log (the iterator ends); a page reaching back before the window covers it.
    for await (const activities of pages) {
      const run = activities.find((a) => a.sourceName === d.packageName && Number(a.activityTime) >= sinceSeconds);
      if (run) return { queued: run.statusCode === 'START_REQUESTED' && (await offline(ctx, d.deviceRef)), native: run };
      const oldest = activities.reduce((min, a) => Math.min(min, Number(a.activityTime)), Infinity);
      if (oldest < sinceSeconds) return null;
    }
    return null;
  },
};
