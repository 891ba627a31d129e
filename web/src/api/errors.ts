// Every failure the service can answer, said in words a person understands, with what to do next.
import { ApiError } from './api-error.js';

export interface Explained {
  title: string;
  detail: string;
  /** The launch-scope step-up: the session must be confirmed with a code. */
  stepUp?: { institutionId?: string };
}

/** The service's message as a sentence, so that advice can follow it. */
const sentence = (text: string) => (text && !/[.!?]$/.test(text) ? `${text}.` : text);

export function explainError(error: unknown): Explained {
  if (!(error instanceof ApiError)) {
    if (error instanceof TypeError) return { title: 'The service cannot be reached', detail: 'Check your connection; the page tries again when you do.' };
    return { title: 'Something went wrong', detail: error instanceof Error ? error.message : String(error) };
  }
  const message = error.body.message ?? '';
  switch (error.code) {
    case 'INSUFFICIENT_CREDITS':
      return { title: 'Out of credits', detail: `${sentence(message) || 'There are not enough credits for this answer.'} Ask your twin's administrator for more credits.` };
    case 'USAGE_LIMIT_REACHED':
      return { title: 'Daily limit reached', detail: message || 'The usage limit of the last 24 hours is used up. Please try again later.' };
    case 'LAUNCH_SCOPE_STEP_UP':
      return {
        title: 'Confirm it is you',
        detail: 'This session is limited to the twin it was opened for. We can email you a code to unlock the rest.',
        stepUp: { institutionId: typeof error.body.institutionId === 'string' ? error.body.institutionId : undefined },
      };
    case 'RATE_LIMITED':
      return { title: 'Too many attempts', detail: `${sentence(message) || 'Too many attempts.'} Wait a few minutes before you try again.` };
    case 'FILE_LIMIT_REACHED':
      return { title: 'File limit reached', detail: `${sentence(message) || "You have reached this twin's limit of files."} Delete a file you no longer need to add another.` };
    case 'FILE_UPLOAD_DISABLED':
      return { title: 'Uploads are turned off', detail: message || "This twin's administrators have turned off uploads." };
    case 'USER_MEMORY_DISABLED':
      return { title: 'Enable User Memory is off', detail: 'Personal memories are not saved while it is off. Turn it on above to add one.' };
    case 'INVALID_CREDENTIALS':
      return { title: 'Wrong email or password', detail: 'Check both and try again.' };
    case 'INVALID_CODE':
      return { title: 'That code is not right', detail: 'Check it and try again.' };
    case 'CODE_EXPIRED':
      return { title: 'That code has expired', detail: 'Ask for a new code and enter it within 10 minutes.' };
    case 'MFA_EXPIRED':
      return { title: 'This sign-in has ended', detail: 'It expired, or too many codes were wrong. Start again with your email and password.' };
    case 'INVALID_LAUNCH_TOKEN':
      return { title: 'This link no longer works', detail: 'A launch link works once, for a short time. Open it again from the page that sent you here.' };
    case 'PASSWORD_CHANGE_REQUIRED':
      return { title: 'Change your password', detail: 'Your administrator asks you to choose a new password before you continue.' };
    case 'INSTITUTION_INACTIVE':
      return { title: 'This twin is switched off', detail: message || 'Its administrator has made it inactive.' };
    case 'NO_CURRENT_TWIN':
      return { title: 'No twin chosen', detail: 'Join or pick a twin before you ask a question.' };
    case 'MODEL_FAILED':
      return { title: 'The model did not answer', detail: `${sentence(message)} Nothing was charged; try again.` };
    case 'TURN_LOST':
      return { title: 'The answer was interrupted', detail: 'The service restarted while answering. Ask again.' };
  }
  switch (error.status) {
    case 400:
      return { title: 'Please check what you entered', detail: message || 'The service could not accept it.' };
    case 401:
      return { title: 'Signed out', detail: message || 'Your session ended. Sign in again.' };
    case 402:
      return { title: 'Out of credits', detail: message || 'There are not enough credits for this.' };
    case 403:
      return { title: 'Not allowed', detail: message || 'You may not do this here.' };
    case 404:
      return { title: 'Not found', detail: message || 'It may have been deleted.' };
    case 409:
      return { title: 'Already done', detail: message || 'Someone or something changed it first.' };
    case 413:
      return { title: 'Too large', detail: message || 'The file or text is larger than this service accepts.' };
    case 415:
      return { title: 'Unsupported type', detail: message || 'This kind of file cannot be used here.' };
    case 429:
      return { title: 'Too many attempts', detail: message || 'Wait a minute and try again.' };
    default:
      if (error.status >= 500) return { title: 'The service had a problem', detail: message || 'Try again in a moment.' };
      return { title: 'Something went wrong', detail: message || `The service answered ${error.status}.` };
  }
}
