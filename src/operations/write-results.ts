/**
 * The three typed results of every write (docs/architecture.md, Writes), declared as schemas so that the SDL
 * and the OpenAPI document describe them exactly: Preview (200), Commit (201 when it created something
 * at the vendor, 200 otherwise) and FanOut (one result per target, 201). The HTTP status follows the
 * result, through `writeStatus`.
 */
import type { RefinementCtx, ZodRawShape, ZodType } from 'zod';
import { text, z } from '../shared/request';
import type { OperationResponse } from './operation';

export const dryRun = z.boolean().default(true).openapi({ description: 'Preview (default) or commit (false).' });
const idempotencyKey = text(200).min(1).nullable().optional()
  .openapi({ description: 'Required to commit (or the Idempotency-Key header). A replay with the same key returns the original result.' });

/**
 * A write's request body: its fields, `dry_run` (default true: a preview) and `idempotency_key`, which
 * a commit must carry (docs/architecture.md, Writes): without it the request is a 422 and nothing is written.
 * `check` adds the body's own cross-field rules.
 */
export function keyedWrite<S extends ZodRawShape>(name: string, shape: S, check?: (body: z.infer<z.ZodObject<S>>, ctx: RefinementCtx) => void) {
  return z.object({ ...shape, dry_run: dryRun, idempotency_key: idempotencyKey }).strict()
    .superRefine((value, ctx) => {
      const b = value as { dry_run?: boolean; idempotency_key?: string | null };
      if (b.dry_run === false && !b.idempotency_key) {
        ctx.addIssue({ code: 'custom', path: ['idempotency_key'], message: 'is required to commit (dry_run false): send it in the body or the Idempotency-Key header' });
      }
      check?.(value as never, ctx);
    })
    .openapi(name);
}

export const VendorRequest = z.object({
  method: z.enum(['GET', 'POST', 'PATCH', 'PUT', 'DELETE']),
  path: z.string().openapi({ description: 'Relative to the connection base URL; no credentials.' }),
  body: z.unknown().optional().openapi({ description: 'The vendor payload, exactly as the commit sends it.' }),
}).strict().openapi('VendorRequest');

export const TargetPreview = z.object({
  connection_id: z.string(), connector: z.string(), requests: z.array(VendorRequest),
}).strict().openapi('TargetPreview');

export const WritePreview = z.object({ targets: z.array(TargetPreview) }).strict().openapi('WritePreview');

export const TargetError = z.object({ code: z.string(), message: z.string(), status: z.number().int() }).strict().openapi('TargetError');

export const TargetResult = z.object({
  connection_id: z.string(), connector: z.string(), ok: z.boolean(),
  ticket_ref: z.string().nullable(), note_ref: z.string().nullable(), reconciled: z.boolean(),
  error: TargetError.nullable(),
}).strict().openapi('TargetResult');

const replay = z.boolean().openapi({ description: 'True when this is the stored answer of an earlier commit with the same idempotency_key.' });

export function previewResult<S extends ZodRawShape>(name: string, shape: S) {
  return z.object({
    dry_run: z.literal(true),
    preview: WritePreview.openapi({ description: 'The exact vendor requests a commit would send; nothing was sent.' }),
    ...shape,
  }).strict().openapi(name);
}

export function commitResult<S extends ZodRawShape>(name: string, shape: S) {
  return z.object({
    dry_run: z.literal(false),
    idempotent_replay: replay,
    created: z.boolean().openapi({ description: 'The vendor created a record (HTTP 201); false: it changed one (200).' }),
    ...shape,
  }).strict().openapi(name);
}

export function fanOutResult<S extends ZodRawShape>(name: string, shape: S) {
  return z.object({
    dry_run: z.literal(false),
    idempotent_replay: replay,
    partial_failure: z.boolean().openapi({ description: 'At least one target failed; `results` says which and why.' }),
    results: z.array(TargetResult),
    ...shape,
  }).strict().openapi(name);
}

/** Preview 200; a commit 201 when it created something (fan-out always does), else 200. */
export function writeStatus(r: { dry_run: boolean; created?: boolean }): number {
  if (r.dry_run) return 200;
  return r.created === false ? 200 : 201;
}

export function writeResponses(preview: ZodType, commit: ZodType, commitStatuses: (200 | 201)[] = [201]): OperationResponse[] {
  return [
    { status: 200, schema: preview, description: 'Preview (dry_run true, the default): the exact vendor requests; nothing was written.' },
    ...commitStatuses.map((status) => ({
      status, schema: commit,
      description: status === 201 ? 'Committed: the vendor created the record (or an idempotent replay of that answer).' : 'Committed: the vendor record was changed.',
    })),
  ];
}

/** One target of a preview: the connection and the exact vendor requests a commit would send to it. */
export function targetPreview(c: { id: string; connector: string }, requests: z.infer<typeof TargetPreview>['requests']): z.infer<typeof TargetPreview> {
  return { connection_id: c.id, connector: c.connector, requests };
}
