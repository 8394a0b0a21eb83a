// Follows the pods of one label selector through a real watch, for tests that must show a controller never overshoots: which pods exist, how many were ever made, and the extremes seen at any event.
import { setTimeout as delay } from 'node:timers/promises';
import { isPodReady, type Pod } from '../../src/core/api/pod.js';

export class PodTracker {
  readonly pods = new Map<string, Pod>();
  /** Every pod name ever seen. */
  readonly created = new Set<string>();
  /** The most pods alive at once since the start or the last resetMax(). */
  max = 0;
  /** Once armed: the fewest Ready and the most alive seen at any event. */
  minReady = Infinity;
  maxAlive = 0;
  #armed = false;
  /** Called after every event is applied. */
  onEvent: () => void = () => {};
  readonly #abort = new AbortController();
  #done: Promise<void> = Promise.resolve();

  /**
   * Watches `namespace`'s pods matching `selector` on the API server at `url`. With `reconnect`, a
   * watch the server ends (a master killed and restarted) is taken up again until stop(): a fresh
   * list (pods deleted meanwhile are dropped), then a watch from the list's resourceVersion.
   */
  start(url: string, token: string, selector: string, namespace = 'default', options: { reconnect?: boolean } = {}): void {
    const signal = this.#abort.signal;
    const headers = { authorization: `Bearer ${token}` };
    const pods = `${url}/api/v1/namespaces/${namespace}/pods?labelSelector=${encodeURIComponent(selector)}`;
    const watch = async (resourceVersion?: string) => {
      const res = await fetch(`${pods}&watch=1${resourceVersion ? `&resourceVersion=${resourceVersion}` : ''}`, { headers, signal });
      const decoder = new TextDecoder();
      let buffered = '';
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        buffered += decoder.decode(chunk, { stream: true });
        let nl = buffered.indexOf('\n');
        while (nl >= 0) {
          const line = buffered.slice(0, nl).trim();
          buffered = buffered.slice(nl + 1);
          if (line) this.#apply(JSON.parse(line));
          nl = buffered.indexOf('\n');
        }
      }
    };
    this.#done = (async () => {
      try {
        await watch();
      } catch (err) {
        if (signal.aborted) return;
        if (!options.reconnect) throw err;
      }
      while (options.reconnect && !signal.aborted) {
        try {
          // Paced, so a master that is down is not asked hundreds of times a second.
          await delay(500, undefined, { signal });
          const res = await fetch(pods, { headers, signal });
          if (!res.ok) continue;
          const list = (await res.json()) as { metadata: { resourceVersion: string }; items: Pod[] };
          this.#relisted(list.items);
          await watch(list.metadata.resourceVersion);
        } catch {
          // The master is still down (or the watch broke): try again.
        }
      }
    })();
  }

  /** A fresh list after a reconnect replaces what was known at once: applied pod by pod, a stale pod could count beside its replacement. */
  #relisted(items: Pod[]): void {
    this.pods.clear();
    for (const pod of items) {
      this.pods.set(pod.metadata.name!, pod);
      this.created.add(pod.metadata.name!);
    }
    this.#observe();
  }

  #apply(event: { type: string; object: Pod }): void {
    const name = event.object.metadata?.name;
    if (!name || event.type === 'BOOKMARK') return;
    if (event.type === 'DELETED') this.pods.delete(name);
    else {
      this.pods.set(name, event.object);
      this.created.add(name);
    }
    this.#observe();
  }

  #observe(): void {
    this.max = Math.max(this.max, this.alive().length);
    if (this.#armed) {
      this.minReady = Math.min(this.minReady, this.ready().length);
      this.maxAlive = Math.max(this.maxAlive, this.alive().length);
    }
    this.onEvent();
  }

  /** From now on, record the fewest Ready and the most alive. */
  arm(): void {
    this.#armed = true;
    this.minReady = this.ready().length;
    this.maxAlive = this.alive().length;
  }

  resetMax(): void {
    this.max = this.alive().length;
  }

  /** Pods not being deleted. */
  alive(): Pod[] {
    return [...this.pods.values()].filter((p) => !p.metadata.deletionTimestamp);
  }

  ready(): Pod[] {
    return this.alive().filter(isPodReady);
  }

  async stop(): Promise<void> {
    this.#abort.abort();
    await this.#done.catch(() => {});
  }
}
