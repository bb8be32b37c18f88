/**
 * BMS API 2.0's answer envelope: every operation declares only a 200 answer, `{Success, Error, Result}`
 * (ErrorInfo: Code, Message, Details, StackStrace, SubErrors), paged lists with `TotalRecords`. A refused
 * request is `Success: false` with the error's message, at HTTP 200.
 */
import type { Response } from 'express';

export function success(res: Response, result: unknown, totalRecords?: number): void {
  res.status(200).json({ Success: true, Error: null, Result: result, ...(totalRecords === undefined ? {} : { TotalRecords: totalRecords }) });
}

export function failure(res: Response, code: number, message: string, subErrors: string[] = []): void {
  res.status(200).json({ Success: false, Error: { Code: code, Message: message, Details: null, StackStrace: null, SubErrors: subErrors }, Result: null });
}

/** A refusal a handler throws; the router answers it with `failure`. */
export class BmsRefusal extends Error {
  constructor(readonly code: number, message: string, readonly subErrors: string[] = []) {
    super(message);
  }
}

export const invalid = (message: string, subErrors: string[] = []) => new BmsRefusal(400, message, subErrors);
export const missing = (message: string) => new BmsRefusal(404, message);
