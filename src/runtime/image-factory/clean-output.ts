// Turns build output (pip, Docker) into plain lines as a terminal would have shown them: no ANSI escape codes, no progress-bar redraws, and picks the line that says why a build failed.

/** CSI (colours, cursor moves), OSC (titles, links) and the two-byte escapes. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: escape and bell characters are what it matches
const ANSI = /\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]|\x9b[0-?]*[ -/]*[@-~]/g;

/** The text without ANSI escape codes. */
export function stripAnsi(text: string): string {
  return text.replace(ANSI, '');
}

/**
 * One output line as it ended up on a terminal: escape codes gone, and for a line redrawn with
 * carriage returns (a progress bar) only its last drawing.
 */
export function terminalLine(raw: string): string {
  const plain = stripAnsi(raw).replace(/\r+$/, '');
  const cr = plain.lastIndexOf('\r');
  return (cr >= 0 ? plain.slice(cr + 1) : plain).trimEnd();
}

/**
 * The line that says why a failed step failed: pip's first `ERROR:` line (the later ones repeat
 * it: "No matching distribution found"), else a lower-case `error:` line (a build backend's), else
 * the last line that is not a blank or a hint.
 */
export function failingLine(lines: readonly string[]): string | undefined {
  const upper = lines.find((l) => /^ERROR: /.test(l.trim()));
  if (upper) return upper.trim();
  const lower = lines.find((l) => /^error: /i.test(l.trim()));
  if (lower) return lower.trim();
  return [...lines]
    .reverse()
    .map((l) => l.trim())
    .find((l) => l !== '' && !/^(note|hint|notice):/i.test(l) && !/^\[notice\]/.test(l));
}
