/**
 * What each network's preview shows, folds, cuts and crops: the pure functions
 * of web/src/previews/, without a browser. The sizes are those the browser
 * would measure; the expectations are what the networks do today.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { allProviders } from '../../src/providers/index.ts';
import { FAMILY_OF, familyOf } from '../../web/src/previews/families.ts';
import type { PreviewInput, PreviewMedia, Size } from '../../web/src/previews/shape.ts';
import { xPost } from '../../web/src/previews/x.ts';
import { linkedinPost } from '../../web/src/previews/linkedin.ts';
import { facebookPost } from '../../web/src/previews/facebook.ts';
import { instagramPost, profileGrid } from '../../web/src/previews/instagram.ts';
import { blueskyPost } from '../../web/src/previews/bluesky.ts';
import { mastodonHandle, mastodonPost } from '../../web/src/previews/mastodon.ts';
import { threadsPost } from '../../web/src/previews/threads.ts';
import { tiktokVideo, youtubeVideo } from '../../web/src/previews/video.ts';
import { pin } from '../../web/src/previews/pinterest.ts';
import { forumPost } from '../../web/src/previews/reddit.ts';
import { chatMessages } from '../../web/src/previews/message.ts';
import { article, plainText } from '../../web/src/previews/blog.ts';
import { firstLink, textParts } from '../../web/src/previews/text.ts';

const picture = (name: string, mimeType = 'image/jpeg'): PreviewMedia => ({ id: name, path: `/uploads/${name}`, mimeType, thumbnail: null, name, alt: '' });

/** An input for `identifier` with the given items; sizes by file name. */
function input(
  identifier: string,
  items: { content: string; media?: PreviewMedia[] }[],
  options: { maxLength?: number; maxMedia?: number; threads?: boolean; settings?: Record<string, unknown>; sizes?: Record<string, Size> } = {},
): PreviewInput {
  return {
    network: {
      identifier,
      name: identifier,
      rules: { maxLength: options.maxLength ?? 3000, counting: 'codePoints', maxMedia: options.maxMedia ?? 10, threads: options.threads ?? false },
    },
    channel: { name: 'Harbour Café', profile: 'harbour' },
    items: items.map((i) => ({ content: i.content, media: i.media ?? [] })),
    settings: options.settings ?? {},
    sizes: Object.fromEntries(Object.entries(options.sizes ?? {}).map(([name, size]) => [`/uploads/${name}`, size])),
  };
}

const square = { width: 1000, height: 1000 };
const tall = { width: 1080, height: 1920 };
const wide = { width: 1920, height: 1080 };
const flagKeys = (flags: { key: string }[]) => flags.map((f) => f.key);

describe('the preview families', () => {
  it('gives every network Herald publishes to a family of its own choosing', () => {
    const missing = allProviders()
      .map((p) => p.identifier)
      .filter((id) => !(id in FAMILY_OF));
    assert.deepEqual(missing, []);
    assert.equal(familyOf('mastodon'), 'mastodon');
    assert.equal(familyOf('linkedin-page'), 'linkedin');
    assert.equal(familyOf('tiktok-business'), 'tiktok');
  });
});

