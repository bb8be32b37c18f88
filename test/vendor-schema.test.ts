/**
 * The rewriting of Swagger 2.0 / OpenAPI 3.0 schemas the vendor contract check relies on
 * (test/support/vendor-schema.ts), on small documents that use what the vendors' documents use or may use.
 */
import { coerce, RequestSchemas } from './support/vendor-schema';

let seq = 0;
const schemasOf = (spec: object, options: { caseInsensitive?: boolean } = {}) => new RequestSchemas(spec, { id: `https://vendor-api.invalid/test-${++seq}.json`, ...options });

describe('OpenAPI 3.0 schemas, as their specification reads them', () => {
  const spec = {
    openapi: '3.0.1',
    components: {
      schemas: {
        Base: { type: 'object', required: ['name'], properties: { id: { type: 'integer', readOnly: true }, name: { type: 'string' } } },
        Child: { allOf: [{ $ref: '#/components/schemas/Base' }, { type: 'object', properties: { size: { type: 'integer', maximum: 10, exclusiveMaximum: true } } }] },
        Note: {
          type: 'object', required: ['id', 'text'],
          properties: {
            id: { type: 'integer', readOnly: true },
            text: { type: 'string', nullable: true },
            kind: { type: 'string', enum: ['a', 'b'], nullable: true },
            // A sibling of $ref is ignored in OpenAPI 3.0.
            base: { $ref: '#/components/schemas/Base', nullable: true },
            anything: { nullable: true },
            map: { type: 'object', additionalProperties: { type: 'integer' } },
          },
        },
      },
    },
  };
  const s = schemasOf(spec);
  const note = { $ref: '#/components/schemas/Note' };

  it('admits null where nullable says so, and only there', () => {
    expect(s.problems(note, { text: null, kind: null, anything: null }, 'body')).toEqual([]);
    expect(s.problems(note, { text: 'x', base: null }, 'body')).toEqual(['body /base must be object, was null']);
    expect(s.problems(note, { text: 'x', kind: 'c' }, 'body')).toEqual(['body /kind must be one of "a", "b", null, was "c"']);
  });

  it('never requires a read-only property of a request, and refuses one sent', () => {
    expect(s.problems(note, { text: 'x' }, 'body')).toEqual([]);
    expect(s.problems(note, { id: 4, text: 'x' }, 'body')).toEqual(['body /id is read-only in the document\'s schema, a request does not send it']);
  });

  it('closes a named object where it is used, allOf as a whole, and leaves maps open', () => {
    const child = { $ref: '#/components/schemas/Child' };
    expect(s.problems(child, { name: 'n', size: 3 }, 'body')).toEqual([]);
    expect(s.problems(child, { name: 'n', colour: 'red' }, 'body')).toEqual(['body /colour is not in the document\'s schema']);
    expect(s.problems(note, { text: 'x', base: { name: 'n', extra: 1 } }, 'body')).toEqual(['body /base/extra is not in the document\'s schema']);
    expect(s.problems(note, { text: 'x', map: { a: 1, b: 'two' } }, 'body')).toEqual(['body /map/b must be integer, was "two"']);
  });

  it('reads a boolean exclusiveMaximum as a bound on the maximum beside it', () => {
    const child = { $ref: '#/components/schemas/Child' };
    expect(s.problems(child, { name: 'n', size: 9 }, 'body')).toEqual([]);
    expect(s.problems(child, { name: 'n', size: 10 }, 'body')).toEqual(['body /size must be < 10, was 10']);
  });
});

describe('Swagger 2.0 schemas', () => {
  const spec = {
    swagger: '2.0',
    definitions: { Item: { type: 'object', properties: { Id: { type: 'integer', format: 'int64' }, Title: { type: 'string', 'x-nullable': true } } } },
  };

  it('compares property names without regard to case where the document asks, and reports them as sent', () => {
    const s = schemasOf(spec, { caseInsensitive: true });
    const item = { $ref: '#/definitions/Item' };
    expect(s.problems(item, { id: 1, title: null }, 'body')).toEqual([]);
    expect(s.problems(item, { id: '1', Colour: 'x' }, 'body')).toEqual(['body /id must be integer, was "1"', 'body /Colour is not in the document\'s schema']);
  });
});

describe('query and path values', () => {
  const resolve = (n: unknown) => n;

  it('are read by the declared type, and stay text when they are not of it', () => {
    expect(coerce('42', { type: 'integer' }, resolve)).toBe(42);
    expect(coerce('-1.5e2', { type: 'number' }, resolve)).toBe(-150);
    expect(coerce('true', { type: 'boolean' }, resolve)).toBe(true);
    expect(coerce('yes', { type: 'boolean' }, resolve)).toBe('yes');
    expect(coerce('42', { type: 'string' }, resolve)).toBe('42');
    expect(coerce('', { type: 'integer' }, resolve)).toBe('');
  });
});
