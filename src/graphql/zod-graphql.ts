/**
 * The typed GraphQL graph, derived from the operation declarations: each zod schema becomes a
 * type-graphql class (object or input type, named by its OpenAPI name), each operation a Query or
 * Mutation whose arguments are its path and query parameters and its body (`input`, or the body's
 * fields when the operation flattens it). Opaque JSON is refused here, except for the vendor payload
 * fields (PAYLOAD_FIELDS): building the schema fails if any other field would need it.
 */
import { getOpenApiMetadata, getRefId } from '@asteasolutions/zod-to-openapi';
import { GraphQLScalarType, Kind, type ValueNode } from 'graphql';
import { GraphQLJSON, GraphQLJSONObject } from 'graphql-scalars';
import { Arg, createUnionType, Ctx, Field, Float, ID, InputType, Int, Mutation, ObjectType, Query, registerEnumType, Resolver, type ClassType } from 'type-graphql';
import type { ZodType } from 'zod';
import type { Operation } from '../operations/operation';
import { withAuditSurface } from '../operations/audit-context';
import { runOperation } from '../operations/runner';
import { selectableFields } from '../shared/field-selection';
import { parsedRawJson } from '../shared/raw-json';
import type { GraphContext } from './context';

/** The only fields that may carry free-form JSON: vendor payloads and free-form detail. */
export const PAYLOAD_FIELDS = new Set(['raw', 'native', 'vendor_native', 'detail', 'body']);

/** A vendor payload object (records' `raw`, `vendor.native`; `vendor_native` in; `detail`). */
export const PayloadObject = new GraphQLScalarType({
  ...GraphQLJSONObject.toConfig(),
  name: 'JSONObject',
  description: 'A vendor payload or free-form detail object, verbatim.',
});

/** A vendor request body in a preview: an object, or an array (JSON Patch, batch writes). */
export const PayloadValue = new GraphQLScalarType({
  ...GraphQLJSON.toConfig(),
  name: 'JSON',
  description: 'A vendor request body, exactly as the commit sends it.',
  parseLiteral: (ast: ValueNode, vars) => GraphQLJSON.parseLiteral(ast, vars),
});
void Kind;

type Def = { type: string; [k: string]: any };
const def = (s: ZodType): Def => (s as any)._zod.def as Def;

interface Unwrapped {
  inner: ZodType;
  nullable: boolean;
  hasDefault: boolean;
  description?: string;
}

function describe(s: ZodType): string | undefined {
  return (getOpenApiMetadata(s as never) as { description?: string }).description ?? (s as { description?: string }).description;
}

function unwrap(schema: ZodType): Unwrapped {
  let s = schema;
  let nullable = false;
  let hasDefault = false;
  let description = describe(s);
  for (;;) {
    const d = def(s);
    if (d.type === 'optional' || d.type === 'nullable') { nullable = true; s = d.innerType; }
    else if (d.type === 'default' || d.type === 'prefault') { hasDefault = true; s = d.innerType; }
    else if (d.type === 'pipe') { s = d.out; }
    else if (d.type === 'readonly') { s = d.innerType; }
    else break;
    description ??= describe(s);
  }
  return { inner: s, nullable, hasDefault, description };
}

const pascal = (s: string) => s.replace(/(^|[_\-. ])(\w)/g, (_m, _p, c: string) => c.toUpperCase());

function isInt(s: ZodType): boolean {
  return (def(s).checks ?? []).some((c: any) => ['safeint', 'int32', 'int64', 'uint32'].includes(c?._zod?.def?.format));
}

type TypeThunk = () => any;

export class GraphTypeFactory {
  private readonly outputs = new Map<ZodType, any>();
  private readonly inputs = new Map<ZodType, any>();
  private readonly taken = new Set<string>();
  private readonly enums = new Map<ZodType, object>();

  private uniqueName(name: string): string {
    let n = name;
    for (let i = 2; this.taken.has(n); i++) n = `${name}${i}`;
    this.taken.add(n);
    return n;
  }

