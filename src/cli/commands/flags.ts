// Flags several commands declare alike, and the readers that turn yargs' parsed values into the implementations' arguments.

/** A repeatable or variadic value as a list (absent: empty). */
export function strings(v: unknown): string[] {
  return Array.isArray(v) ? v.map(String) : v === undefined ? [] : [String(v)];
}

/** A value as a string, or undefined when absent (numbers stay text: parse-numbers is off). */
export function str(v: unknown): string | undefined {
  return v === undefined ? undefined : String(v);
}

/** `-f FILE|DIR|-` for manifests (apply, create, delete). */
export const filenameFlag = {
  alias: 'filename',
  type: 'string',
  array: true,
  requiresArg: true,
  describe: 'a manifest file, a directory of them, or - for stdin',
} as const;

/** `-R` with `-f DIR`. */
export const recursiveFlag = { alias: 'recursive', type: 'boolean', describe: 'with -f DIR, also read subdirectories' } as const;

/** `--no-headers` for tables; read back as `flags.headers === false`. */
export const headersFlag = { type: 'boolean', default: true, describe: 'print the header row (--no-headers omits it)' } as const;
