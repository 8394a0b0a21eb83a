// Client-side CLI errors and the one function that renders any error the way kubectl prints it.
import { ConnectionError } from '../core/client/client-errors.js';
import { ApiError } from '../core/errors.js';

export { ConnectionError };

/** A client-side failure; printed as `error: <message>`. */
export class CliError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CliError';
  }
}

/** Renders an error as one or more stderr lines, without a stack (set MINIK8S_DEBUG to get one). */
export function formatError(err: unknown, env: NodeJS.ProcessEnv = process.env): string {
  let text: string;
  if (err instanceof ApiError) {
    // kubectl special-cases a missing or rejected credential.
    text =
      err.code === 401 ? `error: You must be logged in to the server (${err.message || 'Unauthorized'})` : `Error from server (${err.reason}): ${err.message}`;
  } else if (err instanceof ConnectionError) {
    text = err.message;
  } else if (err instanceof Error) {
    text = `error: ${err.message}`;
  } else {
    text = `error: ${String(err)}`;
  }
  if (env.MINIK8S_DEBUG && err instanceof Error && err.stack) text += `\n${err.stack}`;
  return text.endsWith('\n') ? text : `${text}\n`;
}
