// What every command gets from main: the API client, the namespace in effect, and where to write.
import type { ApiClient } from '../core/client/api-client.js';

export interface CliContext {
  /** `-n`, else `default`. */
  namespace: string;
  /** True when the user passed `-n`: manifests naming another namespace are then an error. */
  namespaceExplicit: boolean;
  /** Built on first use, so commands that never talk to the server never need one. */
  client(): ApiClient;
  out(text: string): void;
  err(text: string): void;
  stdin: NodeJS.ReadableStream;
  now(): Date;
  /** Aborts long-running commands (`get -w`). */
  signal?: AbortSignal;
  /** The environment the CLI runs with (tests pass their own); absent: process.env. */
  env?: NodeJS.ProcessEnv;
}
