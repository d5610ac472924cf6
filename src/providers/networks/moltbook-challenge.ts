/**
 * Moltbook's verification challenges: a short arithmetic question about lobsters
 * written with mixed case, stray symbols, doubled letters and words broken
 * apart ("tW eNtY tHrEe nEwToNs ... lOsEs SeVeN"). The answer goes back with two
 * decimals ("16.00").
 *
 * A wrong answer counts against the agent (repeated failures suspend it), so the
 * solver answers only when the question reads as exactly two numbers and one
 * operation; anything else returns undefined and the post fails saying why.
 */

const UNITS = ['zero', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine'];
const TEENS = ['ten', 'eleven', 'twelve', 'thirteen', 'fourteen', 'fifteen', 'sixteen', 'seventeen', 'eighteen', 'nineteen'];
const TENS = ['twenty', 'thirty', 'forty', 'fifty', 'sixty', 'seventy', 'eighty', 'ninety'];

/** Doubled letters are part of the disguise, so words are compared with runs of one letter squeezed to one. */
function squeeze(word: string): string {
  return word.replace(/(.)\1+/g, '$1');
}

const NUMBER_WORDS = new Map<string, number>([
  ...UNITS.map((w, i) => [squeeze(w), i] as [string, number]),
  ...TEENS.map((w, i) => [squeeze(w), 10 + i] as [string, number]),
  ...TENS.map((w, i) => [squeeze(w), 20 + 10 * i] as [string, number]),
  ['hundred', 100],
]);

/** Words that say which operation joins the two numbers, by their squeezed stems. */
const OPERATIONS: { op: '+' | '-' | '*' | '/'; stems: string[] }[] = [
  { op: '*', stems: ['multipl', 'times', 'product'] },
  { op: '/', stems: ['divid', 'split', 'ratio', 'per'] },
  { op: '-', stems: ['minus', 'subtract', 'lose', 'los', 'reduc', 'remain', 'les', 'fewer', 'slow', 'drop', 'decreas', 'diferenc'] },
  { op: '+', stems: ['plus', 'ad', 'gain', 'more', 'total', 'sum', 'combin', 'increas', 'together', 'acelerat'] },
];

/** The words of the text: letters and digits only, squeezed, lower case. */
function words(text: string): string[] {
  return text
    .toLowerCase()
    .replace(/[^a-z0-9\s]/g, '')
    .split(/\s+/)
    .filter(Boolean)
    .map(squeeze);
}

/** The numbers the words spell, joining words broken apart ("tw enty") and tens with units ("twenty three"). */
function numbers(list: string[]): number[] {
  const found: number[] = [];
  let i = 0;
  let pendingTens: number | undefined;
  const flush = () => {
    if (pendingTens !== undefined) found.push(pendingTens);
    pendingTens = undefined;
  };
  while (i < list.length) {
    if (/^\d+$/.test(list[i])) {
      flush();
      found.push(Number(list[i]));
      i++;
      continue;
    }
    let value: number | undefined;
    let used = 0;
    for (let k = 1; k <= 3 && i + k <= list.length; k++) {
      const joined = squeeze(list.slice(i, i + k).join(''));
      if (NUMBER_WORDS.has(joined)) {
        value = NUMBER_WORDS.get(joined);
        used = k;
        break;
      }
    }
    if (value === undefined) {
      flush();
      i++;
      continue;
    }
    if (pendingTens !== undefined && value > 0 && value < 10) {
      found.push(pendingTens + value);
      pendingTens = undefined;
    } else {
      flush();
      if (value >= 20 && value % 10 === 0 && value < 100) pendingTens = value;
      else found.push(value);
    }
    i += used;
  }
  flush();
  return found;
}

function operation(list: string[]): '+' | '-' | '*' | '/' | undefined {
  const matches = new Set<string>();
  for (const { op, stems } of OPERATIONS) {
    if (list.some((w) => stems.some((stem) => (stem.length <= 3 ? w === stem || w === `${stem}s` : w.startsWith(stem))))) matches.add(op);
  }
  // "loses seven, what is the total" names two: the first group in the table (the specific verb) wins.
  for (const { op } of OPERATIONS) if (matches.has(op)) return op;
  return undefined;
}

/** The answer as Moltbook wants it ("16.00"), or undefined when the question cannot be read with confidence. */
export function solveChallenge(text: string): string | undefined {
  const list = words(text);
  const values = numbers(list);
  const op = operation(list);
  if (values.length !== 2 || !op) return undefined;
  const [a, b] = values;
  const result = op === '+' ? a + b : op === '-' ? a - b : op === '*' ? a * b : b === 0 ? Number.NaN : a / b;
  return Number.isFinite(result) ? result.toFixed(2) : undefined;
}
