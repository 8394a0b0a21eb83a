// An undo log kept in a file, one JSON action a line, written as things are made: a later process (`sim-cluster down`) undoes what an earlier one made.
import { appendFileSync, readFileSync } from 'node:fs';
import { undoAll, type UndoAction, type UndoLog } from './undo-actions.js';

/** The actions in a journal's text; a torn last line (the writer was killed mid-write) is skipped, as is anything that is not an action. */
export function parseUndoJournal(text: string): UndoAction[] {
  const actions: UndoAction[] = [];
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    try {
      const action = JSON.parse(line) as UndoAction;
      if (action && typeof action === 'object' && typeof action.kind === 'string') actions.push(action);
    } catch {
      /* torn */
    }
  }
  return actions;
}

export function readUndoJournal(path: string): UndoAction[] {
  try {
    return parseUndoJournal(readFileSync(path, 'utf8'));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
}

export class UndoJournal implements UndoLog {
  readonly #path: string;
  readonly #log: (line: string) => void;
  readonly #actions: UndoAction[];
  #done?: Promise<void>;

  /** Appends to the journal at `path`, which may already hold actions (they are undone too). */
  constructor(options: { path: string; log?: (line: string) => void }) {
    this.#path = options.path;
    this.#log = options.log ?? (() => {});
    this.#actions = readUndoJournal(options.path);
  }

  /** Has run() been called? */
  get ran(): boolean {
    return this.#done !== undefined;
  }

  get actions(): readonly UndoAction[] {
    return this.#actions;
  }

  push(action: UndoAction): void {
    // Written before anything else happens: should this process be killed next, the action is on disk.
    appendFileSync(this.#path, `${JSON.stringify(action)}\n`);
    this.#actions.push(action);
  }

  run(): Promise<void> {
    this.#done ??= (async () => {
      const failures = await undoAll(this.#actions, this.#log);
      if (failures.length > 0) throw new Error(`could not undo everything:\n  ${failures.join('\n  ')}`);
    })();
    return this.#done;
  }
}
