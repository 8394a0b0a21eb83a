// GET /openapi/v3, /openapi/v3/<group-version> and /openapi/v2: the kinds' OpenAPI documents in JSON, cached by clients through ETag and ?hash=.
import type { Context } from 'hono';
import type { KindDefinition } from '../../core/api/kind.js';
import { openApiDocuments, type ServedDocument } from '../../core/api/openapi/documents.js';
import { kinds as registryKinds } from '../../core/api/registry.js';
import { ApiError, NotFoundError } from '../../core/errors.js';
import { statusResponse } from './resource-routes.js';
import type { ApiHono } from './server.js';

export interface OpenApiRoutesOptions {
  /** The kinds to describe, asked on each request (a new list, e.g. with CRDs, gets new documents); default: the registry. */
  kinds?: () => readonly KindDefinition[];
}

/** Whether the client takes JSON: kubectl asks for JSON, some clients for protobuf first and JSON next, some for nothing in particular. */
function acceptsJson(accept: string | undefined): boolean {
  if (!accept) return true;
  return accept.split(',').some((part) => {
    const type = part.split(';')[0]!.trim().toLowerCase();
    return type === 'application/json' || type === '*/*' || type === 'application/*' || type === '';
  });
}

/**
 * Answers one document: 406 unless JSON is acceptable (clients asking for the protobuf form retry
 * with JSON), 304 when the client holds this version. A request naming the current hash may be
 * cached for good, as kube-apiserver allows; one naming an old hash is sent to the current one.
 */
function answer(c: Context, doc: ServedDocument, options: { hashed?: boolean } = {}): Response {
  if (!acceptsJson(c.req.header('accept'))) {
    return statusResponse(c, new ApiError(406, 'NotAcceptable', `only application/json is served here, not ${c.req.header('accept')}`));
  }
  const etag = `"${doc.hash}"`;
  const hash = c.req.query('hash');
  if (options.hashed && hash !== undefined && hash !== doc.hash) {
    return c.redirect(`${c.req.path}?hash=${doc.hash}`, 301);
  }
  c.header('etag', etag);
  c.header('vary', 'Accept');
  c.header('cache-control', options.hashed && hash !== undefined ? 'public, immutable, max-age=31536000' : 'no-cache, private');
  const match = c.req.header('if-none-match');
  if (match?.split(',').some((m) => m.trim() === etag || m.trim() === '*')) return c.body(null, 304);
  c.header('content-type', 'application/json');
  return c.body(doc.json);
}

/** Mounts the OpenAPI routes. Any authenticated user may read them, as Kubernetes' system:discovery role allows. */
export function mountOpenApiRoutes(app: ApiHono, options: OpenApiRoutesOptions = {}): void {
  const documents = () => openApiDocuments(options.kinds?.() ?? registryKinds);
  app.get('/openapi/v2', (c) => answer(c, documents().v2));
  app.get('/openapi/v3', (c) => answer(c, documents().v3Index));
  app.get('/openapi/v3/*', (c) => {
    const path = c.req.path.slice('/openapi/v3/'.length).replace(/\/+$/, '');
    const doc = documents().v3.get(path);
    if (!doc) throw new NotFoundError('the server could not find the requested resource');
    return answer(c, doc, { hashed: true });
  });
}
