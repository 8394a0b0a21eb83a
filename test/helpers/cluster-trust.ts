// Makes this test process's fetch() trust the cluster CA of every master it starts, beside the system's authorities, so tests call HTTPS masters (API, kubelets, activator, registry) with plain fetch().
import { rootCertificates } from 'node:tls';
import { Agent, buildConnector, setGlobalDispatcher } from 'undici';

/** Every cluster CA (PEM) trusted so far, in the order they were added. */
const trusted = new Set<string>();
let connect: buildConnector.connector | undefined;
let installed = false;

/**
 * Adds `ca` to the authorities fetch() trusts in this process. Node 20's fetch() takes no CA per
 * call, but it dispatches through the global dispatcher that undici's setGlobalDispatcher sets:
 * one Agent is installed on the first call, and its connector is rebuilt as CAs are added, so
 * connections made after a master starts trust that master's CA too (open ones keep theirs).
 */
export function trustClusterCA(ca: string): void {
  if (trusted.has(ca)) return;
  trusted.add(ca);
  connect = buildConnector({ ca: [...rootCertificates, ...trusted] });
  if (installed) return;
  installed = true;
  setGlobalDispatcher(new Agent({ connect: (options, callback) => connect!(options, callback) }));
}

/** The cluster CAs trusted so far (PEM), for clients that take a CA of their own (node:https, ApiClient). */
export function trustedClusterCAs(): string[] {
  return [...trusted];
}
