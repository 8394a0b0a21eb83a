// Client-side failures of the API client, shared by the CLI and the worker: bad input, and a server that cannot be reached.

/** A client-side failure (a bad server URL, a reply that is not JSON); the CLI prints it as `error: <message>`. */
export class ClientError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ClientError';
  }
}

/** The server could not be reached at all; kubectl prints these messages without a prefix. */
export class ConnectionError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ConnectionError';
  }
}
