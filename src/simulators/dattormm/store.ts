/** One Datto RMM account's state in the simulator (an "instance", selected by the API key). */
import { randomUUID } from 'node:crypto';
import type { DattoActivity, DattoAlert, DattoComponent, DattoDevice, DattoDeviceSoftware, DattoSite, DattoSoftware, QuickJobRun } from './types';

export class DattoAccount {
  /** Kept across a graceful restart (the account's identity does not change with the process). */
  uid = randomUUID().replace(/-/g, '').slice(0, 12);
  sites: DattoSite[] = [];
  devices: DattoDevice[] = [];
  software = new Map<string, DattoSoftware[]>();
  alerts: DattoAlert[] = [];
  components: DattoComponent[] = [];
  runs: QuickJobRun[] = [];
  activities: DattoActivity[] = [];
  /** Request times in the rolling window, reads and writes apart (the limits are per account). */
  readTimes: number[] = [];
  writeTimes: number[] = [];

  device(uid: string): DattoDevice | undefined {
    return this.devices.find((d) => d.uid === uid);
  }
  site(uid: string): DattoSite | undefined {
    return this.sites.find((s) => s.uid === uid);
  }
  nextId(rows: readonly { id: number }[], floor: number): number {
    return rows.reduce((m, r) => Math.max(m, r.id), floor) + 1;
  }

  load(fixtures: Record<string, unknown[]>): void {
    this.sites = structuredClone((fixtures.sites ?? []) as DattoSite[]);
    this.devices = structuredClone((fixtures.devices ?? []) as DattoDevice[]);
    this.software = new Map(((fixtures.software ?? []) as DattoDeviceSoftware[]).map((s) => [s.deviceUid, structuredClone(s.software)]));
    this.alerts = structuredClone((fixtures.alerts ?? []) as DattoAlert[]);
    this.components = structuredClone((fixtures.components ?? []) as DattoComponent[]);
    this.runs = [];
    this.activities = [];
  }
}
