/** What the NinjaOne simulator offers the sandbox and tests besides its HTTP API (simulate.ts changes records through it). */
import type { VendorSimulator } from '../kit';
import type { ScriptRun } from './store';
import type { NinjaAlert, NinjaRecordByResource, NinjaResource } from './types';

export interface NinjaOneSimulator extends VendorSimulator {
  /** A copy of one record, by id (uid for alerts, `${deviceId}:${name}:${version}` for software). */
  get<R extends NinjaResource>(instance: string, resource: R, id: string | number): NinjaRecordByResource[R] | undefined;
  /** Copies of all records of a resource, in API order. */
  list<R extends NinjaResource>(instance: string, resource: R): NinjaRecordByResource[R][];
  /** Changes a record as a technician or the agent would; bumps its last-updated time. */
  update<R extends NinjaResource>(
    instance: string, resource: R, id: string | number, patch: Partial<NinjaRecordByResource[R]>,
  ): NinjaRecordByResource[R];
  /** Adds a record; missing ids and times are filled in. */
  create<R extends NinjaResource>(instance: string, resource: R, record: Partial<NinjaRecordByResource[R]>): NinjaRecordByResource[R];
  remove(instance: string, resource: NinjaResource, id: string | number): boolean;
  /** A condition triggers on a device: a new active alert (and the device's lastUpdate moves). */
  raiseAlert(instance: string, deviceId: number, message: string, extra?: Partial<NinjaAlert>): NinjaAlert;
  /** An alert is reset/cleared: it leaves /v2/alerts (and the device's lastUpdate moves). */
  clearAlert(instance: string, uid: string): boolean;
  /** Invalidates every issued access token (as a revoked API client would). */
  expireTokens(): void;
  /**
   * Whether the refresh_token grant answers a new refresh token and retires the one it was given
   * (whether NinjaOne rotates is unconfirmed: off by default, on to prove a rotated one is kept).
   */
  rotateRefreshTokens(on: boolean): void;
  /** The MSP revokes a user's authorisation: its refresh token answers invalid_grant from now on. */
  revokeAuthorisation(refreshToken: string): void;
  /** Script runs received (POST /v2/device/{id}/script/run), in order. */
  runs(instance: string): ScriptRun[];
}
