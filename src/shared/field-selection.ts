/**
 * Field selection on reads (docs/architecture.md, Reads), in one module: the `fields` query parameter
 * (comma-separated top-level field names of the item; an unknown name is a 422 naming `fields`) and the
 * pick that applies it. A record's identity (`id`, `source_id`) is always kept, so a narrowed item can
 * still be fetched whole or matched across pages. Without `fields` the answer is whole, `raw` and
 * `vendor.native` included, as the interface says.
 */
import type { ZodObject, ZodType } from 'zod';
import { z } from './request';

/** Always kept in a selected item (those the item has). */
export const IDENTITY_FIELDS = ['id', 'source_id'] as const;
/** The vendor payload, twice: what a summary (the MCP default view) leaves out. */
export const VENDOR_PAYLOAD_FIELDS = ['raw', 'vendor'] as const;

const namesOfParam = new WeakMap<ZodType, readonly string[]>();

/** The field names the `fields` parameter of an item schema accepts, in the item's order. */
export function fieldNamesOf(item: ZodType): string[] {
  return Object.keys(((item as ZodObject).shape ?? {}) as Record<string, unknown>);
}

/** The names a `fields` parameter built by `fieldsParam` accepts (undefined for any other schema). */
export function selectableFields(param: ZodType): readonly string[] | undefined {
  return namesOfParam.get(param);
}

/** The `fields` query parameter of reads answering `item`: parsed to the list of names (null: every field). */
export function fieldsParam(item: ZodType) {
  const names = fieldNamesOf(item);
  const known = new Set(names);
  const param = z.string().max(2000)
    .transform((s, ctx) => {
      const asked = s.split(',').map((f) => f.trim()).filter(Boolean);
      const unknown = asked.filter((f) => !known.has(f));
      if (unknown.length) {
        ctx.addIssue({ code: 'custom', message: `unknown field(s) ${unknown.join(', ')}; known: ${names.join(', ')}` });
        return z.NEVER;
      }
      return asked.length ? [...new Set(asked)] : null;
    })
    .nullable().optional()
    .openapi({
      type: 'string',
      description: `Comma-separated field names to answer (${IDENTITY_FIELDS.join(' and ')} are always included); default: every field, \`raw\` and \`vendor\` included. Known: ${names.join(', ')}.`,
      example: names.filter((n) => !(VENDOR_PAYLOAD_FIELDS as readonly string[]).includes(n)).slice(0, 4).join(','),
    });
  namesOfParam.set(param, names);
  return param;
}

/** One item with only the `fields` asked for (and its identity); the item itself when none were asked. */
export function selectFields<T extends Record<string, unknown>>(item: T, fields: readonly string[] | null | undefined): Partial<T> {
  if (!fields) return item;
  const keep = new Set<string>([...IDENTITY_FIELDS, ...fields]);
  return Object.fromEntries(Object.entries(item).filter(([k]) => keep.has(k))) as Partial<T>;
}

/** The field list of a summary: every field of the item but the vendor payload. */
export function summaryFields(names: readonly string[]): string[] {
  return names.filter((n) => !(VENDOR_PAYLOAD_FIELDS as readonly string[]).includes(n));
}

/**
 * The answer of a read when `fields=` narrows it: the same envelope (or record) with every field of a
 * record optional but its identity. Documented beside the whole answer (OpenAPI: one of the two) and
 * the output schema of an MCP list tool, whose default view narrows.
 */
export function narrowedAnswer(answer: ZodObject, name: string): ZodObject {
  const shape = answer.shape as Record<string, ZodType>;
  // A list envelope (it has `next_cursor`) narrows the records of its items field; a record narrows itself.
  const itemsKey = 'next_cursor' in shape ? Object.keys(shape).find((k) => (shape[k] as any)._zod.def.type === 'array') : undefined;
  // Fresh objects, not extend/partial: those are documented as allOf with the whole schema, which would
  // require every field again.
  const narrow = (item: ZodObject) => z.object(Object.fromEntries(Object.entries(item.shape as Record<string, ZodType>)
    .map(([k, v]) => [k, (IDENTITY_FIELDS as readonly string[]).includes(k) ? v : v.optional()]))).strict();
  const narrowed = itemsKey
    ? z.object({ ...shape, [itemsKey]: z.array(narrow((shape[itemsKey] as any)._zod.def.element as ZodObject)) }).strict()
    : narrow(answer);
  return narrowed.openapi(name, { description: 'The answer with `fields=`: each record carries only the fields asked for, and its id/source_id.' });
}
