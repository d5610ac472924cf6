/**
 * Which language the pages are shown in: the browser's until the person
 * chooses (prefs.ts), each translation fetched only when it is needed, so the
 * first page carries English alone.
 */
import { en, adoptCatalogue, LANGUAGES, type Catalogue, type Language } from './i18n.ts';

const translations: Record<Exclude<Language, 'en'>, () => Promise<{ default: Catalogue }>> = {
  es: () => import('./i18n/es.ts'),
  fr: () => import('./i18n/fr.ts'),
  de: () => import('./i18n/de.ts'),
  'pt-BR': () => import('./i18n/pt-BR.ts'),
  it: () => import('./i18n/it.ts'),
  ja: () => import('./i18n/ja.ts'),
  'zh-CN': () => import('./i18n/zh-CN.ts'),
};

/** The language of the first of `tags` (the browser's, best first) Herald speaks: exactly, else by its base (pt-PT reads pt-BR). */
export function matchLanguage(tags: readonly string[]): Language {
  for (const tag of tags) {
    const exact = LANGUAGES.find((l) => l.toLowerCase() === tag.toLowerCase());
    if (exact) return exact;
    const base = tag.split('-')[0]!.toLowerCase();
    const near = LANGUAGES.find((l) => l.split('-')[0] === base);
    if (near) return near;
  }
  return 'en';
}

export const browserLanguage = (): Language => matchLanguage(navigator.languages?.length ? navigator.languages : [navigator.language]);

let latest: Language = 'en';

/** Shows the application in `language`: its catalogue is fetched once, then every page draws again in it. */
export async function showLanguage(language: Language): Promise<void> {
  latest = language;
  const catalogue = language === 'en' ? en : (await translations[language]()).default;
  // Two quick choices: the last one wins, whichever catalogue arrives first.
  if (latest === language) adoptCatalogue(language, catalogue);
}
