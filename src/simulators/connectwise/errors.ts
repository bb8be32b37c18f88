/** ConnectWise's error bodies: `{code, message, errors?: [{code, message, resource, field}]}`. */

export interface CwFieldError {
  code: string;
  message: string;
  resource: string;
  field: string;
}

export class CwError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly errors?: CwFieldError[],
  ) {
    super(message);
    this.name = 'CwError';
  }

  body(): Record<string, unknown> {
    return this.errors ? { code: this.code, message: this.message, errors: this.errors } : { code: this.code, message: this.message };
  }
}

/** 400 InvalidObject with the field errors found while validating one object. */
export function invalidObject(resource: string, errors: CwFieldError[]): CwError {
  return new CwError(400, 'InvalidObject', `${resource} object is invalid`, errors);
}

export function notFound(what: string, id: string | number): CwError {
  return new CwError(404, 'NotFound', `${what} ID ${id} not found`);
}

export function badRequest(message: string): CwError {
  return new CwError(400, 'BadRequest', message);
}

/** Collects field errors for one object, then throws them together, as ConnectWise reports them. */
export class FieldErrors {
  readonly list: CwFieldError[] = [];
  constructor(private readonly resource: string) {}

  required(field: string): void {
    this.list.push({ code: 'Required', message: `The ${field} field is required.`, resource: this.resource, field });
  }
  invalid(field: string, message: string): void {
    this.list.push({ code: 'InvalidField', message, resource: this.resource, field });
  }
  throwIfAny(): void {
    if (this.list.length) throw invalidObject(this.resource, this.list);
  }
}
