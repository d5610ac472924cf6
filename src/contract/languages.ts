/**
 * The languages the web application is translated into, as BCP 47 tags. A
 * module of its own, without zod, so the web application's first page can
 * carry the list without the schema library.
 */
export const LANGUAGES = ['en', 'es', 'fr', 'de', 'pt-BR', 'it', 'ja', 'zh-CN'] as const;
export type Language = (typeof LANGUAGES)[number];