describe('X', () => {
  const x = (media: PreviewMedia[], sizes: Record<string, Size>, text = 'Opening hours') =>
    xPost(input('x', [{ content: text, media }], { maxLength: 280, maxMedia: 4, threads: true, sizes }));

  it('lays out one to four pictures in its grids, cropping those whose shape differs from their cell', () => {
    const one = x([picture('a')], { a: wide });
    assert.equal(one.items[0]!.cells.length, 1);
    assert.equal(one.items[0]!.cells[0]!.cropped, false, 'a 16:9 picture is shown whole');
    const two = x([picture('a'), picture('b')], { a: { width: 700, height: 800 }, b: square });
    assert.deepEqual(
      two.items[0]!.cells.map((c) => [c.ratio, c.cropped]),
      [
        [7 / 8, false],
        [7 / 8, true],
      ],
    );
    assert.deepEqual(flagKeys(two.flags), ['previews.cropped']);
    assert.equal(two.flags[0]!.vars!.name, 'b');
    const three = x([picture('a'), picture('b'), picture('c')], {});
    assert.deepEqual(
      three.items[0]!.cells.map((c) => c.ratio),
      [7 / 8, 7 / 4, 7 / 4],
    );
    const five = x(
      ['a', 'b', 'c', 'd', 'e'].map((n) => picture(n)),
      {},
    );
    assert.equal(five.items[0]!.cells.length, 4);
    assert.ok(flagKeys(five.flags).includes('previews.dropped'));
  });

  it('cuts a tall single picture to 3:4', () => {
    const shown = x([picture('a')], { a: tall });
    assert.equal(shown.items[0]!.cells[0]!.ratio, 3 / 4);
    assert.equal(shown.items[0]!.cells[0]!.cropped, true);
  });

  it('marks the text past 280 and shows the link card only without pictures', () => {
    const long = `${'word '.repeat(70)}end`;
    const shown = x([], {}, long);
    assert.ok(shown.items[0]!.text.cut.length > 0);
    assert.ok(flagKeys(shown.flags).includes('previews.cut'));
    assert.equal(x([], {}, 'Read https://harbour.example/news.').items[0]!.link, 'https://harbour.example/news');
    assert.equal(x([picture('a')], {}, 'Read https://harbour.example/news').items[0]!.link, undefined);
  });

  it('shows each item of a thread', () => {
    const shown = xPost(input('x', [{ content: 'One' }, { content: 'Two' }], { maxLength: 280, threads: true }));
    assert.deepEqual(
      shown.items.map((i) => i.text.shown),
      ['One', 'Two'],
    );
  });
});

describe('LinkedIn and Facebook', () => {
  const long = `${'Our harbour café opens early on weekdays and late on Fridays. '.repeat(5)}`;

  it('folds LinkedIn text after about 210 characters, and shows a PDF as a document with its title', () => {
    const shown = linkedinPost(input('linkedin', [{ content: long }]));
    const text = shown.items[0]!.text;
    assert.ok(text.shown.length <= 210 && text.shown.length > 150, `${text.shown.length} characters before the fold`);
    assert.equal(text.shown + text.folded, long);
    assert.deepEqual(flagKeys(shown.flags), ['previews.folded']);
    assert.equal(linkedinPost(input('linkedin', [{ content: 'Short' }])).items[0]!.text.folded, '');
    const document = linkedinPost(
      input('linkedin', [{ content: 'Slides', media: [picture('deck.pdf', 'application/pdf')] }], { settings: { carousel_name: 'Menu 2026' } }),
    );
    assert.equal(document.document?.title, 'Menu 2026');
    assert.equal(document.items[0]!.cells.length, 0);
  });

  it('folds LinkedIn after three lines even when they are short', () => {
    const shown = linkedinPost(input('linkedin', [{ content: 'one\ntwo\nthree\nfour' }]));
    assert.equal(shown.items[0]!.text.shown, 'one\ntwo\nthree');
  });

  it('shows a Facebook story at 9:16 without its text', () => {
    const story = facebookPost(input('facebook', [{ content: 'Hello', media: [picture('a')] }], { settings: { post_type: 'story' }, sizes: { a: square } }));
    assert.equal(story.kind, 'story');
    assert.ok(story.kind === 'story' && story.frames[0]!.cropped);
    assert.deepEqual(flagKeys(story.flags), ['previews.cropped', 'previews.storyNoText']);
    const post = facebookPost(input('facebook', [{ content: 'Hello', media: [picture('a')] }], { sizes: { a: square } }));
    assert.equal(post.kind, 'post');
  });
});

