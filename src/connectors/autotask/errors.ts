/**
 * Reading Autotask refusals. Autotask answers most validation failures of a write with HTTP 500 and
 * `{"errors": ["..."]}` (a missing required field, an unknown picklist value, 25 hours on a time
 * entry, ...), and a genuine server fault with 500 too. A 500 whose body carries an `errors` list is
 * a refusal of the request, not an outage: map it to `validation`, do not retry it.
 */

/** The messages of an Autotask `{errors: [...]}` body (strings or `{message}` objects), or []. */
export function autotaskErrorMessages(body: unknown): string[] {
  const errors = (body as { errors?: unknown } | null)?.errors;
  if (!Array.isArray(errors)) return [];
  return errors
    .map((e) => (typeof e === 'string' ? e : typeof (e as { message?: unknown })?.message === 'string' ? (e as { message: string }).message : null))
    .filter((m): m is string => !!m);
}