  /** The GraphQL type of a field: a thunk for type-graphql and whether it may be null. */
  field(schema: ZodType, nameHint: string, fieldName: string, mode: 'output' | 'input'): { type: TypeThunk; nullable: boolean; description?: string } {
    const u = unwrap(schema);
    const d = def(u.inner);
    const nullable = u.nullable || (mode === 'input' && u.hasDefault);
    if (d.type === 'array') {
      const item = this.field(d.element, nameHint, fieldName, mode);
      if (item.nullable) throw new Error(`${nameHint}.${fieldName}: list items must not be null`);
      return { type: () => [item.type()], nullable, description: u.description };
    }
    return { type: this.named(u.inner, nameHint, fieldName, mode), nullable, description: u.description };
  }

  private named(s: ZodType, nameHint: string, fieldName: string, mode: 'output' | 'input'): TypeThunk {
    const d = def(s);
    switch (d.type) {
      // Ids are ID, as GraphQL clients expect (they serialise as strings).
      case 'string': return /(^|_)id$/.test(fieldName) ? () => ID : () => String;
      case 'enum': {
        const e = this.enumType(s);
        return e ? () => e : () => String;
      }
      case 'number': return isInt(s) ? () => Int : () => Float;
      case 'boolean': return () => Boolean;
      case 'literal': {
        const v = d.values[0];
        return typeof v === 'boolean' ? () => Boolean : typeof v === 'number' ? () => Float : () => String;
      }
      case 'record':
      case 'unknown':
      case 'any':
        if (!PAYLOAD_FIELDS.has(fieldName)) throw new Error(`${nameHint}.${fieldName}: opaque JSON is allowed only for vendor payload fields (${[...PAYLOAD_FIELDS].join(', ')})`);
        return d.type === 'record' ? () => PayloadObject : () => PayloadValue;
      case 'object': {
        const cls = mode === 'output' ? this.objectType(s, `${nameHint}${pascal(fieldName)}`) : this.inputType(s, `${nameHint}${pascal(fieldName)}`);
        return () => cls;
      }
      case 'union': {
        const options = d.options as ZodType[];
        if (options.every((o) => def(o).type === 'literal' && typeof def(o).values[0] === 'string')) return () => String;
        if (mode === 'input') throw new Error(`${nameHint}.${fieldName}: a union cannot be an input`);
        const union = this.unionType(options, `${nameHint}${pascal(fieldName)}`);
        return () => union;
      }
      default:
        throw new Error(`${nameHint}.${fieldName}: no GraphQL type for zod ${d.type}`);
    }
  }

  /**
   * A named zod enum (`.openapi('Name')`) is a GraphQL enum, so tooling can discover its values; an
   * unnamed one stays String. Values must be GraphQL names already (the wire value is the name).
   */
  private enumType(s: ZodType): object | null {
    const ref = getRefId(s as never);
    if (!ref) return null;
    const known = this.enums.get(s);
    if (known) return known;
    const values = Object.values(def(s).entries as Record<string, string>);
    const bad = values.find((v) => !/^[_A-Za-z][_0-9A-Za-z]*$/.test(v));
    if (bad !== undefined) throw new Error(`${ref}: "${bad}" is not a GraphQL enum value name`);
    const e = Object.fromEntries(values.map((v) => [v, v]));
    registerEnumType(e, { name: this.uniqueName(ref), description: describe(s) });
    this.enums.set(s, e);
    return e;
  }

  objectType(schema: ZodType, fallbackName: string): any {
    return this.classOf(schema, 'output', (ref) => ref ?? fallbackName);
  }

  /** Input types are named after their schema (a body keeps its name; others get `Input`). */
  inputType(schema: ZodType, fallbackName: string): any {
    return this.classOf(schema, 'input', (ref) => (ref ? (/(Body|Input)$/.test(ref) ? ref : `${ref}Input`) : `${fallbackName}Input`));
  }

  /** The type-graphql class of an object schema, built once per schema and mode. */
  private classOf(schema: ZodType, mode: 'output' | 'input', nameOf: (ref: string | undefined) => string): any {
    const u = unwrap(schema);
    const s = u.inner;
    const cache = mode === 'output' ? this.outputs : this.inputs;
    const known = cache.get(s);
    if (known) return known;
    const name = this.uniqueName(nameOf(getRefId(s as never)));
    const cls = { [name]: class {} }[name];
    cache.set(s, cls);
    for (const [key, fieldSchema] of Object.entries(def(s).shape as Record<string, ZodType>)) {
      const f = this.field(fieldSchema, name, key, mode);
      Field(f.type, { nullable: f.nullable, description: f.description })(cls.prototype, key);
    }
    (mode === 'output' ? ObjectType : InputType)(name, { description: u.description })(cls);
    return cls;
  }

