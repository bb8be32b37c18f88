/** The stored-text escape is exact: every JS string round-trips, and the stored form is text PostgreSQL takes. */
import { escapeStored, escapeStoredText, unescapeStoredJsonText, unescapeStoredText } from './stored-text';

/** Strings PostgreSQL refuses in text or jsonb: NUL, or a lone surrogate. */
// eslint-disable-next-line no-control-regex -- NUL is what it finds
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

const SAMPLES = [
  '', 'plain', 'a\u0000b', '\u0000', '\ud800', '\udc00', 'x\ud800', '\udc00x', '\ud83d\ude00 pair', '\ud800\ud800\udc00',
  '\uffff', '\uffff0000', 'lit \\u0000 text', '\u0000\uffff\ud800\udfff\udfff', 'ünïcødé \u0001',
];

function randomString(seed: number): string {
  const pool = ['a', '\u0000', '\ud800', '\udc00', '\uffff', '0', 'f', '\ud83d\ude00', '\\', 'u'];
  let s = '';
  let x = seed;
  for (let i = 0; i < 12; i++) { x = (x * 1103515245 + 12345) & 0x7fffffff; s += pool[x % pool.length]; }
  return s;
}

describe('stored text escape', () => {
  it('round-trips every sample and leaves nothing PostgreSQL refuses', () => {
    const all = [...SAMPLES, ...Array.from({ length: 500 }, (_, i) => randomString(i + 1))];
    for (const s of all) {
      const e = escapeStoredText(s);
      expect(UNSTORABLE.test(e)).toBe(false);
      expect(unescapeStoredText(e)).toBe(s);
    }
  });

  it('leaves well-formed text without U+FFFF as it is (same object for clean payloads)', () => {
    expect(escapeStoredText('Printer jams \ud83d\ude00')).toBe('Printer jams \ud83d\ude00');
    const clean = { a: ['x', { b: 1, c: null }], d: new Date(0) };
    expect(escapeStored(clean)).toBe(clean);
  });

  it('escapes keys and nested values; the JSON text of the stored value decodes to the original', () => {
    const native = { ['k\u0000']: ['\ud800', { deep: 'a\u0000' }], ok: 'fine', lit: '\uffff', ...JSON.parse('{"__proto__": "p\\u0000"}') };
    const stored = escapeStored(native);
    // What jsonb refuses is JSON's \u0000 and a lone surrogate escape; neither is left.
    expect(JSON.stringify(stored)).not.toMatch(/\\u0000|\\ud[89a-f][0-9a-f]{2}/);
    expect(Object.keys(stored)).toContain('__proto__');
    expect(JSON.parse(unescapeStoredJsonText(JSON.stringify(stored)))).toEqual(native);
  });
});
