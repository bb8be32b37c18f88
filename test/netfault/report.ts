/** The network-fault harness's results table: one row per fault and link (docs/architecture.md, Testing). */
import { CALL_TIMEOUT_MS, type CallRecord } from './client';

export interface WindowResult {
  fault: string;
  link: string;
  /** Set when the kernel refused to make the fault: the window was not run. */
  refused?: string;
  calls: CallRecord[];
  /** Changes made in the simulator during the window whose events the feed never showed, or the receiver never got. */
  eventsLost: number;
  /** Vendor tickets beyond one carrying the window's commit marker. */
  writesDoubled: number;
  notes: string[];
  /** Packets that crossed the link during the fault, and those it dropped (loss, partition) or held (delay). */
  packets?: { crossed: number; hit: number };
}

/** `503×3→201`: runs of one outcome in call order. */
function runs(outcomes: string[]): string {
  const out: string[] = [];
  for (const o of outcomes) {
    const last = out[out.length - 1];
    const m = last ? /^(.*?)(?:×(\d+))?$/.exec(last)! : null;
    if (m && m[1] === o) out[out.length - 1] = `${o}×${Number(m[2] ?? 1) + 1}`;
    else out.push(o);
  }
  return out.join('→') || '-';
}

/** Outcome counts, most frequent first: `200×18 503×2`. */
function counts(outcomes: string[]): string {
  const n = new Map<string, number>();
  for (const o of outcomes) n.set(o, (n.get(o) ?? 0) + 1);
  return [...n].sort((a, b) => b[1] - a[1]).map(([o, c]) => (c > 1 ? `${o}×${c}` : o)).join(' ') || '-';
}

export function clientSaw(calls: CallRecord[]): string {
  const of = (what: CallRecord['what']) => calls.filter((c) => c.what === what).map((c) => c.outcome);
  return `sync ${counts(of('simulate'))}; commit ${runs(of('commit'))}; reads ${counts(of('read'))}`;
}

export function longestHang(calls: CallRecord[]): string {
  const ms = Math.max(0, ...calls.map((c) => c.ms));
  return calls.some((c) => c.outcome === 'timeout') ? `≥${CALL_TIMEOUT_MS / 1000} s (gave up)` : `${(ms / 1000).toFixed(1)} s`;
}

export function table(rows: WindowResult[]): string {
  const head = ['fault', 'link', 'what the client saw', 'events lost', 'writes doubled', 'longest hang'];
  const body = rows.map((r) => r.refused
    ? [r.fault, r.link, `not made: ${r.refused}`, '-', '-', '-']
    : [`${r.fault}${r.packets ? ` (${r.packets.hit}/${r.packets.crossed} pkts ${r.fault.includes('delay') ? 'held' : 'dropped'})` : ''}`, r.link, clientSaw(r.calls) + (r.notes.length ? ` (${r.notes.join('; ')})` : ''), String(r.eventsLost), String(r.writesDoubled), longestHang(r.calls)]);
  const line = (cells: string[]) => `| ${cells.join(' | ')} |`;
  return [line(head), line(head.map(() => '---')), ...body.map(line)].join('\n');
}
