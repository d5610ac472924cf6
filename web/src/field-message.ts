/**
 * The API's complaint about one field, as a sentence that names the field. The
 * server words its own rules as the rest of a sentence ("is required: …",
 * "must be …"); a schema's default wording ("Invalid input: expected string,
 * received undefined") is turned into plain words.
 */
import { t } from './i18n.ts';

const MISSING = /^Invalid input: expected \w+, received undefined$/;

export function fieldSentence(label: string | undefined, message: string): string {
  if (MISSING.test(message)) return label ? t('form.required', { field: label }) : t('form.requiredUnnamed');
  if (!label) return message;
  // "is required: …", "must be …": the field's name completes the sentence.
  if (/^[a-z]/.test(message)) return `${label} ${message}`;
  return t('form.problem', { field: label, message });
}