describe('Instagram', () => {
  it('keeps feed pictures within 4:5 to 1.91:1, cropping what is outside', () => {
    const portrait = instagramPost(input('instagram', [{ content: 'Hi', media: [picture('a')] }], { sizes: { a: tall } }));
    assert.equal(portrait.kind, 'image');
    assert.equal(portrait.cells[0]!.ratio, 4 / 5);
    assert.equal(portrait.cells[0]!.cropped, true);
    const ok = instagramPost(input('instagram', [{ content: 'Hi', media: [picture('a')] }], { sizes: { a: square } }));
    assert.equal(ok.cells[0]!.cropped, false);
    const panorama = instagramPost(input('instagram', [{ content: 'Hi', media: [picture('a')] }], { sizes: { a: { width: 3000, height: 1000 } } }));
    assert.equal(panorama.cells[0]!.ratio, 1.91);
  });

  it('cuts a carousel to its first picture’s shape, makes a single video a reel, and a story drops the caption', () => {
    const carousel = instagramPost(input('instagram', [{ content: 'Hi', media: [picture('a'), picture('b')] }], { sizes: { a: square, b: wide } }));
    assert.equal(carousel.kind, 'carousel');
    assert.deepEqual(
      carousel.cells.map((c) => [c.ratio, c.cropped]),
      [
        [1, false],
        [1, true],
      ],
    );
    const reel = instagramPost(input('instagram', [{ content: 'Hi', media: [picture('v.mp4', 'video/mp4')] }], { sizes: { 'v.mp4': tall } }));
    assert.equal(reel.kind, 'reel');
    assert.equal(reel.cells[0]!.cropped, false);
    const story = instagramPost(input('instagram', [{ content: 'Hi', media: [picture('a')] }], { settings: { post_type: 'story' }, sizes: { a: tall } }));
    assert.equal(story.kind, 'story');
    assert.ok(flagKeys(story.flags).includes('previews.storyNoText'));
  });

  it('folds the caption after about 125 characters and asks for media', () => {
    const shown = instagramPost(input('instagram', [{ content: 'A'.repeat(20) + ' word'.repeat(40) }]));
    assert.ok(shown.caption.shown.length <= 125);
    assert.deepEqual(flagKeys(shown.flags), ['previews.folded', 'previews.needsMedia']);
  });

  it('places the post among the next nine of the profile, newest first', () => {
    const others = Array.from({ length: 12 }, (_, i) => ({ id: `p${i}`, at: i * 1000 }));
    const grid = profileGrid({ id: 'this', at: 8500 }, others);
    assert.equal(grid.length, 9);
    assert.deepEqual(
      grid.slice(0, 5).map((p) => p.id),
      ['p11', 'p10', 'p9', 'this', 'p8'],
    );
    assert.equal(grid[3]!.current, true);
    assert.equal(profileGrid({ id: 'p5', at: 20_000 }, others)[0]!.id, 'p5', 'a post being edited is shown once');
    assert.equal(profileGrid({ id: 'p5', at: 20_000 }, others).filter((p) => p.id === 'p5').length, 1);
  });
});

describe('Bluesky, Mastodon and Threads', () => {
  it('Bluesky: squares for two pictures, a link card only without pictures', () => {
    const two = blueskyPost(input('bluesky', [{ content: 'Hi', media: [picture('a'), picture('b')] }], { maxMedia: 4, sizes: { a: square, b: wide } }));
    assert.deepEqual(
      two.items[0]!.cells.map((c) => c.cropped),
      [false, true],
    );
    assert.equal(blueskyPost(input('bluesky', [{ content: 'See https://harbour.example' }])).items[0]!.link, 'https://harbour.example');
  });

  it('Mastodon: one "@" before the user whether the profile has one or not', () => {
    assert.equal(mastodonHandle('@anna@social.example', 'Anna'), '@anna@social.example');
    assert.equal(mastodonHandle('anna@social.example', 'Anna'), '@anna@social.example');
    assert.equal(mastodonHandle(null, 'Anna'), 'Anna');
    const four = mastodonPost(input('mastodon', [{ content: 'Hi', media: ['a', 'b', 'c', 'd'].map((n) => picture(n)) }], { maxMedia: 4 }));
    assert.deepEqual(
      four.items[0]!.cells.map((c) => c.ratio),
      [16 / 9, 16 / 9, 16 / 9, 16 / 9],
    );
  });

  it("Mastodon: a post's content warning (spoiler_text) is shown in place of its text; a blank one is none", () => {
    const warned = mastodonPost(input('mastodon', [{ content: 'The ending, in full' }], { settings: { spoiler_text: ' Film spoilers ' } }));
    assert.equal(warned.warning, 'Film spoilers');
    assert.equal(warned.items[0]!.text.shown, 'The ending, in full', 'the text is still there, behind "Show more"');
    assert.equal(mastodonPost(input('mastodon', [{ content: 'Hi' }], { settings: { spoiler_text: '  ' } })).warning, undefined);
    assert.equal(mastodonPost(input('mastodon', [{ content: 'Hi' }])).warning, undefined);
  });

  it('Threads: pictures in a row keep their shape within 4:5 to 1.91:1', () => {
    const row = threadsPost(input('threads', [{ content: 'Hi', media: [picture('a'), picture('b')] }], { sizes: { a: square, b: tall } }));
    assert.deepEqual(
      row.items[0]!.cells.map((c) => [c.ratio, c.cropped]),
      [
        [1, false],
        [4 / 5, true],
      ],
    );
  });
});

