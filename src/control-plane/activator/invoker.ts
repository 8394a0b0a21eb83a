// The FunctionInvoker interface: how in-process callers (workflows, scheduled triggers) call a function through the activator.

import type { InvocationTrigger } from '../../core/api/invocation-record.js';

export interface InvokeRequest {
  namespace: string;
  /** The Function's name. */
  name: string;
  /** Sent as JSON (a Buffer or string is sent as it is). */
  body?: unknown;
  /** Default POST. */
  method?: string;
  /** The sub-path the handler sees as context.path; default `/`. */
  path?: string;
  /** The query string, without `?`. */
  query?: string;
  headers?: Record<string, string>;
  /** Default `http`. */
  trigger?: InvocationTrigger;
  signal?: AbortSignal;
}

export interface InvokeResult {
  /** The function's HTTP status: 200, 500 when the handler raised; the activator's own 404, 502, 503 or 504 otherwise. */
  status: number;
  headers: Record<string, string>;
  body: Buffer;
  invocationId: string;
}

export interface FunctionInvoker {
  invoke(req: InvokeRequest): Promise<InvokeResult>;
}
