/**
 * The simulator takes its request and answer shapes from BMS's own OpenAPI ("BMS API 2.0", the trimmed
 * copy in fixtures/vendor-api/kaseyabms): a body is checked against the operation's input schema as
 * ASP.NET binds it (required members, member types, and no member the schema does not name: the
 * document declares `additionalProperties: false` on every input DTO), and an answer carries exactly the
 * members of the operation's output DTO.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fixturesDir } from '../../shared/project-root';
import { invalid } from './envelope';
import type { BmsRecord } from './store';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

let doc: Json | null = null;
function spec(): Json {
  doc ??= JSON.parse(fs.readFileSync(path.join(fixturesDir(), 'vendor-api', 'kaseyabms', 'bms-api-2.0.json'), 'utf8'));
  return doc;
}

export function schemaNamed(name: string): Json {
  const s = spec().components.schemas[name];
  if (!s) throw new Error(`BMS schema ${name} is not in the trimmed document`);
  return s;
}

function deref(s: Json): Json {
  return s?.$ref ? schemaNamed(String(s.$ref).split('/').pop()!) : s;
}

/** The input schema of an operation (JSON body), by the document's path template. */
export function inputSchema(method: string, template: string): Json {
  const op = spec().paths[template]?.[method.toLowerCase()];
  const content = op?.requestBody?.content;
  if (!content) throw new Error(`BMS ${method} ${template} takes no body`);
  return deref((content['application/json'] ?? Object.values(content)[0]).schema);
}

const TYPE_NAMES: Record<string, string> = { integer: 'Int32', number: 'Double', boolean: 'Boolean', string: 'String' };

const INT32_MIN = -2_147_483_648;
const INT32_MAX = 2_147_483_647;
/** A TimeSpan of one day as the document's `date-span` carries a time of day: hh:mm[:ss], hours 0-23, minutes and seconds 0-59. */
const TIME_OF_DAY = /^([01]?\d|2[0-3]):[0-5]\d(:[0-5]\d)?$/;

function typeProblem(s: Json, v: unknown, where: string): string | null {
  if (v === null) return s.nullable || s.$ref ? null : `The value null is not valid for ${where}.`;
  const t = deref(s);
  const ok = (
    t.type === 'integer' ? Number.isInteger(v)
      : t.type === 'number' ? typeof v === 'number' && Number.isFinite(v)
        : t.type === 'boolean' ? typeof v === 'boolean'
          : t.type === 'string' ? typeof v === 'string' && (t.format !== 'date-time' && t.format !== 'date' || !Number.isNaN(Date.parse(v)))
            && (t.format !== 'date-span' || TIME_OF_DAY.test(v))
            : t.type === 'array' ? Array.isArray(v) : t.type === 'object' || t.properties ? typeof v === 'object' && !Array.isArray(v) : true
  );
  if (!ok) return `Error converting value ${JSON.stringify(v)} to type '${TYPE_NAMES[t.type] ?? t.type}'. Path '${where}'.`;
  // Json.NET binds an int32 member only within its range; [Range] then checks the document's bounds.
  if (t.type === 'integer' && t.format !== 'int64' && ((v as number) < INT32_MIN || (v as number) > INT32_MAX)) {
    return `JSON integer ${String(v)} is too large or small for an Int32. Path '${where}'.`;
  }
  if (typeof v === 'number' && ((t.minimum !== undefined && v < t.minimum) || (t.maximum !== undefined && v > t.maximum))) {
    return `The field ${where.split('.').pop()} must be between ${t.minimum ?? '-∞'} and ${t.maximum ?? '∞'}.`;
  }
  if (typeof v === 'string' && t.minLength !== undefined && v.length < t.minLength) {
    return `The field ${where.split('.').pop()} must be a string with a minimum length of ${t.minLength}.`;
  }
  if (t.enum && !t.enum.includes(v)) return `Requested value '${String(v)}' was not found. Path '${where}'.`;
  if (t.properties && typeof v === 'object') return objectProblems(t, v as BmsRecord, `${where}.`)[0] ?? null;
  if (t.type === 'array') for (const [i, x] of (v as unknown[]).entries()) { const p = typeProblem(t.items, x, `${where}[${i}]`); if (p) return p; }
  return null;
}

function objectProblems(s: Json, body: BmsRecord, prefix = ''): string[] {
  const props: Record<string, Json> = s.properties ?? {};
  const problems: string[] = [];
  for (const k of Object.keys(body)) {
    if (!(k in props)) problems.push(`Could not find member '${k}' on object of type '${prefix ? 'object' : 'input'}'. Path '${prefix}${k}'.`);
  }
  // [Required] refuses null, and a string that is empty or only white space.
  const absent = (v: unknown) => v === undefined || v === null || (typeof v === 'string' && v.trim() === '');
  for (const k of s.required ?? []) if (absent(body[k])) problems.push(`The ${k} field is required.`);
  for (const [k, v] of Object.entries(body)) if (k in props) { const p = typeProblem(props[k], v, `${prefix}${k}`); if (p) problems.push(p); }
  return problems;
}

/**
 * What is wrong with `value` as member `member` of the input DTO `schemaName` (a JSON Patch value is bound
 * to the member it replaces), or null.
 */
export function memberProblem(schemaName: string, member: string, value: unknown): string | null {
  const prop = schemaNamed(schemaName).properties?.[member];
  return prop ? typeProblem(prop, value, member) : `Could not find member '${member}' on object of type '${schemaName}'.`;
}

/** Refuses a body its operation's schema would not bind (an object, or an array of them), as a BMS validation error. */
export function checkBody(method: string, template: string, body: unknown): void {
  const s = inputSchema(method, template);
  const fail = (problems: string[]) => { if (problems.length) throw invalid('One or more validation errors occurred.', problems); };
  if (s.type === 'array') {
    if (!Array.isArray(body)) throw invalid('One or more validation errors occurred.', ['The input must be an array.']);
    const item = deref(s.items);
    for (const b of body) {
      if (!b || typeof b !== 'object' || Array.isArray(b)) throw invalid('One or more validation errors occurred.', ['Each element must be an object.']);
      fail(item.properties ? objectProblems(item, b as BmsRecord) : []);
    }
    return;
  }
  if (!body || typeof body !== 'object' || Array.isArray(body)) throw invalid('One or more validation errors occurred.', ['A non-empty request body is required.']);
  fail(objectProblems(s, body as BmsRecord));
}

/** A stored record cut to the members of an output DTO (absent members answered as null). */
export function project(schemaName: string, rec: BmsRecord): BmsRecord {
  const out: BmsRecord = {};
  for (const k of Object.keys(schemaNamed(schemaName).properties ?? {})) out[k] = rec[k] === undefined ? null : structuredClone(rec[k]);
  return out;
}