describe('video, pins, forums, chats and blogs', () => {
  it('YouTube: a 16:9 player under the title, a vertical video a Short, a missing title flagged', () => {
    const video = picture('v.mp4', 'video/mp4');
    const landscape = youtubeVideo(input('youtube', [{ content: 'About', media: [video] }], { settings: { title: 'Harbour tour' }, sizes: { 'v.mp4': wide } }));
    assert.deepEqual([landscape.ratio, landscape.short, landscape.title, landscape.flags], [16 / 9, false, 'Harbour tour', []]);
    const short = youtubeVideo(input('youtube', [{ content: '', media: [video] }], { sizes: { 'v.mp4': tall } }));
    assert.deepEqual([short.ratio, short.short], [9 / 16, true]);
    assert.deepEqual(flagKeys(short.flags), ['previews.noTitle']);
    assert.deepEqual(flagKeys(youtubeVideo(input('youtube', [{ content: 'x' }], { settings: { title: 'T' } })).flags), ['previews.needsVideo']);
    const cover = youtubeVideo(input('youtube', [{ content: '', media: [video] }], { settings: { title: 'T', thumbnail: { path: '/uploads/cover.jpg' } } }));
    assert.equal(cover.cover, '/uploads/cover.jpg');
  });

  it('TikTok: 9:16, a landscape video shown with bars', () => {
    const shown = tiktokVideo(input('tiktok', [{ content: 'Dance', media: [picture('v.mp4', 'video/mp4')] }], { sizes: { 'v.mp4': wide } }));
    assert.equal(shown.ratio, 9 / 16);
    assert.deepEqual(flagKeys(shown.flags), ['previews.letterboxed']);
  });

  it('Pinterest: the pin with its board and title; very tall pictures cut', () => {
    const shown = pin(
      input('pinterest', [{ content: 'Recipe', media: [picture('a')] }], {
        settings: { board: '123', title: 'Scones' },
        sizes: { a: { width: 500, height: 2000 } },
      }),
    );
    assert.deepEqual([shown.board, shown.title, shown.cell?.cropped], ['123', 'Scones', true]);
  });

  it('Reddit: community, title and flair from the first target', () => {
    const shown = forumPost(
      input('reddit', [{ content: 'Body' }], {
        settings: {
          subreddit: [{ value: { subreddit: 'r/coffee', title: 'New roast', flair: { id: 'f1', name: 'News' } } }, { value: { subreddit: 'tea', title: 'x' } }],
        },
      }),
    );
    assert.deepEqual([shown.community, shown.title, shown.flair, shown.others], ['r/coffee', 'New roast', 'News', 1]);
    assert.deepEqual(flagKeys(forumPost(input('reddit', [{ content: 'Body' }])).flags), ['previews.noTitle']);
  });

  it('chats show files whole and the text within the limit', () => {
    const shown = chatMessages(input('discord', [{ content: 'x'.repeat(2100), media: [picture('a')] }], { maxLength: 2000, sizes: { a: tall } }));
    assert.equal(shown.messages[0]!.cells[0]!.cropped, false);
    assert.equal(shown.messages[0]!.text.cut.length, 100);
  });

  it('blogs: title, cover and an excerpt without markup', () => {
    assert.equal(plainText('# Title\n\nSome **bold** [link](https://a.example) ![img](x.png) <b>html</b>'), 'Title Some bold link html');
    const shown = article(input('devto', [{ content: '## Hello\nWorld' }], { settings: { title: 'Post', main_image: { path: '/uploads/c.jpg' } } }));
    assert.deepEqual([shown.title, shown.cover, shown.excerpt], ['Post', '/uploads/c.jpg', 'Hello World']);
  });
});

describe('text', () => {
  it('keeps the whole text as shown, folded and cut, in order', () => {
    const text = 'one two three four five six seven eight nine ten';
    const parts = textParts({ counting: 'codePoints', maxLength: 30 }, text, { chars: 10, lines: 3 });
    assert.equal(parts.shown + parts.folded + parts.cut, text);
    assert.equal(parts.shown, 'one two');
    assert.ok(parts.cut.length > 0);
  });

  it('finds the first link without its closing punctuation', () => {
    assert.equal(firstLink('See (https://a.example/x?y=1).'), 'https://a.example/x?y=1');
    assert.equal(firstLink('no link here'), undefined);
  });
});
