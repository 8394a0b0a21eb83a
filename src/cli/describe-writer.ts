// The describe writer: aligned `Key: value` lines, sections and tables, and kubectl's describe time format; every per-kind describer writes through it.

interface Line {
  indent: number;
  key: string;
  /** Undefined: a section header (`Containers:`); several: continuation lines aligned under the first. */
  values?: string[];
}

/**
 * Collects `Key: value` lines and aligns each run of sibling keys, like the tabwriter
 * kubectl's describe uses (values start two columns after the longest key of the run).
 */
export class DescribeWriter {
  private readonly lines: Line[] = [];

  field(indent: number, key: string, value: string | string[] | undefined | null): void {
    const values = Array.isArray(value) ? (value.length ? value : ['<none>']) : [value === undefined || value === null || value === '' ? '<none>' : value];
    this.lines.push({ indent, key, values });
  }

  section(indent: number, key: string): void {
    this.lines.push({ indent, key });
  }

  /** Pre-formatted lines (tables) at an indent. */
  raw(indent: number, text: string): void {
    for (const line of text.replace(/\n$/, '').split('\n')) this.lines.push({ indent: -1, key: ' '.repeat(indent * 2) + line });
  }

  render(): string {
    let out = '';
    let i = 0;
    while (i < this.lines.length) {
      const line = this.lines[i]!;
      if (!line.values) {
        out += line.indent < 0 ? `${line.key}\n` : `${' '.repeat(line.indent * 2)}${line.key}:\n`;
        i++;
        continue;
      }
      let end = i;
      while (end < this.lines.length && this.lines[end]!.values && this.lines[end]!.indent === line.indent) end++;
      const width = Math.max(...this.lines.slice(i, end).map((l) => l.key.length + 1)) + 2;
      const pad = ' '.repeat(line.indent * 2);
      for (const l of this.lines.slice(i, end)) {
        const [first, ...rest] = l.values!;
        out += `${pad}${`${l.key}:`.padEnd(width)}${first}\n`;
        for (const more of rest) out += `${pad}${' '.repeat(width)}${more}\n`;
      }
      i = end;
    }
    return out;
  }
}

/** RFC 1123 with numeric zone, as kubectl prints times: `Mon, 02 Jan 2006 15:04:05 +0000`. */
export function describeTime(timestamp: string | undefined | null): string | undefined {
  if (!timestamp) return undefined;
  const d = new Date(timestamp);
  if (Number.isNaN(d.getTime())) return timestamp;
  return d.toUTCString().replace(/GMT$/, '+0000');
}