  /** A union of object schemas; the member is picked by the literal fields that tell them apart. */
  unionType(options: ZodType[], name: string): any {
    const members = options.map((o, i) => ({ schema: unwrap(o).inner, cls: this.objectType(o, `${name}Member${i + 1}`) }));
    const literals = members.map((m) => Object.entries(def(m.schema).shape as Record<string, ZodType>)
      .filter(([, f]) => def(f).type === 'literal').map(([k, f]) => [k, def(f).values[0]] as const));
    return createUnionType({
      name: this.uniqueName(name),
      types: () => members.map((m) => m.cls) as [any, ...any[]],
      resolveType: (value: Record<string, unknown>) => {
        const i = literals.findIndex((lits) => lits.every(([k, v]) => value[k] === v));
        const at = i >= 0 ? i : members.findIndex((m) => m.schema.safeParse(value).success);
        return members[Math.max(at, 0)].cls;
      },
    });
  }

  /** The GraphQL result type of an operation: its answer schema, or a union of several. */
  resultType(op: Operation): TypeThunk {
    const schemas = [...new Set(op.responses.map((r) => r.schema))].filter((s) => def(s).type !== 'null');
    if (schemas.length === 1) {
      const t = this.field(schemas[0], pascal(op.name), 'result', 'output');
      return t.type;
    }
    const union = this.unionType(schemas, `${pascal(op.name)}Result`);
    return () => union;
  }
}

/** One resolver class per operation; its field runs the operation with the request's caller. */
export function operationResolver(op: Operation, types: GraphTypeFactory): ClassType {
  const name = `${pascal(op.name)}Resolver`;
  const parts: { where: 'path' | 'query' | 'body'; key: string | null }[] = [];
  const cls = { [name]: class {} }[name] as any;
  cls.prototype.run = async function run(...args: unknown[]) {
    const ctx = args[args.length - 1] as GraphContext;
    const raw: { path?: Record<string, unknown>; query?: Record<string, unknown>; body?: unknown } = {};
    parts.forEach((p, i) => {
      const v = args[i];
      if (p.key === null) { raw.body = v == null ? {} : { ...(v as object) }; return; }
      if (v === undefined) return;
      const bag = ((raw[p.where] as Record<string, unknown> | undefined) ??= {});
      bag[p.key] = v;
    });
    // Records come as their JSON text (src/shared/raw-json.ts): the resolvers read their fields.
    return parsedRawJson(await withAuditSurface('graphql', () => runOperation(op, raw, ctx.caller, ctx.services)));
  };
  const addArgs = (where: 'path' | 'query' | 'body', shape: Record<string, ZodType> | undefined) => {
    for (const [key, schema] of Object.entries(shape ?? {})) {
      // REST's `fields=` is the graph's own selection set: not an argument here.
      if (selectableFields(schema)) continue;
      const f = types.field(schema, pascal(op.name), key, 'input');
      const type = f.type;
      Arg(key, type, { nullable: f.nullable, description: f.description })(cls.prototype, 'run', parts.length);
      parts.push({ where, key });
    }
  };
  addArgs('path', (op.path as any)?.shape);
  addArgs('query', (op.query as any)?.shape);
  if (op.body) {
    if (op.flattenBody) {
      addArgs('body', (op.body as any).shape);
    } else {
      const input = types.inputType(op.body, `${pascal(op.name)}`);
      const optional = Object.values((op.body as any).shape as Record<string, ZodType>).every((s) => unwrap(s).nullable || unwrap(s).hasDefault);
      Arg('input', () => input, { nullable: optional })(cls.prototype, 'run', parts.length);
      parts.push({ where: 'body', key: null });
    }
  }
  Ctx()(cls.prototype, 'run', parts.length);
  const decorate = op.kind === 'query' ? Query : Mutation;
  decorate(types.resultType(op), { name: op.name, description: [op.summary, op.description].filter(Boolean).join(' ') })(cls.prototype, 'run', Object.getOwnPropertyDescriptor(cls.prototype, 'run')!);
  Resolver()(cls);
  return cls;
}
