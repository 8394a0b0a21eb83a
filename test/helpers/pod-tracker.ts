// Follows the pods of one label selector through a real watch, for tests that must show a controller never overshoots: which pods exist, how many were ever made, and the extremes seen at any event.
export const isPodReady = (p: any): boolean => !!p.status?.conditions?.some((c: any) => c.type === 'Ready' && c.status === 'True');

export class PodTracker {
  readonly pods = new Map<string, any>();
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

  /** Watches `namespace`'s pods matching `selector` on the API server at `url`. */
  start(url: string, token: string, selector: string, namespace = 'default'): void {
    this.#done = (async () => {
      const res = await fetch(`${url}/api/v1/namespaces/${namespace}/pods?watch=1&labelSelector=${encodeURIComponent(selector)}`, {
        headers: { authorization: `Bearer ${token}` }, signal: this.#abort.signal,
      });
      const decoder = new TextDecoder();
      let buffered = '';
      try {
        for await (const chunk of res.body as any as AsyncIterable<Uint8Array>) {
          buffered += decoder.decode(chunk, { stream: true });
          let nl: number;
          while ((nl = buffered.indexOf('\n')) >= 0) {
            const line = buffered.slice(0, nl).trim();
            buffered = buffered.slice(nl + 1);
            if (line) this.#apply(JSON.parse(line));
          }
        }
      } catch (err) {
        if (!this.#abort.signal.aborted) throw err;
      }
    })();
  }

  #apply(event: { type: string; object: any }): void {
    const name = event.object.metadata?.name;
    if (!name || event.type === 'BOOKMARK') return;
    if (event.type === 'DELETED') this.pods.delete(name);
    else {
      this.pods.set(name, event.object);
      this.created.add(name);
    }
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
  alive(): any[] {
    return [...this.pods.values()].filter((p) => !p.metadata.deletionTimestamp);
  }

  ready(): any[] {
    return this.alive().filter(isPodReady);
  }

  async stop(): Promise<void> {
    this.#abort.abort();
    await this.#done.catch(() => {});
  }
}
