// An in-memory stand-in for the API server (Kubernetes paths, Status errors, merge patch), for CLI tests.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { isPlainObject } from '../core/api/canonical-json.js';

export interface RecordedRequest {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

export interface TestApiServer {
  url: string;
  /** Objects by collection path + name, e.g. `/api/v1/namespaces/default/pods/web`. */
  objects: Map<string, Record<string, unknown>>;
  requests: RecordedRequest[];
  /** Lines a `?watch=1` request gets; the stream then stays open until the client leaves. */
  watchEvents: unknown[];
  close(): Promise<void>;
}

function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isPlainObject(patch)) return patch;
  const out: Record<string, unknown> = isPlainObject(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}

function status(res: http.ServerResponse, code: number, reason: string, message: string): void {
  res.writeHead(code, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', code, reason, message }));
}

/**
 * Serves `/api|apis/.../{resource}[/{name}]` from a map. Enough of the API for the CLI's
 * commands: list (with a plain `key=value` labelSelector), get, create, merge patch (both with dryRun=All), delete.
 */
export async function startTestApiServer(
  options: {
    token?: string;
    now?: () => Date;
    /** Field problems of a patched object: a 422 Invalid with them as causes, nothing stored. */
    validate?: (obj: Record<string, unknown>) => { field: string; message: string }[];
  } = {},
): Promise<TestApiServer> {
  const objects = new Map<string, Record<string, unknown>>();
  const requests: RecordedRequest[] = [];
  const state = { watchEvents: [] as unknown[] };
  let revision = 1;
  const now = options.now ?? (() => new Date());
  const server = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => {
      body += c;
    });
    req.on('end', () => {
      requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      const url = new URL(req.url ?? '/', 'http://x');
      if (url.pathname === '/version') {
        res.end(JSON.stringify({ major: '0', minor: '1', gitVersion: 'v0.1.0-test', platform: 'linux/amd64' }));
        return;
      }
      if (options.token && req.headers.authorization !== `Bearer ${options.token}`) {
        status(res, 401, 'Unauthorized', 'Unauthorized');
        return;
      }
      const parts = url.pathname.split('/').filter(Boolean);
      // [api, v1, (namespaces, ns,)? resource, name?] or [apis, group, v1, ...]
      const base = parts[0] === 'apis' ? 3 : 2;
      const rest = parts.slice(base);
      const namespaced = rest[0] === 'namespaces' && rest.length >= 3;
      const resource = namespaced ? rest[2]! : rest[0]!;
      const name = namespaced ? rest[3] : rest[1];
      const collection = `/${parts.slice(0, namespaced ? base + 3 : base + 1).join('/')}`;
      const key = `${collection}/${name}`;
      const dryRun = url.searchParams.get('dryRun') === 'All';
      const notFound = () => status(res, 404, 'NotFound', `${resource} "${name}" not found`);
      const send = (code: number, value: unknown) => {
        res.writeHead(code, { 'content-type': 'application/json' });
        res.end(JSON.stringify(value));
      };
      if (name === undefined && req.method === 'GET' && url.searchParams.get('watch') === '1') {
        res.writeHead(200, { 'content-type': 'application/json' });
        for (const event of state.watchEvents) res.write(`${JSON.stringify(event)}\n`);
        return;
      }
      if (name === undefined && req.method === 'GET') {
        const selector = url.searchParams.get('labelSelector');
        const items = [...objects.entries()]
          .filter(([k]) => k.startsWith(`${collection}/`) || (!namespaced && k.includes(`/${resource}/`)))
          .map(([, o]) => o)
          .filter((o) => {
            if (!selector) return true;
            const labels = ((o.metadata as Record<string, unknown>).labels ?? {}) as Record<string, string>;
            return selector.split(',').every((term) => {
              const [k, v] = term.split('=');
              return labels[k!] === v;
            });
          });
        send(200, { kind: 'List', apiVersion: 'v1', metadata: { resourceVersion: String(revision) }, items });
        return;
      }
      if (name === undefined && req.method === 'POST') {
        const obj = JSON.parse(body) as Record<string, unknown>;
        const meta = obj.metadata as Record<string, unknown>;
        const objKey = `${collection}/${String(meta.name)}`;
        if (objects.has(objKey)) {
          status(res, 409, 'AlreadyExists', `${resource} "${String(meta.name)}" already exists`);
          return;
        }
        const stored = { ...obj, metadata: { ...meta, resourceVersion: String(++revision), creationTimestamp: now().toISOString() } };
        // dryRun=All: answer with what would be stored, store nothing.
        if (!dryRun) objects.set(objKey, stored);
        send(201, stored);
        return;
      }
      const existing = objects.get(key);
      if (!existing) {
        notFound();
        return;
      }
      if (req.method === 'GET') send(200, existing);
      else if (req.method === 'PATCH') {
        if (req.headers['content-type'] !== 'application/merge-patch+json') {
          status(res, 415, 'UnsupportedMediaType', 'the body of the request was in an unknown format');
          return;
        }
        const patch = JSON.parse(body) as { metadata?: { resourceVersion?: string } };
        const existingVersion = (existing.metadata as Record<string, unknown>).resourceVersion;
        // A patch naming a resourceVersion applies to that version only, as on the real server.
        if (patch.metadata?.resourceVersion !== undefined && patch.metadata.resourceVersion !== existingVersion) {
          status(
            res,
            409,
            'Conflict',
            `Operation cannot be fulfilled on ${resource} "${name}": the object has been modified; please apply your changes to the latest version and try again`,
          );
          return;
        }
        const patched = mergePatch(existing, patch) as Record<string, unknown>;
        const problems = options.validate?.(patched) ?? [];
        if (problems.length) {
          res.writeHead(422, { 'content-type': 'application/json' });
          const causes = problems.map((p) => ({ reason: 'FieldValueInvalid', field: p.field, message: p.message }));
          const detail = problems.map((p) => `${p.field}: ${p.message}`).join(', ');
          res.end(
            JSON.stringify({
              kind: 'Status',
              apiVersion: 'v1',
              metadata: {},
              status: 'Failure',
              code: 422,
              reason: 'Invalid',
              message: `${resource} "${name}" is invalid: ${detail}`,
              details: { name, causes },
            }),
          );
          return;
        }
        (patched.metadata as Record<string, unknown>).resourceVersion = String(++revision);
        if (!dryRun) objects.set(key, patched);
        send(200, patched);
      } else if (req.method === 'DELETE') {
        objects.delete(key);
        send(200, existing);
      } else status(res, 405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    objects,
    requests,
    get watchEvents() {
      return state.watchEvents;
    },
    set watchEvents(events: unknown[]) {
      state.watchEvents = events;
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
