// Reads a request body safely: size limit, JSON (or protobuf decoded to JSON) only, no prototype keys, bounded nesting.
import type { Context } from 'hono';
import { decodeProtobufObject, isProtobufContentType } from '../../core/api/protobuf/decode.js';
import { BadRequestError, RequestEntityTooLargeError, UnsupportedMediaTypeError } from '../../core/errors.js';
import { parseResourcePath } from './paths.js';

/** Kubernetes limits request bodies to 3 MiB. */
export const MAX_BODY_BYTES = 3 * 1024 * 1024;
/** Deeper documents are not objects anyone writes by hand; refusing them keeps recursion bounded. */
export const MAX_DEPTH = 64;

const JSON_TYPES = ['application/json', 'application/merge-patch+json', 'application/strategic-merge-patch+json', ''];

/** Reads at most MAX_BODY_BYTES from a web Request body; 413 past that, without buffering the rest. */
export async function readBodyText(req: Request, maxBytes = MAX_BODY_BYTES): Promise<string> {
  return (await readBodyBytes(req, maxBytes)).toString('utf8');
}

/** readBodyText's bytes, before any decoding (a protobuf body is binary). */
export async function readBodyBytes(req: Request, maxBytes = MAX_BODY_BYTES): Promise<Buffer> {
  const declared = Number(req.headers.get('content-length') ?? '');
  if (Number.isFinite(declared) && declared > maxBytes) throw tooLarge(maxBytes);
  if (!req.body) return Buffer.alloc(0);
  const reader = req.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel().catch(() => {});
      throw tooLarge(maxBytes);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks);
}

/**
 * Reads at most MAX_BODY_BYTES from a Node request stream. The server uses this for requests
 * that arrive over a socket: going through the web Request's body stream costs a Request
 * object, a ReadableStream and transfers per request, a fifth of the CPU of a create.
 */
export async function readIncomingText(incoming: IncomingBody, maxBytes = MAX_BODY_BYTES): Promise<string> {
  return (await readIncomingBytes(incoming, maxBytes)).toString('utf8');
}

type IncomingBody = NodeJS.ReadableStream & { headers: Record<string, string | string[] | undefined> };

/** readIncomingText's bytes, before any decoding. */
export async function readIncomingBytes(incoming: IncomingBody, maxBytes = MAX_BODY_BYTES): Promise<Buffer> {
  const declared = Number(incoming.headers['content-length'] ?? '');
  if (Number.isFinite(declared) && declared > maxBytes) {
    incoming.resume();
    throw tooLarge(maxBytes);
  }
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of incoming) {
    const buf = chunk as Buffer;
    total += buf.byteLength;
    if (total > maxBytes) {
      incoming.resume();
      throw tooLarge(maxBytes);
    }
    chunks.push(buf);
  }
  return Buffer.concat(chunks);
}

/** Context variable holding a body already read before the route (by the authorization middleware): a stream reads only once. */
export const BODY_TEXT_VARIABLE = 'bodyText';

/**
 * Whether the request's body is Kubernetes protobuf that readRequestText decodes: creates,
 * updates and deletes (DeleteOptions) with that Content-Type. A PATCH body is never protobuf
 * (Kubernetes has no protobuf patch); its route answers 415 for the type.
 */
function protobufBody(c: Context): boolean {
  const method = c.req.method;
  return (method === 'POST' || method === 'PUT' || method === 'DELETE') && isProtobufContentType(c.req.header('content-type'));
}

/**
 * The request body as text: the copy read earlier if any, else from the Node socket, else from
 * the web Request (tests). A protobuf body is read as bytes and decoded here, once, into the JSON
 * text a JSON client would have sent, so every reader of the body (the authorization checks, then
 * the route's parsing and validation) judges the same decoded object.
 */
export async function readRequestText(c: Context): Promise<string> {
  const read = c.get(BODY_TEXT_VARIABLE) as string | undefined;
  if (read !== undefined) return read;
  const incoming = (c.env as { incoming?: IncomingBody } | undefined)?.incoming;
  if (!protobufBody(c)) return incoming ? readIncomingText(incoming) : readBodyText(c.req.raw);
  // Status is not among the fields read from protobuf (a create ignores it): refuse rather than drop it.
  if (subresourceOf(c.req.path) === 'status') {
    throw new UnsupportedMediaTypeError(
      'status updates are not accepted in protobuf (application/vnd.kubernetes.protobuf) by this server: send application/json',
    );
  }
  const bytes = incoming ? await readIncomingBytes(incoming) : await readBodyBytes(c.req.raw);
  const text = JSON.stringify(decodeProtobufObject(bytes));
  c.set(BODY_TEXT_VARIABLE, text);
  return text;
}

function subresourceOf(path: string): string | undefined {
  try {
    return parseResourcePath(path)?.subresource;
  } catch {
    return undefined; // Not a resource path: its route answers for it.
  }
}

/** The Content-Type the body text from readRequestText is in: JSON for a decoded protobuf body. */
export function requestContentType(c: Context): string | undefined {
  return protobufBody(c) ? 'application/json' : c.req.header('content-type');
}

function tooLarge(maxBytes: number): RequestEntityTooLargeError {
  return new RequestEntityTooLargeError(`Request entity too large: limit is ${maxBytes}`);
}

/** Checks that a parsed document has no `__proto__` keys and is not nested past MAX_DEPTH. */
export function checkDocumentShape(value: unknown): void {
  const stack: [unknown, number, string][] = [[value, 0, '']];
  while (stack.length) {
    const [v, depth, path] = stack.pop()!;
    if (typeof v !== 'object' || v === null) continue;
    if (depth >= MAX_DEPTH) throw new BadRequestError(`the object is nested more than ${MAX_DEPTH} levels deep at ${path || '<root>'}`);
    if (Array.isArray(v)) {
      v.forEach((item, i) => {
        stack.push([item, depth + 1, `${path}[${i}]`]);
      });
      continue;
    }
    for (const key of Object.keys(v)) {
      if (key === '__proto__') throw new BadRequestError(`field "${path ? `${path}.` : ''}__proto__" is not allowed`);
      stack.push([(v as Record<string, unknown>)[key], depth + 1, path ? `${path}.${key}` : key]);
    }
  }
}

/** Parses a JSON request body into a plain object, with Kubernetes-style errors. */
export function parseJsonObject(text: string, contentType: string | null | undefined): Record<string, unknown> {
  const type = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  if (!JSON_TYPES.includes(type)) {
    throw new UnsupportedMediaTypeError(
      `the body of the request was in an unknown format - accepted media types include: application/json, application/merge-patch+json`,
    );
  }
  if (text.trim() === '') throw new BadRequestError('the request body is empty');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    throw new BadRequestError(`the request body is not valid JSON: ${why.slice(0, 200)}`, { cause: err });
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new BadRequestError('the request body must be a JSON object');
  }
  checkDocumentShape(value);
  return value as Record<string, unknown>;
}
