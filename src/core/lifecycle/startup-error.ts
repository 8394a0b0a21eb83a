// StartupError: a daemon could not start for a reason the operator can fix; the message is for humans, shown without a stack.

export class StartupError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StartupError';
  }
}

/** The message for an EADDRINUSE on one of our listening ports, naming the flag that moves it. */
export function portInUseMessage(options: { port: number; what: string; flag: string }): string {
  return `port ${options.port} is already in use (${options.what}); stop what uses it or pass ${options.flag}`;
}
