/**
 * A vendor document's schemas as JSON Schema 2020-12, for checking the requests a connector sends
 * (test/support/vendor-contract.ts). Swagger 2.0 and OpenAPI 3.0 write their schemas in a dialect of an
 * older draft, so each document's schemas are rewritten once, the way those specifications define them:
 * `nullable` / `x-nullable` admit null, boolean `exclusiveMaximum` / `exclusiveMinimum` bound the limit
 * beside them, a `$ref` ignores its siblings (OpenAPI 3.0 section 4.7.24, Swagger 2.0 "Reference Object"),
 * and a `readOnly` property is one a request does not send ("SHOULD NOT be sent as part of the request")
 * and is never required of it.
 *
 * Two rules are the check's own, not the specifications': an object schema that names its properties and
 * says nothing of others is closed where it is used (a request property the vendor does not name is a
 * property the vendor ignores or refuses), and a document marked case-insensitive compares property names
 * without regard to case.
 */
import Ajv2020, { type ErrorObject, type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { fullFormats } from 'ajv-formats/dist/formats';

type Json = any;

export type Dialect = 'swagger-2.0' | 'openapi-3.0' | 'openapi-3.1';

export function dialectOf(spec: Json): Dialect {
  if (typeof spec.swagger === 'string') return 'swagger-2.0';
  return /^3\.0\./.test(String(spec.openapi)) ? 'openapi-3.0' : 'openapi-3.1';
}

export interface SchemaSetOptions {
  /** The document's own identity (an absolute URI): every `$ref` of the document resolves inside it. */
  id: string;
  caseInsensitive?: boolean;
  /**
   * Schemas replaced at a JSON pointer of the document before it is read, each for a fact the vendor
   * documents elsewhere (the caller names the page).
   */
  corrections?: Record<string, Json>;
}

/** One shared Ajv: every document's schemas are added to it under their own id. */
function newAjv(): Ajv2020 {
  const ajv = new Ajv2020({ strict: false, allErrors: true, verbose: true, logger: false, validateSchema: false });
  addFormats(ajv);
  // A property the document marks read-only: any value sent for it is a problem.
  ajv.addKeyword({
    keyword: 'x-contract-read-only',
    errors: true,
    validate: function readOnly(this: unknown) {
      (readOnly as unknown as { errors: Partial<ErrorObject>[] }).errors = [{ keyword: 'x-contract-read-only', message: 'is read-only in the document\'s schema', params: {} }];
      return false;
    },
  });
  return ajv;
}

function pointerGet(doc: Json, pointer: string): Json {
  return pointer.slice(pointer.indexOf('/') + 1).split('/').reduce((o: Json, s: string) => (o == null ? o : o[s.replace(/~1/g, '/').replace(/~0/g, '~')]), doc);
}

function pointerSet(doc: Json, pointer: string, value: Json): void {
  const parts = pointer.split('/').slice(1).map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
  const last = parts.pop()!;
  const parent = parts.reduce((o: Json, s: string) => (o[s] ??= {}), doc);
  parent[last] = value;
}

/** The schemas of one document, rewritten for requests, and the validators compiled from them. */
export class RequestSchemas {
  private static ajv: Ajv2020 | null = null;
  private readonly ajv: Ajv2020;
  private readonly dialect: Dialect;
  /** The document with its corrections applied: the one every operation is read from. */
  readonly spec: Json;
  /** Formats the document declares that no validator knows: reported, never silently passed. */
  readonly uncheckedFormats = new Set<string>();

  constructor(spec: Json, private readonly options: SchemaSetOptions) {
    RequestSchemas.ajv ??= newAjv();
    this.ajv = RequestSchemas.ajv;
    this.dialect = dialectOf(spec);
    this.spec = structuredClone(spec);
    for (const [pointer, schema] of Object.entries(options.corrections ?? {})) pointerSet(this.spec, pointer, schema);
    const root: Json = { $id: options.id };
    if (this.spec.definitions) root.definitions = this.mapValues(this.spec.definitions);
    if (this.spec.components?.schemas) root.components = { schemas: this.mapValues(this.spec.components.schemas) };
    if (!this.ajv.getSchema(options.id)) this.ajv.addSchema(root);
  }

  private mapValues(defs: Record<string, Json>): Record<string, Json> {
    return Object.fromEntries(Object.entries(defs).map(([k, v]) => [k, this.convert(v, 'part')]));
  }

  /** Follows `$ref`s inside the (corrected) document. */
  resolve(node: Json, depth = 0): Json {
    if (!node || typeof node !== 'object' || depth > 20 || typeof node.$ref !== 'string') return node;
    return this.resolve(pointerGet(this.spec, node.$ref), depth + 1);
  }

  /** True when the schema names its properties (itself or through allOf) and admits no others. */
  private closes(node: Json, depth = 0): boolean {
    const s = this.resolve(node);
    if (!s || typeof s !== 'object' || depth > 10) return false;
    if (s.additionalProperties !== undefined) return false;
    if (!s.properties && !s.allOf) return false;
    return (s.allOf ?? []).every((p: Json) => this.closes(p, depth + 1) || this.resolve(p)?.additionalProperties === false);
  }

  private isReadOnly(node: Json): boolean {
    return node?.readOnly === true || this.resolve(node)?.readOnly === true;
  }

  /**
   * `use`: the schema stands for a value (a body, a property, an item), so a closed one is closed here;
   * `part`: it is one of allOf/oneOf/anyOf (or a named definition), which the schema using it closes.
   */
  convert(node: Json, context: 'use' | 'part'): Json {
    if (node === true || node === false || !node || typeof node !== 'object') return node;
    if (Array.isArray(node)) return node.map((n) => this.convert(n, context));
    const close = context === 'use' && this.closes(node);
    if (typeof node.$ref === 'string') {
      const ref = `${this.options.id}${node.$ref}`;
      if (this.dialect !== 'openapi-3.1') return close ? { $ref: ref, unevaluatedProperties: false } : { $ref: ref };
    }
    const out: Json = {};
    for (const [key, value] of Object.entries<Json>(node)) {
      if (key === '$ref') out.$ref = `${this.options.id}${value}`;
      else if (key === 'properties') out.properties = this.properties(value);
      else if (key === 'required' && Array.isArray(value)) out.required = value.filter((n) => !this.isReadOnly(node.properties?.[n])).map((n) => this.name(n));
      else if (['allOf', 'oneOf', 'anyOf', 'not'].includes(key)) out[key] = this.convert(value, 'part');
      else if (['items', 'additionalProperties', 'prefixItems', 'contains'].includes(key)) out[key] = this.convert(value, 'use');
      else if (key === 'type' && value === 'file') continue;
      else if (key === 'format' && typeof value === 'string') {
        if (!(value in fullFormats) && !this.ajv.formats[value]) this.ajv.addFormat(value, true);
        if (!(value in fullFormats)) this.uncheckedFormats.add(value);
        out.format = value;
      } else out[key] = value;
    }
    if (close) out.unevaluatedProperties = false;
    return this.dialect === 'openapi-3.1' ? out : this.olderDialect(node, out);
  }

  /** Swagger 2.0 / OpenAPI 3.0 keywords whose meaning JSON Schema 2020-12 spells otherwise. */
  private olderDialect(node: Json, out: Json): Json {
    for (const [bound, limit] of [['exclusiveMaximum', 'maximum'], ['exclusiveMinimum', 'minimum']] as const) {
      if (typeof node[bound] !== 'boolean') continue;
      delete out[bound];
      if (node[bound] && typeof node[limit] === 'number') { out[bound] = node[limit]; delete out[limit]; }
    }
    // Ajv reads `nullable` itself only beside a `type`: the rewrite spells it out and drops the keyword.
    delete out.nullable;
    delete out['x-nullable'];
    if (node.nullable !== true && node['x-nullable'] !== true) return out;
    if (Array.isArray(out.enum) && !out.enum.includes(null)) out.enum = [...out.enum, null];
    if (typeof out.type === 'string') out.type = [out.type, 'null'];
    else if (Array.isArray(out.type)) out.type = [...new Set([...out.type, 'null'])];
    // Without a type, the schema admits anything already (null included) unless it composes others.
    else if (out.allOf || out.oneOf || out.anyOf || out.$ref) return { anyOf: [out, { type: 'null' }] };
    return out;
  }

  private properties(props: Record<string, Json>): Record<string, Json> {
    return Object.fromEntries(Object.entries(props).map(([name, schema]) => [
      this.name(name),
      this.isReadOnly(schema) ? { 'x-contract-read-only': true } : this.convert(schema, 'use'),
    ]));
  }

  private name(n: string): string {
    return this.options.caseInsensitive ? n.toLowerCase() : n;
  }

  private readonly compiled = new Map<Json, ValidateFunction>();

  /** A validator for a schema of this document (a body's, a parameter's), the schema standing for a value. */
  validator(schema: Json): ValidateFunction {
    let v = this.compiled.get(schema);
    if (!v) {
      v = this.ajv.compile(this.convert(schema, 'use'));
      this.compiled.set(schema, v);
    }
    return v;
  }

  /**
   * The problems of `value` against `schema`, each `<where> <JSON pointer> <what>` (`body /contacts/0/email
   * is required`). A case-insensitive document compares the value's property names in lower case; the
   * pointers keep the names as sent.
   */
  problems(schema: Json, value: unknown, where: string): string[] {
    const pointers = new Map<string, string>();
    const data = this.options.caseInsensitive ? lowerKeys(value, '', '', pointers) : value;
    const v = this.validator(schema);
    if (v(data)) return [];
    const sent = (p: string) => pointers.get(p) ?? p;
    const out = new Set<string>();
    for (const e of v.errors ?? []) {
      const at = (child?: string) => {
        const lowered = e.instancePath + (child === undefined ? '' : `/${child.replace(/~/g, '~0').replace(/\//g, '~1')}`);
        const p = sent(lowered);
        return p ? `${where} ${p}` : where;
      };
      out.add(describe(e, at));
    }
    return [...out];
  }
}

function show(value: unknown): string {
  const text = JSON.stringify(value);
  return text === undefined ? String(value) : text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

function describe(e: ErrorObject, at: (child?: string) => string): string {
  const p = e.params as Record<string, any>;
  switch (e.keyword) {
    case 'required': return `${at(p.missingProperty)} is required`;
    case 'unevaluatedProperties':
    case 'additionalProperties': return `${at(p.unevaluatedProperty ?? p.additionalProperty)} is not in the document's schema`;
    case 'type': return `${at()} must be ${[p.type].flat().join(' or ')}, was ${show(e.data)}`;
    case 'enum': return `${at()} must be one of ${(p.allowedValues as unknown[]).map(show).join(', ')}, was ${show(e.data)}`;
    case 'format': return `${at()} must be a "${p.format}", was ${show(e.data)}`;
    case 'x-contract-read-only': return `${at()} is read-only in the document's schema, a request does not send it`;
    default: return `${at()} ${e.message}${e.data !== undefined && typeof e.data !== 'object' ? `, was ${show(e.data)}` : ''}`;
  }
}

/** A copy with every property name in lower case; `pointers` maps each lowered pointer to the one sent. */
function lowerKeys(value: unknown, lowered: string, sent: string, pointers: Map<string, string>): unknown {
  pointers.set(lowered, sent);
  if (Array.isArray(value)) return value.map((v, i) => lowerKeys(v, `${lowered}/${i}`, `${sent}/${i}`, pointers));
  if (!value || typeof value !== 'object') return value;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => {
    const esc = (s: string) => s.replace(/~/g, '~0').replace(/\//g, '~1');
    return [k.toLowerCase(), lowerKeys(v, `${lowered}/${esc(k.toLowerCase())}`, `${sent}/${esc(k)}`, pointers)];
  }));
}

/**
 * A query or path value as the schema's type reads it (OpenAPI 3 "Style Values": a `form` query or a
 * `simple` path parameter carries a primitive as its text): a number, a boolean, else the text itself,
 * which the schema then refuses if it wanted another type.
 */
export function coerce(text: string, schema: Json, resolve: (n: Json) => Json): unknown {
  const s = resolve(schema) ?? {};
  const types: string[] = [s.type ?? []].flat();
  if ((types.includes('integer') || types.includes('number')) && /^-?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(text)) return Number(text);
  if (types.includes('boolean') && (text === 'true' || text === 'false')) return text === 'true';
  return text;
}
