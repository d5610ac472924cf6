/**
 * CSV injection: a spreadsheet runs a cell that starts with =, +, - or @ (or a
 * tab or a carriage return before one) as a formula, and a feed item's title can
 * be `=HYPERLINK(...)`. The export writes such a cell behind a single quote, as
 * OWASP recommends, and the import takes that quote off again. A cell of quotes
 * followed by one of those characters gets one more quote too, so the rule reads
 * back without doubt: the import removes exactly one quote from a cell of one or
 * more quotes followed by such a character, and every text comes back as it was.
 */
const RUNS_AS_FORMULA = /^'*[=+\-@\t\r]/;
const QUOTED_BY_EXPORT = /^'+[=+\-@\t\r]/;

/** A cell as the export writes it. */
export function neutralised(cell: string): string {
  return RUNS_AS_FORMULA.test(cell) ? `'${cell}` : cell;
}

/** A cell as the import reads it: the export's quote taken off. */
export function restored(cell: string): string {
  return QUOTED_BY_EXPORT.test(cell) ? cell.slice(1) : cell;
}
