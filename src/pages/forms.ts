/**
 * Reading a submitted HTML form (application/x-www-form-urlencoded) for the service's pages: bounded in
 * size, flat (no nested objects), and every value a string or a list of strings (a repeated checkbox).
 */
import express, { type Request, type RequestHandler } from 'express';

export const formBody: RequestHandler = express.urlencoded({ extended: false, limit: '64kb', parameterLimit: 500 });

export type FormFields = Record<string, string | string[] | undefined>;

/** The one value of a field (the first, if it was sent twice), trimmed; '' when absent. */
export function field(form: FormFields | undefined, name: string): string {
  const v = form?.[name];
  return (Array.isArray(v) ? v[0] ?? '' : v ?? '').trim();
}

/** Every value of a repeated field (checkboxes of one name). */
export function fieldList(form: FormFields | undefined, name: string): string[] {
  const v = form?.[name];
  if (v === undefined) return [];
  return (Array.isArray(v) ? v : [v]).map((s) => s.trim()).filter(Boolean);
}

/** A cookie of the request by name ('' when absent); values are percent-decoded, a malformed one is ''. */
export function cookieOf(req: Request, name: string): string {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) {
      try { return decodeURIComponent(part.slice(eq + 1).trim()); } catch { return ''; }
    }
  }
  return '';
}
