import { parsedRawJson, RawJson, toJsonBuffer, toJsonText, toPlainJson } from './raw-json';

describe('JSON kept as text', () => {
  const page = {
    tickets: [new RawJson('{"id":"a","summary":"Été 😀 \\u0000","raw":{"k": [1, 2]}}'), new RawJson('{"id":"b"}')],
    sandbox: true, next_cursor: null, note: 'ü\u2028"',
  };

  it('the answer body is the UTF-8 of the text toJsonText writes, the stored texts spliced in as they are', () => {
    expect(toJsonBuffer(page).toString('utf8')).toBe(toJsonText(page));
    expect(toJsonText(page)).toBe('{"tickets":[{"id":"a","summary":"Été 😀 \\u0000","raw":{"k": [1, 2]}},{"id":"b"}],"sandbox":true,"next_cursor":null,"note":"ü\u2028\\""}');
    expect(toJsonBuffer({ a: 1, b: ['x'] }).toString('utf8')).toBe('{"a":1,"b":["x"]}');
    // A string that looks like a placeholder is written as the string it is.
    expect(toJsonBuffer({ s: '\u0001abc:0\u0001', r: new RawJson('1') }).toString('utf8')).toBe('{"s":"\\u0001abc:0\\u0001","r":1}');
  });

  it('parsedRawJson gives the same value with every stored text parsed, and leaves a value without any as it is', () => {
    const parsed = parsedRawJson(page) as { tickets: { id: string; raw: unknown }[] };
    expect(parsed.tickets[0]).toEqual({ id: 'a', summary: 'Été 😀 \u0000', raw: { k: [1, 2] } });
    expect(parsed).toEqual(toPlainJson(page));
    expect(page.tickets[0]).toBeInstanceOf(RawJson); // the answer itself is not changed
    const plain = { a: [{ b: 1 }], d: new Date(0) };
    expect(parsedRawJson(plain)).toBe(plain);
    expect(parsedRawJson(new RawJson('[1]'))).toEqual([1]);
  });
});
