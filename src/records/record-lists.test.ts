import { openDatabase, type Database } from '../db/database';
import { testDatabaseOptions } from '../../test/support/runtime';
import { RECORD_LISTS, recordWriter, selectedFields, timeText, type RecordRow } from './record-lists';
import { toRfc3339 } from '../shared/dates';

describe('record fields', () => {
  let db: Database;
  beforeAll(async () => { db = await openDatabase(testDatabaseOptions()); }, 60_000);
  afterAll(async () => { await db?.close(); });

  it('a time selected as the store selects it is written as toRfc3339 writes the same time read as a Date', async () => {
    const times = [
      '2026-11-26 15:37:07+00', '2026-11-26 15:37:07.1+00', '2026-11-26 15:37:07.12+00', '2026-11-26 15:37:07.123+00',
      '2026-11-26 15:37:07.1239+00', '2026-11-26 15:37:07.000999+00', '2026-11-26 15:37:07.999999+00', '2024-02-29 23:59:59.5-05:30',
      '1970-01-01 00:00:00+00', '0099-03-01 12:00:00+00', '12026-01-01 00:00:00.25+00', '0044-03-15 12:00:00+00 BC',
    ];
    const [{ column, sql }] = selectedFields({ ...RECORD_LISTS.incidents, fields: { opened_at: RECORD_LISTS.incidents.fields.opened_at } });
    const rows: { t: Date; [c: string]: unknown }[] = await db.dataSource.query(
      `SELECT r.opened_at AS t, ${sql} AS ${column} FROM unnest($1::timestamptz[]) AS r(opened_at)`, [times]);
    expect(rows.map((r) => timeText(r[column] as string))).toEqual(rows.map((r) => toRfc3339(r.t)));
    expect(timeText('2026-11-26 15:37:07.1')).toBe('2026-11-26T15:37:07.100Z');
    expect(timeText('2026-11-26 15:37:07.0004')).toBe('2026-11-26T15:37:07Z');
  });

  it('a record is written as JSON of its fields, any text escaped, and ends with its vendor payload twice', () => {
    const write = recordWriter(RECORD_LISTS.devices);
    const row: RecordRow = {
      id: 'd1', connection_id: 'c1', source_id: 'src "1"', raw: '{"n": 1}', synced_at: '2026-01-02 03:04:05.5',
      f0: 'd1', f2: 'src "1"', f3: 'host\\name\n\u0001', f4: null, f5: 'c-1', f6: 'Windows 😀', f7: true, f8: false, f9: 3, f10: '2026-01-02 03:04:05',
    };
    expect(JSON.parse(write(row, '"ninjaone"'))).toEqual({
      id: 'd1', source: 'ninjaone', source_id: 'src "1"', hostname: 'host\\name\n\u0001', company_name: null, company_source_id: 'c-1',
      os: 'Windows 😀', online: true, needs_attention: false, patches_pending: 3, last_contact_at: '2026-01-02T03:04:05Z',
      raw: { n: 1 }, synced_at: '2026-01-02T03:04:05.500Z', vendor: { connector: 'ninjaone', native_id: 'src "1"', native: { n: 1 } },
    });
  });
});
