/**
 * Moltbook's verification challenges: a short arithmetic question about lobsters
 * written with mixed case, stray symbols, doubled letters and words broken
 * apart ("tW eNtY tHrEe nEwToNs ... lOsEs SeVeN"). The answer goes back with two
 * decimals ("16.00").
 *
 * A wrong answer counts against the agent (repeated failures suspend it), so the
 * solver answers only when the question reads as exactly two numbers and one
 * operation; anything else returns undefined and the post fails saying why.
 *
 * The shapes it reads were taken from challenges agents met on Moltbook (see
 * test/unit/moltbook-challenge.test.ts): sums ("adds", "gains", "total"),
 * differences ("slows by", "reduces", "loses"), products ("multiplies",
 * "times", "product", mass times acceleration, force times distance as work)
 * and a rate times a span of its own unit ("twenty four meters per second for
 * three seconds"). "Per" alone is part of a unit, never a division.
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
  // A hyphen is a stray symbol too, so "twenty-three" arrives as one word.
  ...TENS.flatMap((t, i) => UNITS.slice(1).map((u, j) => [squeeze(t + u), 20 + 10 * i + j + 1] as [string, number])),
]);

/**
 * Long number words that arrive with one stray letter inside ("tWh eN tY",
 * "TrWeEnTy"). Short ones are left out: "eight" inside "weight" or "one" inside
 * "tone" would be misread.
 */
const LONG_NUMBER_WORDS = [...NUMBER_WORDS].filter(([word]) => word.length >= 6);

function numberWord(joined: string): number | undefined {
  const exact = NUMBER_WORDS.get(joined);
  if (exact !== undefined) return exact;
  for (const [word, value] of LONG_NUMBER_WORDS) {
    if (joined.length !== word.length + 1) continue;
    for (let cut = 1; cut < joined.length - 1; cut++) {
      if (joined.slice(0, cut) + joined.slice(cut + 1) === word) return value;
    }
  }
  return undefined;
}

/** The words of the text: letters and digits only (symbols inside a word vanish), lower case. */
function words(text: string): string[] {
  return text
    .toLowerCase()
    .replace(/[^a-z0-9\s]/g, '')
    .split(/\s+/)
    .filter(Boolean);
}

type Piece = { kind: 'number'; value: number; spelledOne: boolean } | { kind: 'text'; letters: string };

/** How many words a word broken apart can span ("cE nT iM eT eR s" spans six, numbers at most three). */
const MAX_NUMBER_PIECES = 3;

/** The text as numbers and the squeezed letters between them, joining broken words and tens with units. */
function pieces(list: string[]): Piece[] {
  const out: Piece[] = [];
  const text = (letters: string) => {
    const last = out.at(-1);
    if (last?.kind === 'text') last.letters = squeeze(last.letters + letters);
    else out.push({ kind: 'text', letters: squeeze(letters) });
  };
  let i = 0;
  while (i < list.length) {
    if (/^\d+$/.test(list[i])) {
      out.push({ kind: 'number', value: Number(list[i]), spelledOne: false });
      i++;
      continue;
    }
    // The longest join first: "fOuR tEeN" is fourteen, not four and ten.
    let value: number | undefined;
    let used = 0;
    for (let k = Math.min(MAX_NUMBER_PIECES, list.length - i); k >= 1 && value === undefined; k--) {
      const group = list.slice(i, i + k);
      if (group.some((w) => /\d/.test(w))) continue;
      value = numberWord(squeeze(group.join('')));
      used = value === undefined ? 0 : k;
    }
    if (value === undefined) {
      text(list[i]);
      i++;
      continue;
    }
    const last = out.at(-1);
    if (last?.kind === 'number' && last.value >= 20 && last.value % 10 === 0 && last.value < 100 && value > 0 && value < 10) {
      last.value += value;
    } else {
      out.push({ kind: 'number', value, spelledOne: value === 1 && used === 1 });
    }
    i += used;
  }
  return out;
}

type Operation = '+' | '-' | '*' | '/';

/** Words that name an operation, by squeezed stems found anywhere in the squeezed letters. */
const MULTIPLY = ['multipl', 'times', 'product'];
// Not "ratio": it hides inside "acceleration".
const DIVIDE = ['divid', 'split'];
const SUBTRACT = ['minus', 'subtract', 'lose', 'lost', 'reduc', 'remain', 'fewer', 'slow', 'drop', 'decreas', 'diferenc', 'shear', 'takesaway'];
const ADD = ['plus', 'ads', 'adition', 'gain', 'more', 'total', 'sum', 'combin', 'increas', 'together', 'acelerat'];
/** Words that contain a stem by chance. */
const FALSE_FRIENDS = ['against', 'again', 'close', 'sometimes', 'network'];
/** Units a rate is given per and a span is measured in. */
const SPANS = ['second', 'minute', 'hour', 'day', 'squarecentimeter', 'squaremeter', 'squareinch', 'meter', 'centimeter'].map(squeeze);

const has = (letters: string, stems: string[]) => stems.some((stem) => letters.includes(squeeze(stem)));

/** "twenty four meters per second for three seconds": a rate times a span of the unit it is per. */
function rateTimesSpan(between: string, after: string): boolean {
  return SPANS.some((unit) => between.includes(`per${unit}`) && after.startsWith(unit));
}

function operation(letters: string, between: string, after: string): Operation | undefined {
  const all = FALSE_FRIENDS.reduce((s, word) => s.split(squeeze(word)).join(' '), letters);
  if (rateTimesSpan(between, after)) return '*';
  if (has(all, MULTIPLY)) return '*';
  // Force from mass and acceleration, work from force and distance.
  if (all.includes('mas') && all.includes('acelerat')) return '*';
  if (all.includes('work')) return '*';
  if (has(all, DIVIDE)) return '/';
  // "loses seven, what is the total" names two: the specific verb wins over the question's word.
  if (has(all, SUBTRACT)) return '-';
  if (has(all, ADD)) return '+';
  return undefined;
}

function compute(op: Operation, a: number, b: number): number {
  if (op === '+') return a + b;
  if (op === '-') return a - b;
  if (op === '*') return a * b;
  return b === 0 ? Number.NaN : a / b;
}

/** The answer as Moltbook wants it ("16.00"), or undefined when the question cannot be read with confidence. */
export function solveChallenge(text: string): string | undefined {
  let parts = pieces(words(text));
  // "exerts twenty five newtons with one claw and gains seven": a lone "one" is an article, not a quantity.
  if (parts.filter((p) => p.kind === 'number').length > 2) parts = parts.filter((p) => p.kind !== 'number' || !p.spelledOne);
  let numbers = parts.flatMap((p, index) => (p.kind === 'number' ? [{ value: p.value, index }] : []));
  // "... hOw MaNy ToTaL <twEnTy FiVe> + <fIfTeEn>?": the question restates its two numbers at the end.
  const [a, b, c, d] = numbers;
  if (numbers.length === 4 && a.value === c.value && b.value === d.value) numbers = [a, b];
  if (numbers.length !== 2) return undefined;
  const lettersOf = (from: number, to: number) =>
    parts
      .slice(from, to)
      .map((p) => (p.kind === 'text' ? p.letters : ' '))
      .join('');
  const [first, second] = numbers;
  const op = operation(lettersOf(0, parts.length), lettersOf(first.index + 1, second.index), lettersOf(second.index + 1, parts.length));
  if (!op) return undefined;
  const result = compute(op, first.value, second.value);
  return Number.isFinite(result) ? result.toFixed(2) : undefined;
}
