/** A unique-constraint violation from PostgreSQL (SQLSTATE 23505, PGlite too) as the caller's error; anything else as it was. */
import { QueryFailedError } from 'typeorm';

export function uniqueViolation(err: unknown, answer: () => Error): unknown {
  const code = err instanceof QueryFailedError ? (err.driverError as { code?: string } | undefined)?.code ?? (err as { code?: string }).code : undefined;
  return code === '23505' ? answer() : err;
}
