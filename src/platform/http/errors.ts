// The few error types services throw. Each carries an HTTP status and an optional stable code;
// the one error handler maps them to the failure body {success: false, message, code?, error?}.
// Jobs may throw them too: nothing here depends on HTTP beyond the status number.

export class AppError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly code?: string,
    /** Extra fields merged into the failure body (e.g. institutionId of LAUNCH_SCOPE_STEP_UP). */
    readonly extra?: Record<string, unknown>,
    readonly detail?: string | Record<string, unknown>,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

export class BadRequestError extends AppError {
  constructor(message: string, code?: string, detail?: string | Record<string, unknown>) {
    super(400, message, code, undefined, detail);
  }
}
export class UnauthorizedError extends AppError {
  constructor(message = 'Authentication Required', code?: string) {
    super(401, message, code);
  }
}
export class ForbiddenError extends AppError {
  constructor(message = 'Not authorized', code?: string, extra?: Record<string, unknown>) {
    super(403, message, code, extra);
  }
}
export class NotFoundError extends AppError {
  constructor(message = 'Not Found', code?: string) {
    super(404, message, code);
  }
}
export class ConflictError extends AppError {
  constructor(message: string, code?: string) {
    super(409, message, code);
  }
}
export class TooManyRequestsError extends AppError {
  constructor(message = 'Too many attempts, try again later', code = 'RATE_LIMITED') {
    super(429, message, code);
  }
}
