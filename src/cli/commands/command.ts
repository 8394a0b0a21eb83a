// The shape of one CLI command module, as kubectl's pkg/cmd/<verb>: its yargs command line, help, own flags, and how it runs.
import type { Argv } from 'yargs';
import type { CliContext } from '../context.js';

/** Parsed flags and positionals as yargs hands them over; each command reads the ones it declared. */
export type Flags = Record<string, unknown>;

interface CommandBase {
  /** yargs' command string: the verb and its positionals, e.g. `get [resources..]`. */
  command: string;
  /** The one line `--help` shows. */
  describe: string;
}

/** A command that runs. */
export interface LeafCommand extends CommandBase {
  /** Declares the command's own flags and positionals (the global ones come from main). */
  builder: (y: Argv) => Argv;
  /**
   * Loads the implementation, only now (one process runs one command, and most are never run),
   * and runs it with the flags turned into its arguments; resolves with the exit code.
   */
  run: (ctx: CliContext, flags: Flags) => Promise<number>;
}

/** A command that only groups others: `token create|list|delete`. */
export interface GroupCommand extends CommandBase {
  subcommands: readonly CliCommand[];
  /** The usage error when no subcommand is given. */
  required: string;
}

export type CliCommand = LeafCommand | GroupCommand;

/** The verb: the command string's first word. */
export function commandName(command: CliCommand): string {
  return command.command.split(' ')[0]!;
}
