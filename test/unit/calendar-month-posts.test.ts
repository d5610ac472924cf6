/**
 * The posts a month view hands FullCalendar (web/src/pages/calendar/tiles.ts):
 * each day's first three in the calendar's order and one more for its
 * "+N more", all of a day whose list is open, and days cut in the person's
 * time zone. What FullCalendar draws must not change: the same three tiles.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { monthPosts, postsByDay, type CalendarPost } from '../../web/src/pages/calendar/tiles.ts';

let next = 0;
function post(publishDate: string, channel: string, text = 'A line'): CalendarPost {
  next += 1;
  return {
    id: `p${next}`,
    text,
    publishDate,
    state: 'DRAFT',
    error: null,
    approval: null,
    seriesId: null,
    channel: { id: channel, name: channel, picture: null, network: 'webhook', customer: '' },
  } as CalendarPost;
}
const ids = (posts: CalendarPost[]) => posts.map((p) => p.id);

describe("a month view's posts", () => {
  it("gives each full day's first three by time, then channel and text, and one more for its link", () => {
    const late = post('2030-01-05T18:00:00.000Z', 'Alpha');
    const byName = ['Zeta', 'box office', 'Harbour', 'Élan', 'Book fair'].map((name) => post('2030-01-05T09:00:00.000Z', name));
    const early = post('2030-01-05T07:30:00.000Z', 'Zeta');
    const days = postsByDay([late, ...byName, early], 'UTC');
    const drawn = monthPosts(days, 3);
    // localeCompare, as FullCalendar compares titles: case and accents do not come first.
    assert.deepEqual(ids(drawn), ids([early, byName[4]!, byName[1]!, byName[3]!]));
  });

  it('picks the same four as sorting the whole day would, ties kept in the order given', () => {
    const names = ['Jazz Nights', 'jazz nights', 'Book Fair', 'Éclat', 'Film Club', 'Box office'];
    const hours = ['08', '09', '09', '10'];
    // A fixed shuffle (no randomness): 200 posts on one day.
    const busy = Array.from({ length: 200 }, (_, i) => post(`2030-01-09T${hours[(i * 7) % 4]}:00:00.000Z`, names[(i * 5) % 6]!, `Post ${(i * 13) % 3}`));
    const sorted = [...busy].sort(
      (a, b) => Date.parse(a.publishDate) - Date.parse(b.publishDate) || `${a.channel.name} ${a.text}`.localeCompare(`${b.channel.name} ${b.text}`),
    );
    assert.deepEqual(ids(monthPosts(postsByDay(busy, 'UTC'), 3)), ids(sorted.slice(0, 4)));
  });

  it('gives a day with room for its posts all of them, and an open day all of its posts', () => {
    const quiet = [post('2030-01-06T10:00:00.000Z', 'A'), post('2030-01-06T11:00:00.000Z', 'B')];
    const busy = Array.from({ length: 50 }, (_, i) => post('2030-01-07T09:00:00.000Z', `Channel ${i}`));
    const days = postsByDay([...quiet, ...busy], 'UTC');
    assert.equal(monthPosts(days, 3).length, 2 + 4);
    const open = monthPosts(days, 3, '2030-01-07');
    assert.equal(open.length, 2 + 50);
    assert.deepEqual(new Set(ids(open)), new Set(ids([...quiet, ...busy])));
  });

  it("cuts days in the person's time zone", () => {
    const evening = post('2030-01-08T03:00:00.000Z', 'A');
    assert.deepEqual([...postsByDay([evening], 'America/New_York').keys()], ['2030-01-07']);
    assert.deepEqual([...postsByDay([evening], 'Europe/Paris').keys()], ['2030-01-08']);
  });
});
