// A failure the service answered: its status and its body {message, code, ...}. Kept apart from the
// client (client.ts) so that the words for each failure (errors.ts) are plain logic, tested outside a browser.

export interface FailureBody {
  success?: false;
  message?: string;
  code?: string;
  error?: unknown;
  [extra: string]: unknown;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: FailureBody,
  ) {
    super(body.message ?? `The service answered ${status}`);
  }
  get code(): string | undefined {
    return this.body.code;
  }
}
