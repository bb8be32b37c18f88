/**
 * Connectors declare what they can do, so nothing outside src/connectors/<vendor>/, src/simulators/
 * and fixtures/ names a vendor: this fails when a source file elsewhere does (tests excluded; they
 * exercise the vendors by name on purpose).
 */
import fs from 'node:fs';
import path from 'node:path';

const ROOT = path.join(__dirname, '..');
const VENDOR = /connect\s?wise|auto\s?task|halo\s?psa|\bhalo\b|ninja\s?one|ninjarmm|pax8|datto|centrastage|kaseya|\bbms\b/i;
const ALLOWED = [/^src\/connectors\//, /^src\/simulators\//, /^fixtures\//];

function files(dir: string): string[] {
  return fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((e) => {
    const rel = path.posix.join(dir, e.name);
    if (e.isDirectory()) return files(rel);
    return /\.(ts|js)$/.test(e.name) && !/\.test\.ts$/.test(e.name) ? [rel] : [];
  });
}

it('no source file outside the connector, simulator and fixture folders names a vendor', () => {
  const scanned = ['src', 'entities', 'jobs'].flatMap(files);
  expect(scanned.length).toBeGreaterThan(50);
  const offenders = scanned
    .filter((f) => !ALLOWED.some((a) => a.test(f)))
    .flatMap((f) => fs.readFileSync(path.join(ROOT, f), 'utf8').split('\n').map((line, i) => ({ f, i: i + 1, line }))
      .filter(({ line }) => VENDOR.test(line)).map(({ f, i, line }) => `${f}:${i}: ${line.trim()}`));
  expect(offenders).toEqual([]);
});

it('the scan would catch a vendor name (the pattern is not blind)', () => {
  for (const name of ['ConnectWise', 'Autotask', 'HaloPSA', 'NinjaOne', 'Pax8', 'Datto RMM', 'DattoRMM', 'Kaseya BMS', 'BMS']) expect(VENDOR.test(`// ${name} says`)).toBe(true);
});
