import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fitTemplate, plainText, renderTemplate } from '../../src/domain/feeds/feed-template.ts';
import { countText } from '../../src/providers/text-counting.ts';

const item = {
  title: 'The harbour reopens after a long winter of repairs',
  link: 'https://blog.example/2026/harbour-reopens-after-repairs',
  summary: [
    'After five months of work on the quay walls, the harbour takes boats again from Monday.',
    'The ferry keeps its winter timetable until the end of the month, and the fish market moves back to the old hall.',
  ].join(' '),
};

describe('the text of a post made from a feed item', () => {
  it('fills in {title}, {link} and {summary}, and leaves no blank lines where one is empty', () => {
    assert.equal(renderTemplate('{title}\n\n{summary}\n\n{link}', { ...item, summary: '' }), `${item.title}\n\n${item.link}`);
    assert.equal(renderTemplate('New: {title} {link}', item), `New: ${item.title} ${item.link}`);
  });

  it('reads an HTML summary as plain words: no tags, no scripts, entities decoded', () => {
    assert.equal(plainText('<p>Fish &amp; chips <b>at</b>&nbsp;noon</p><script>alert("x")</script><style>p{}</style>'), 'Fish & chips at noon');
    assert.equal(plainText('Caf&#233; &#x2014; open'), 'Café — open');
  });

  it("shortens the summary, then the title, to fit a network's count; the link stays whole", () => {
    const fits = (max: number) => (text: string) => countText('x', text) <= max;
    const full = renderTemplate('{title}\n\n{summary}\n\n{link}', item);
    assert.equal(fitTemplate('{title}\n\n{summary}\n\n{link}', item, fits(1000)), full, 'what fits is left as it is');

    const tweet = fitTemplate('{title}\n\n{summary}\n\n{link}', item, fits(140));
    assert.ok(countText('x', tweet) <= 140, tweet);
    assert.ok(tweet.startsWith(`${item.title}\n\n`), 'the title is kept while the summary can give way');
    assert.ok(tweet.endsWith(`…\n\n${item.link}`), 'the summary is cut with an ellipsis; the link is whole');
    assert.ok(countText('x', tweet) > 120, `as much of the summary as fits is kept: ${tweet}`);

    const tiny = fitTemplate('{title}\n\n{summary}\n\n{link}', item, fits(40));
    assert.ok(countText('x', tiny) <= 40, tiny);
    assert.ok(tiny.endsWith(item.link) && !tiny.includes('After five'), `the summary is gone, the title cut: ${tiny}`);
  });

  it('gives back its shortest attempt when nothing fits, for the post checks to refuse', () => {
    const text = fitTemplate('{link}', item, () => false);
    assert.equal(text, item.link);
  });
});
