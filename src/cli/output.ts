/**
 * How the client prints: text a person reads (tables, local dates, colour only
 * on a terminal) or, with --json, the API's answer as JSON for scripts.
 */

export interface Styles {
  bold(text: string): string;
  dim(text: string): string;
  red(text: string): string;
  green(text: string): string;
  yellow(text: string): string;
}

function styles(enabled: boolean): Styles {
  const wrap = (open: number, close: number) => (text: string) => (enabled ? `\x1b[${open}m${text}\x1b[${close}m` : text);
  return { bold: wrap(1, 22), dim: wrap(2, 22), red: wrap(31, 39), green: wrap(32, 39), yellow: wrap(33, 39) };
}

export interface OutputOptions {
  json: boolean;
  noColor: boolean;
  stdout?: NodeJS.WriteStream;
  stderr?: NodeJS.WriteStream;
}

export class Output {
  readonly json: boolean;
  /** Styles for stdout and for stderr: each only when that stream is a terminal. */
  readonly style: Styles;
  readonly errorStyle: Styles;
  private readonly stdout: NodeJS.WriteStream;
  private readonly stderr: NodeJS.WriteStream;

  constructor(options: OutputOptions) {
    this.json = options.json;
    this.stdout = options.stdout ?? process.stdout;
    this.stderr = options.stderr ?? process.stderr;
    this.style = styles(!options.noColor && Boolean(this.stdout.isTTY));
    this.errorStyle = styles(!options.noColor && Boolean(this.stderr.isTTY));
  }

  /** Prints `data` as JSON with --json, else the text `human` builds from it. */
  result<T>(data: T, human: (data: T) => string): void {
    this.line(this.json ? JSON.stringify(data, null, 2) : human(data));
  }

  line(text = ''): void {
    this.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
  }

  /** Messages about progress go to stderr, so stdout stays the result. */
  note(text: string): void {
    if (!this.json) this.stderr.write(`${text}\n`);
  }

  error(text: string): void {
    this.stderr.write(`${text}\n`);
  }

  /** A progress bar on stderr, drawn only on a terminal (and never with --json). */
  progress(label: string): ((sent: number, total: number | undefined) => void) & { done(): void } {
    const live = Boolean(this.stderr.isTTY) && !this.json;
    let last = -1;
    const draw = Object.assign(
      (sent: number, total: number | undefined) => {
        if (!live) return;
        const percent = total ? Math.floor((sent / total) * 100) : -1;
        if (percent === last && total) return;
        last = percent;
        const width = 24;
        const filled = total ? Math.round((sent / total) * width) : 0;
        const bar = total ? `[${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${String(percent).padStart(3)}%` : '';
        this.stderr.write(`\r${label} ${bar} ${formatBytes(sent)}${total ? ` / ${formatBytes(total)}` : ''}\x1b[K`);
      },
      {
        done: () => {
          if (live) this.stderr.write('\r\x1b[K');
        },
      },
    );
    return draw;
  }
}

/** Rows under a header, columns padded to their widest cell. */
export function table(header: string[], rows: string[][], style?: Styles): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const render = (cells: string[]) =>
    cells
      .map((cell, i) => (i === cells.length - 1 ? cell : cell.padEnd(widths[i])))
      .join('  ')
      .trimEnd();
  const head = render(header);
  return [style ? style.bold(head) : head, ...rows.map(render)].join('\n');
}

const pad = (n: number) => String(n).padStart(2, '0');

/** An instant in the local time zone: "2026-12-01 10:00 (UTC+01:00)". */
export function localDate(value: string | number | Date | null | undefined): string {
  if (value === null || value === undefined || value === '') return '-';
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) return String(value);
  const offset = -date.getTimezoneOffset();
  const sign = offset >= 0 ? '+' : '-';
  const zone = `UTC${sign}${pad(Math.floor(Math.abs(offset) / 60))}:${pad(Math.abs(offset) % 60)}`;
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())} ${pad(date.getHours())}:${pad(date.getMinutes())} (${zone})`;
}

export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

/** One line of at most `max` characters. */
export function excerpt(text: string, max = 50): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}
