/**
 * Fills a catalogue message: {name} takes a value (numbers written the
 * locale's way), and {count, plural, one {# post} other {# posts}} picks the
 * form Intl.PluralRules gives for the number (=0 style exact forms first, then
 * the locale's category, then "other"); # stands for the number.
 */

/** A form's text may hold {name} placeholders, one level deep. */
const FORM = String.raw`(?:[^{}]|\{\w+\})*`;
const PLURAL = new RegExp(String.raw`\{(\w+), plural,((?:\s*(?:=\d+|\w+)\s*\{${FORM}\})+)\s*\}`, 'g');
const FORMS = new RegExp(String.raw`(=\d+|\w+)\s*\{(${FORM})\}`, 'g');

export type MessageVars = Record<string, string | number>;

/**
 * One number format and one plural rule set per locale: making them is slow
 * (a month view's "+N more" links and hints asked for hundreds, a tenth of its drawing).
 */
const numberFormats = new Map<string, Intl.NumberFormat>();
const pluralRules = new Map<string, Intl.PluralRules>();
/** A plural's forms by name, read once per message. */
const formsOf = new Map<string, Map<string, string>>();

function once<T>(cache: Map<string, T>, key: string, make: () => T): T {
  let made = cache.get(key);
  if (!made) {
    made = make();
    cache.set(key, made);
  }
  return made;
}

function written(value: string | number, locale: string): string {
  return typeof value === 'number' ? once(numberFormats, locale, () => new Intl.NumberFormat(locale)).format(value) : value;
}

function pluralForm(forms: string, count: number, locale: string): string {
  const byName = once(formsOf, forms, () => new Map([...forms.matchAll(FORMS)].map((m) => [m[1]!, m[2]!])));
  const chosen =
    byName.get(`=${count}`) ?? byName.get(once(pluralRules, locale, () => new Intl.PluralRules(locale)).select(count)) ?? byName.get('other') ?? '';
  return chosen.replace(/#/g, written(count, locale));
}

export function formatMessage(text: string, vars: MessageVars, locale: string): string {
  const withForms = text.replace(PLURAL, (whole, name: string, forms: string) => {
    const value = vars[name];
    return typeof value === 'number' ? pluralForm(forms, value, locale) : whole;
  });
  return withForms.replace(/\{(\w+)\}/g, (whole, name: string) => (name in vars ? written(vars[name]!, locale) : whole));
}

/** The names a message expects: {name} placeholders and the number of each plural. */
export function placeholdersOf(text: string): string[] {
  const names = new Set<string>();
  const withoutForms = text.replace(PLURAL, (_whole, name: string, forms: string) => {
    names.add(name);
    for (const m of forms.matchAll(FORMS)) for (const inner of m[2]!.matchAll(/\{(\w+)\}/g)) names.add(inner[1]!);
    return '';
  });
  for (const m of withoutForms.matchAll(/\{(\w+)\}/g)) names.add(m[1]!);
  return [...names].sort();
}
