// The activator's URLs and the API paths about it (and about the registry, found the same way): /function/NAME[/sub/path] and /workflow/NAME, in the default namespace or under /namespaces/NS.
import { DNS1123_LABEL, DNS1123_SUBDOMAIN } from './meta.js';

/** The API paths of the activator's data: a function's invocation records, and where the activator listens (for `invoke`). */
export const INVOCATIONS_PATH = '/apis/minik8s.io/v1/namespaces/:namespace/functions/:name/invocations';
export const ACTIVATOR_INFO_PATH = '/apis/minik8s.io/v1/activator';
/** Where the master's image registry listens (for `image import`, which pushes there): `{kind: RegistryInfo, port}`. */
export const REGISTRY_INFO_PATH = '/apis/minik8s.io/v1/registry';

export interface ActivatorTarget {
  type: 'function' | 'workflow';
  namespace: string;
  name: string;
  /** What the handler sees as its path: the rest after the name, `/` when nothing is left. */
  subPath: string;
  /** The query string without `?`, '' when none. */
  query: string;
}

/** Parses a request URL's path and query; undefined for anything that is not one of the activator's URLs. */
export function parseActivatorUrl(url: string): ActivatorTarget | undefined {
  const q = url.indexOf('?');
  const path = q < 0 ? url : url.slice(0, q);
  const query = q < 0 ? '' : url.slice(q + 1);
  const m = /^(?:\/namespaces\/([^/]+))?\/(function|workflow)\/([^/]+)(\/.*)?$/.exec(path);
  if (!m) return undefined;
  let namespace: string;
  let name: string;
  try {
    namespace = m[1] === undefined ? 'default' : decodeURIComponent(m[1]);
    name = decodeURIComponent(m[3]!);
  } catch {
    return undefined;
  }
  if (!DNS1123_LABEL.test(namespace) || !DNS1123_SUBDOMAIN.test(name)) return undefined;
  return { type: m[2] as ActivatorTarget['type'], namespace, name, subPath: m[4] ?? '/', query };
}

/** The URL a function is called at, through an activator at `base` (`https://HOST:PORT`, or http under --insecure-http). */
export function functionUrl(base: string, namespace: string, name: string): string {
  const root = base.replace(/\/+$/, '');
  return namespace === 'default' ? `${root}/function/${name}` : `${root}/namespaces/${namespace}/function/${name}`;
}

/** The URL a workflow is run at, through an activator at `base`. */
export function workflowUrl(base: string, namespace: string, name: string): string {
  const root = base.replace(/\/+$/, '');
  return namespace === 'default' ? `${root}/workflow/${name}` : `${root}/namespaces/${namespace}/workflow/${name}`;
}
