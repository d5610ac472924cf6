/** The API's complaint about a field, as the web application words it beside the field (web/src/field-message.ts). */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

// The catalogue picks its language from the browser's: an English one here (Node 20 has no navigator).
globalThis.navigator ??= { language: 'en-GB', languages: ['en-GB'] } as unknown as Navigator;
const { fieldSentence } = await import('../../web/src/field-message.ts');

describe('field sentences', () => {
  it("turns a schema's missing-value wording into a sentence naming the field", () => {
    assert.equal(fieldSentence('Identifier', 'Invalid input: expected string, received undefined'), 'Identifier is required.');
    assert.equal(fieldSentence(undefined, 'Invalid input: expected string, received undefined'), 'This is required.');
  });

  it("completes the server's own rule with the field's name", () => {
    assert.equal(fieldSentence('Instance', 'is required: the address of your Mastodon server'), 'Instance is required: the address of your Mastodon server');
    assert.equal(fieldSentence('Url', 'must be an http(s) URL'), 'Url must be an http(s) URL');
  });

  it('puts the field before any other wording, and leaves a message alone without a field', () => {
    assert.equal(fieldSentence('Url', 'Invalid URL'), 'Url: Invalid URL');
    assert.equal(fieldSentence(undefined, 'Pick at least one channel.'), 'Pick at least one channel.');
  });
});
