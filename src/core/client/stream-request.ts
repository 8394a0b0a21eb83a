// Raw streaming requests through the API client (for `logs -f`): the response body as it arrives, errors as typed ApiErrors.
import type http from 'node:http';
import type { ApiClient, RequestOptions } from './api-client.js';
import { errorFromResponse } from './api-client.js';
import { ClientError } from './client-errors.js';

/** The client's transport, which ApiClient keeps private; reused so auth, TLS and connection errors match its other calls. */
interface Transport {
  send(method: string, path: string, options: RequestOptions, mode: { stream: boolean }): Promise<http.IncomingMessage>;
}

/**
 * Sends one request and resolves with the open response once it answers 2xx, so the caller
 * can read the body as it comes (a followed log never ends by itself). Non-2xx answers are
 * read and rejected as typed errors. Aborting `options.signal` closes the connection.
 */
export async function streamRequest(client: ApiClient, method: string, path: string, options: RequestOptions = {}): Promise<http.IncomingMessage> {
  const transport = client as unknown as Partial<Transport>;
  if (typeof transport.send !== 'function') throw new ClientError('this API client cannot stream responses');
  const res = await transport.send.call(client, method, path, options, { stream: true });
  const code = res.statusCode ?? 0;
  if (code >= 200 && code < 300) return res;
  res.setEncoding('utf8');
  let text = '';
  for await (const chunk of res) text += chunk as string;
  throw errorFromResponse(code, text);
}
