/**
 * Every language says everything: each translation under web/src/i18n/ has
 * every key of the English catalogue, with the same placeholders; the pages
 * show no text outside the catalogue (JSX text, and the attributes a person
 * sees or hears: aria-label, title, placeholder, alt, label); and messages take
 * their plural forms and numbers from Intl in the chosen language.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import ts from 'typescript';
import { LANGUAGES } from '../../src/contract/languages.ts';
import { formatMessage, placeholdersOf } from '../../web/src/message-format.ts';

const WEB = path.resolve(import.meta.dirname, '..', '..', 'web', 'src');
const { en } = (await import('../../web/src/i18n.ts')) as unknown as { en: Record<string, string> };
const translated = LANGUAGES.filter((l) => l !== 'en');

describe('the catalogue in every language', () => {
  it('has one file per language under web/src/i18n/, and no other', () => {
    const present = fs.readdirSync(path.join(WEB, 'i18n')).map((name) => name.replace(/\.ts$/, ''));
    assert.deepEqual(present.sort(), [...translated].sort());
  });

  for (const language of translated) {
    it(`${language}: every English key, no other, each with the same placeholders`, async () => {
      const catalogue: Record<string, string> = (await import(`../../web/src/i18n/${language}.ts`)).default;
      const problems: string[] = [];
      for (const [key, english] of Object.entries(en)) {
        const text = catalogue[key];
        if (typeof text !== 'string' || text.trim() === '') {
          problems.push(`${language} is missing "${key}" (English: ${JSON.stringify(english)})`);
          continue;
        }
        const want = placeholdersOf(english);
        const got = placeholdersOf(text);
        if (want.join() !== got.join()) problems.push(`${language} "${key}" has placeholders {${got.join('}, {')}}, English has {${want.join('}, {')}}`);
        if (/\{\w+, plural,/.test(text) && !/\bother\s*\{/.test(text)) problems.push(`${language} "${key}" has a plural without its "other" form`);
      }
      for (const key of Object.keys(catalogue)) if (!(key in en)) problems.push(`${language} has "${key}", which English does not have`);
      assert.deepEqual(problems, [], problems.join('\n'));
    });
  }
});

/** Attributes a person sees or hears; a literal in one is text outside the catalogue. */
const VISIBLE_ATTRIBUTES = new Set(['aria-label', 'aria-description', 'aria-roledescription', 'aria-valuetext', 'title', 'placeholder', 'alt', 'label']);
const hasLetters = (text: string) => /\p{L}/u.test(text);

function tsxFiles(dir: string): string[] {
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .flatMap((entry) => (entry.isDirectory() ? tsxFiles(path.join(dir, entry.name)) : entry.name.endsWith('.tsx') ? [path.join(dir, entry.name)] : []));
}

/**
 * Whether a string literal inside a JSX expression ends up shown: it is unless
 * it is an argument (t('key'), a function's input), an operand of a comparison,
 * a condition, a key or an object's property.
 */
function reachesThePage(literal: ts.Node): boolean {
  let node = literal;
  const passesThrough = new Set([
    ts.SyntaxKind.BarBarToken,
    ts.SyntaxKind.QuestionQuestionToken,
    ts.SyntaxKind.AmpersandAmpersandToken,
    ts.SyntaxKind.PlusToken,
  ]);
  while (node.parent && !ts.isJsxExpression(node.parent)) {
    const parent = node.parent;
    if (ts.isBinaryExpression(parent) && !passesThrough.has(parent.operatorToken.kind)) return false;
    if (ts.isConditionalExpression(parent) && parent.condition === node) return false;
    if (!ts.isBinaryExpression(parent) && !ts.isConditionalExpression(parent) && !ts.isParenthesizedExpression(parent)) return false;
    node = parent;
  }
  const holder = node.parent?.parent;
  if (!holder) return false;
  if (ts.isJsxElement(holder) || ts.isJsxFragment(holder)) return true;
  return ts.isJsxAttribute(holder) && VISIBLE_ATTRIBUTES.has(holder.name.getText());
}

function literalsOutsideTheCatalogue(file: string): string[] {
  const source = ts.createSourceFile(file, fs.readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true, ts.ScriptKind.TSX);
  const found: string[] = [];
  const report = (node: ts.Node, text: string) =>
    found.push(`${path.relative(WEB, file)}:${source.getLineAndCharacterOfPosition(node.getStart()).line + 1} ${JSON.stringify(text.trim())}`);
  const visit = (node: ts.Node) => {
    if (ts.isJsxText(node) && hasLetters(node.text)) report(node, node.text);
    if (
      ts.isJsxAttribute(node) &&
      VISIBLE_ATTRIBUTES.has(node.name.getText()) &&
      node.initializer &&
      ts.isStringLiteral(node.initializer) &&
      hasLetters(node.initializer.text)
    )
      report(node, node.initializer.text);
    if ((ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) && hasLetters(node.text) && reachesThePage(node)) report(node, node.text);
    if (ts.isTemplateExpression(node) && reachesThePage(node)) {
      const fixed = [node.head.text, ...node.templateSpans.map((span) => span.literal.text)].join('');
      if (hasLetters(fixed)) report(node, node.getText());
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

describe('the pages', () => {
  it('show no text that is not in the catalogue (JSX text and visible attributes go through t())', () => {
    const found = tsxFiles(WEB).flatMap(literalsOutsideTheCatalogue);
    assert.deepEqual(found, [], `text outside the catalogue; give each a key in web/src/i18n.ts and show it with t():\n${found.join('\n')}`);
  });
});

describe('messages', () => {
  const posts = '{count, plural, one {# post} other {# posts}} on {channel}';
  it('take the plural form Intl.PluralRules gives for the language', () => {
    assert.equal(formatMessage(posts, { count: 1, channel: 'Blog' }, 'en'), '1 post on Blog');
    assert.equal(formatMessage(posts, { count: 0, channel: 'Blog' }, 'en'), '0 posts on Blog');
    // French counts zero as one; Japanese has a single form.
    assert.equal(formatMessage('{count, plural, one {# publication} other {# publications}}', { count: 0 }, 'fr'), '0 publication');
    assert.equal(formatMessage('{count, plural, other {#件の投稿}}', { count: 1 }, 'ja'), '1件の投稿');
    assert.equal(formatMessage('{count, plural, =0 {nothing} one {one} other {#}}', { count: 0 }, 'en'), 'nothing');
  });

  it('write numbers the way the language does', () => {
    assert.equal(formatMessage('{count} / {max}', { count: 1234, max: 5000 }, 'de'), '1.234 / 5.000');
    assert.equal(formatMessage(posts, { count: 2500, channel: 'X' }, 'en'), '2,500 posts on X');
  });

  it('name every placeholder, plurals and the placeholders inside their forms included', () => {
    assert.deepEqual(placeholdersOf(posts), ['channel', 'count']);
    assert.deepEqual(placeholdersOf('{count, plural, one {# in {zone}} other {# in {zone}}}'), ['count', 'zone']);
  });
});
