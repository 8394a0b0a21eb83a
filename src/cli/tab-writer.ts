// Aligns tab-separated lines the way Go's text/tabwriter does with kubectl describe's settings (padding 2, spaces), so output laid out like kubectl's lines up like kubectl's.

/**
 * Lays out `text`: each line is split at tabs into cells; the last cell of a line is not
 * aligned. A column block is a run of consecutive lines that all have a cell in that column,
 * and each block is as wide as its widest cell plus `padding`. A line without tabs ends every
 * block, which is why kubectl's sections (`Containers:`) restart the alignment.
 */
export function alignTabs(text: string, padding = 2): string {
  const lines = text.split('\n').map((l) => l.split('\t'));
  const out: string[] = lines.map(() => '');
  layout(lines, out, 0, 0, lines.length, padding);
  return out.join('\n');
}

/** Aligns column `column` within lines [from, to) and recurses into each block for the next column. */
function layout(lines: string[][], out: string[], column: number, from: number, to: number, padding: number): void {
  let i = from;
  while (i < to) {
    if (lines[i]!.length - 1 <= column) {
      // No aligned cell here: the rest of the line is its last cell.
      out[i] += lines[i]!.slice(column).join('\t');
      i++;
      continue;
    }
    let end = i;
    let width = 0;
    while (end < to && lines[end]!.length - 1 > column) {
      width = Math.max(width, lines[end]![column]!.length + padding);
      end++;
    }
    for (let j = i; j < end; j++) out[j] += lines[j]![column]!.padEnd(width);
    layout(lines, out, column + 1, i, end, padding);
    i = end;
  }
}
