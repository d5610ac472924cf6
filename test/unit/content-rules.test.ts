import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { contentProblems, type ItemLimits } from '../../src/providers/content-rules.ts';

const plain: ItemLimits = { maxLength: 10, maxMedia: 2, mediaKinds: ['image', 'video'] };
const image = { mimeType: 'image/png' };
const video = { mimeType: 'video/mp4' };

describe('content rules shared by the API and the composer', () => {
  it('finds nothing wrong with an item that fits', () => {
    assert.deepEqual(contentProblems(plain, { content: 'hello', media: [image] }), []);
  });

  describe('length', () => {
    it('allows exactly the longest text and reports one character more with both numbers', () => {
      assert.deepEqual(contentProblems(plain, { content: 'x'.repeat(10), media: [] }), []);
      assert.deepEqual(contentProblems(plain, { content: 'x'.repeat(11), media: [] }), [{ field: 'content', rule: 'max_length', limit: 10, actual: 11 }]);
    });

    it('counts as X counts: CJK and emoji weigh two, a link 23, however long it is', () => {
      const x: ItemLimits = { ...plain, maxLength: 280, counting: 'x' };
      assert.deepEqual(contentProblems(x, { content: '日'.repeat(140), media: [] }), []);
      // 141 code points: far under 280 as code points, over it as X weighs them.
      assert.deepEqual(contentProblems(x, { content: '日'.repeat(141), media: [] }), [{ field: 'content', rule: 'max_length', limit: 280, actual: 282 }]);
      assert.deepEqual(contentProblems(x, { content: '😀'.repeat(141), media: [] }), [{ field: 'content', rule: 'max_length', limit: 280, actual: 282 }]);
      const link = `https://example.com/${'a'.repeat(300)}`;
      assert.deepEqual(contentProblems(x, { content: `${'x'.repeat(256)} ${link}`, media: [] }), []);
      assert.deepEqual(contentProblems(x, { content: `${'x'.repeat(257)} ${link}`, media: [] }), [
        { field: 'content', rule: 'max_length', limit: 280, actual: 281 },
      ]);
    });

    it('counts code points by default and as the network says otherwise', () => {
      const emoji = '😀'.repeat(10);
      assert.deepEqual(contentProblems(plain, { content: emoji, media: [] }), [], 'ten code points');
      assert.deepEqual(contentProblems({ ...plain, counting: 'utf16' }, { content: emoji, media: [] }), [
        { field: 'content', rule: 'max_length', limit: 10, actual: 20 },
      ]);
      const families = '👨‍👩‍👧'.repeat(10);
      assert.deepEqual(contentProblems({ ...plain, counting: 'graphemes' }, { content: families, media: [] }), [], 'ten graphemes');
      assert.equal(contentProblems(plain, { content: families, media: [] })[0]?.rule, 'max_length', 'many more code points');
    });
  });

  describe('an empty item', () => {
    it('is a problem without text and media, blank space counting as no text', () => {
      assert.deepEqual(contentProblems(plain, { content: '', media: [] }), [{ field: 'content', rule: 'empty' }]);
      assert.deepEqual(contentProblems(plain, { content: ' \n\t', media: [] }), [{ field: 'content', rule: 'empty' }]);
    });

    it('is fine with text alone or media alone', () => {
      assert.deepEqual(contentProblems(plain, { content: 'a', media: [] }), []);
      assert.deepEqual(contentProblems(plain, { content: '', media: [image] }), []);
    });
  });

  describe('media count', () => {
    it('allows exactly the most media and reports one more', () => {
      assert.deepEqual(contentProblems(plain, { content: 'a', media: [image, image] }), []);
      assert.deepEqual(contentProblems(plain, { content: 'a', media: [image, image, image] }), [{ field: 'image', rule: 'max_media', limit: 2, actual: 3 }]);
    });

    it('reports media on a network that takes none', () => {
      assert.deepEqual(contentProblems({ ...plain, maxMedia: 0 }, { content: 'a', media: [image] }), [
        { field: 'image', rule: 'max_media', limit: 0, actual: 1 },
      ]);
    });

    it('asks for the fewest media a network needs, and none when it names no minimum', () => {
      const needsTwo = { ...plain, minMedia: 2 };
      assert.deepEqual(contentProblems(needsTwo, { content: 'a', media: [image, image] }), []);
      assert.deepEqual(contentProblems(needsTwo, { content: 'a', media: [image] }), [{ field: 'image', rule: 'min_media', limit: 2, actual: 1 }]);
      assert.deepEqual(contentProblems(plain, { content: 'a', media: [] }), []);
    });
  });

  describe('media kind', () => {
    it('reports each file of a kind the network does not take, by its place', () => {
      const imagesOnly = { ...plain, maxMedia: 4, mediaKinds: ['image'] };
      assert.deepEqual(contentProblems(imagesOnly, { content: 'a', media: [image, video, { mimeType: 'video/webm' }] }), [
        { field: 'image', rule: 'media_kind', index: 1, mimeType: 'video/mp4', kind: 'video' },
        { field: 'image', rule: 'media_kind', index: 2, mimeType: 'video/webm', kind: 'video' },
      ]);
      assert.deepEqual(contentProblems({ ...plain, mediaKinds: ['video'] }, { content: 'a', media: [image] }), [
        { field: 'image', rule: 'media_kind', index: 0, mimeType: 'image/png', kind: 'image' },
      ]);
    });

    it('leaves a file whose type is not known yet to be checked once it is', () => {
      assert.deepEqual(contentProblems({ ...plain, mediaKinds: ['video'] }, { content: 'a', media: [{ mimeType: '' }] }), []);
    });
  });

  it('reports every broken rule at once, in a fixed order', () => {
    const strict: ItemLimits = { maxLength: 3, maxMedia: 1, minMedia: 1, mediaKinds: ['video'] };
    assert.deepEqual(
      contentProblems(strict, { content: 'four', media: [image, image] }).map((p) => p.rule),
      ['max_length', 'max_media', 'media_kind', 'media_kind'],
    );
    assert.deepEqual(
      contentProblems(strict, { content: '    ', media: [] }).map((p) => p.rule),
      ['max_length', 'empty', 'min_media'],
    );
  });
});
