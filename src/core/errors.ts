// Typed errors shared by store, API server, reconcilers and CLI; each maps to a Kubernetes Status.

/** One field-level problem, as in Status.details.causes. */
export interface StatusCause {
  /** Kubernetes cause type, e.g. FieldValueRequired, FieldValueInvalid, FieldValueNotSupported. */
  reason: string;
  message: string;
  /** Field path such as `spec.containers[0].image`. */
  field?: string;
}

/** The Kubernetes `Status` object returned for every failed request. */
export interface Status {
  apiVersion: 'v1';
  kind: 'Status';
  /** ListMeta's `continue`: on a 410 for an expired continue token, one that goes on from the current revision. */
  metadata: { continue?: string };
  status: 'Failure' | 'Success';
  message: string;
  reason: string;
  details?: { name?: string; group?: string; kind?: string; causes?: StatusCause[]; retryAfterSeconds?: number };
  code: number;
}

export interface ApiErrorOptions {
  cause?: unknown;
  /** Resource (plural, e.g. `pods`) and name the error is about, for `details`. */
  kind?: string;
  group?: string;
  name?: string;
  causes?: StatusCause[];
  retryAfterSeconds?: number;
  /** Set as the Status's metadata.continue. */
  listContinue?: string;
}

/** Base class: an error that knows its HTTP code and Status reason. */
export class ApiError extends Error {
  readonly code: number;
  readonly reason: string;
  readonly details: ApiErrorOptions;

  constructor(code: number, reason: string, message: string, options: ApiErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.reason = reason;
    this.details = options;
  }

  toStatus(): Status {
    const d = this.details;
    const details: Status['details'] = {};
    if (d.name !== undefined) details.name = d.name;
    if (d.group !== undefined) details.group = d.group;
    if (d.kind !== undefined) details.kind = d.kind;
    if (d.causes?.length) details.causes = d.causes;
    if (d.retryAfterSeconds !== undefined) details.retryAfterSeconds = d.retryAfterSeconds;
    return {
      apiVersion: 'v1',
      kind: 'Status',
      metadata: d.listContinue === undefined ? {} : { continue: d.listContinue },
      status: 'Failure',
      message: this.message,
      reason: this.reason,
      ...(Object.keys(details).length ? { details } : {}),
      code: this.code,
    };
  }
}

export class BadRequestError extends ApiError {
  constructor(message: string, options?: ApiErrorOptions) {
    super(400, 'BadRequest', message, options);
  }
}

export class UnauthorizedError extends ApiError {
  constructor(message = 'Unauthorized', options?: ApiErrorOptions) {
    super(401, 'Unauthorized', message, options);
  }
}

export class ForbiddenError extends ApiError {
  constructor(message: string, options?: ApiErrorOptions) {
    super(403, 'Forbidden', message, options);
  }
}

export class NotFoundError extends ApiError {
  constructor(message: string, options?: ApiErrorOptions) {
    super(404, 'NotFound', message, options);
  }
}

export class MethodNotAllowedError extends ApiError {
  constructor(message: string, options?: ApiErrorOptions) {
    super(405, 'MethodNotAllowed', message, options);
  }
}

export class AlreadyExistsError extends ApiError {
  constructor(message: string, options?: ApiErrorOptions) {
    super(409, 'AlreadyExists', message, options);
  }
}

export class ConflictError extends ApiError {
  constructor(message: string, options?: ApiErrorOptions) {
    super(409, 'Conflict', message, options);
  }
}

/** The requested revision has been compacted away: the client must relist. */
export class GoneError extends ApiError {
  constructor(message: string, options?: ApiErrorOptions) {
    super(410, 'Expired', message, options);
  }
}

/** The server could not finish in time (a watch from a revision the store has not reached); the client may retry. */
export class TimeoutError extends ApiError {
  constructor(message: string, options?: ApiErrorOptions) {
    super(504, 'Timeout', message, options);
  }
}

export class RequestEntityTooLargeError extends ApiError {
  constructor(message: string, options?: ApiErrorOptions) {
    super(413, 'RequestEntityTooLarge', message, options);
  }
}

export class UnsupportedMediaTypeError extends ApiError {
  constructor(message: string, options?: ApiErrorOptions) {
    super(415, 'UnsupportedMediaType', message, options);
  }
}

/** Validation failure: 422 with one cause per bad field. */
export class InvalidError extends ApiError {
  constructor(message: string, options?: ApiErrorOptions) {
    super(422, 'Invalid', message, options);
  }
}

export class InternalError extends ApiError {
  constructor(message: string, options?: ApiErrorOptions) {
    super(500, 'InternalError', message, options);
  }
}

export class ServiceUnavailableError extends ApiError {
  constructor(message: string, options?: ApiErrorOptions) {
    super(503, 'ServiceUnavailable', message, options);
  }
}

/** Rebuilds a typed error from a Status body received over HTTP (the CLI and remote store use it). */
export function errorFromStatus(status: Partial<Status>, httpCode: number): ApiError {
  const code = status.code ?? httpCode;
  const message = status.message ?? `the server responded with HTTP ${httpCode}`;
  const d = status.details ?? {};
  const options: ApiErrorOptions = { kind: d.kind, group: d.group, name: d.name, causes: d.causes, retryAfterSeconds: d.retryAfterSeconds };
  if (status.metadata?.continue) options.listContinue = status.metadata.continue;
  switch (status.reason) {
    case 'BadRequest':
      return new BadRequestError(message, options);
    case 'Unauthorized':
      return new UnauthorizedError(message, options);
    case 'Forbidden':
      return new ForbiddenError(message, options);
    case 'NotFound':
      return new NotFoundError(message, options);
    case 'MethodNotAllowed':
      return new MethodNotAllowedError(message, options);
    case 'AlreadyExists':
      return new AlreadyExistsError(message, options);
    case 'Conflict':
      return new ConflictError(message, options);
    case 'Expired':
    case 'Gone':
      return new GoneError(message, options);
    case 'RequestEntityTooLarge':
      return new RequestEntityTooLargeError(message, options);
    case 'Timeout':
      return new TimeoutError(message, options);
    case 'UnsupportedMediaType':
      return new UnsupportedMediaTypeError(message, options);
    case 'Invalid':
      return new InvalidError(message, options);
    case 'ServiceUnavailable':
      return new ServiceUnavailableError(message, options);
    default:
      return new ApiError(code, status.reason ?? 'Unknown', message, options);
  }
}

/** Wraps anything thrown into an ApiError (unknown errors become 500 with the original as cause). */
export function toApiError(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  const message = err instanceof Error ? err.message : String(err);
  return new InternalError(message, { cause: err });
}
