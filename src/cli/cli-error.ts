// Client-side CLI errors and the one function that renders any error the way kubectl prints it.
import { ApiError } from '../core/errors.js';

/** A client-side failure; printed as `error: <message>`. */
export class CliError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CliError';
  }
}

/** The server could not be reached at all; kubectl prints these messages without a prefix. */
export class ConnectionError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ConnectionError';
  }
}

/** Renders an error as one or more stderr lines, without a stack (set MINIK8S_DEBUG to get one). */
export function formatError(err: unknown, env: NodeJS.ProcessEnv = process.env): string {
  let text: string;
  if (err instanceof ApiError) {
    // kubectl special-cases a missing or rejected credential.
    text = err.code === 401
      ? `error: You must be logged in to the server (${err.message || 'Unauthorized'})`
      : `Error from server (${err.reason}): ${err.message}`;
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
