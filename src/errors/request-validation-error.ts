/**
 * A request that does not fit its schema: every problem, with where it is (`path`, `query`, `body`).
 * REST answers it as HTTPValidationError (422), GraphQL as an error with the same `detail`, MCP as
 * the Error envelope.
 */
import type { ZodError } from 'zod';

export interface ValidationProblem {
  loc: (string | number)[];
  msg: string;
  type: string;
}

export class RequestValidationError extends Error {
  constructor(readonly detail: ValidationProblem[]) {
    super(detail.map((d) => `${d.loc.join('.')}: ${d.msg}`).join('; ') || 'request validation failed');
    this.name = 'RequestValidationError';
  }

  static problems(where: string, error: ZodError): ValidationProblem[] {
    const out: ValidationProblem[] = [];
    for (const issue of error.issues) {
      const base = [where, ...issue.path.map((p) => (typeof p === 'symbol' ? String(p) : p))];
      if (issue.code === 'unrecognized_keys') {
        for (const key of issue.keys) out.push({ loc: [...base, key], msg: 'Extra inputs are not permitted', type: 'extra_forbidden' });
      } else {
        out.push({ loc: base, msg: issue.message, type: issue.code });
      }
    }
    return out;
  }
}
