/**
 * The calendar's posts as its tiles show them, and the figures drawn from them:
 * posts per day, those a month view draws, a channel's initials and colour. Pure (no React, no DOM).
 */
import type { z } from 'zod';
import type { calendarTile } from '../../../../src/contract/routes/app.ts';

type Tile = z.output<typeof calendarTile>;

/** What a tile knows of its channel (from the channel list the page holds). */
export interface TileChannel {
  id: string;
  name: string;
  picture: string | null;
  network: string;
  customer: string;
}

/** A post as the calendar shows it: "publishing" while a worker sends it, with its channel looked up. */
export type CalendarPost = Omit<Tile, 'state' | 'channel'> & { state: Tile['state'] | 'PUBLISHING'; channel: TileChannel };

/** The answer of GET /api/app/calendar, joined with the channels: a channel the list lacks keeps its id as its name. */
export function calendarPosts(tiles: Tile[], publishing: string[], channels: Map<string, TileChannel>): CalendarPost[] {
  const sending = new Set(publishing);
  return tiles.map((tile) => ({
    ...tile,
    state: sending.has(tile.id) ? 'PUBLISHING' : tile.state,
    channel: channels.get(tile.channel) ?? { id: tile.channel, name: tile.channel, picture: null, network: '', customer: '' },
  }));
}

/**
 * The posts of each day, by YYYY-MM-DD in `zone` (the calendar's cells are the
 * zone's days). One formatter for all: making one per post cost more than
 * drawing the month.
 */
export function postsByDay<P extends { publishDate: string }>(posts: readonly P[], zone: string): Map<string, P[]> {
  // en-CA writes dates as YYYY-MM-DD.
  const format = new Intl.DateTimeFormat('en-CA', { timeZone: zone, year: 'numeric', month: '2-digit', day: '2-digit' });
  const days = new Map<string, P[]>();
  // Posts share minutes (a batch, a slot): each minute is formatted once. Zones shift by whole minutes.
  const dayOfMinute = new Map<number, string>();
  for (const post of posts) {
    const minute = Math.floor(Date.parse(post.publishDate) / 60_000);
    let day = dayOfMinute.get(minute);
    if (day === undefined) {
      day = format.format(minute * 60_000);
      dayOfMinute.set(minute, day);
    }
    const list = days.get(day);
    if (list) list.push(post);
    else days.set(day, [post]);
  }
  return days;
}

/** What FullCalendar orders posts at one time by (never shown: PostTile is): channel, then text. */
export const eventTitle = (post: CalendarPost) => `${post.channel.name} ${post.text}`;

/**
 * The posts a month view hands FullCalendar: each day's first `shown` in
 * FullCalendar's own order (time, then title, then as given), plus one more on a
 * day that holds more, so that FullCalendar draws the day's "+N more" (the page
 * writes N from its own count); every post of `openDay`, whose "+N more" list
 * is open and lists them all. FullCalendar sorts and places every post it is
 * given, even those it does not draw: most of the 1.2 s a month of 5,000 took.
 */
export function monthPosts(days: ReadonlyMap<string, readonly CalendarPost[]>, shown: number, openDay?: string): CalendarPost[] {
  // localeCompare without arguments: FullCalendar compares titles with it.
  const collator = new Intl.Collator();
  const order = (a: Ordered, b: Ordered) => a.at - b.at || collator.compare(a.title, b.title);
  const drawn: CalendarPost[] = [];
  for (const [day, posts] of days) {
    if (day === openDay || posts.length <= shown + 1) {
      drawn.push(...posts);
      continue;
    }
    // The first shown + 1, kept in order as the day's posts go by: far fewer comparisons than sorting the whole day.
    const first: Ordered[] = [];
    for (const post of posts) {
      const candidate = { post, at: Date.parse(post.publishDate), title: eventTitle(post) };
      if (first.length > shown && order(candidate, first[shown]!) >= 0) continue;
      // After any equal one: among equals FullCalendar keeps the order it was given.
      let at = first.length;
      while (at > 0 && order(candidate, first[at - 1]!) < 0) at--;
      first.splice(at, 0, candidate);
      if (first.length > shown + 1) first.pop();
    }
    for (const { post } of first) drawn.push(post);
  }
  return drawn;
}

interface Ordered {
  post: CalendarPost;
  at: number;
  title: string;
}

/** Two letters that tell channels apart: the first of the first and of the last word ("Shop news 2": S2), or the first two of one word. */
export function initials(name: string): string {
  const words = name
    .trim()
    .split(/[\s._@-]+/)
    .filter(Boolean);
  const letters = words.length >= 2 ? [Array.from(words[0]!)[0], Array.from(words.at(-1)!)[0]] : Array.from(words[0] ?? '?').slice(0, 2);
  return letters.join('').toUpperCase();
}

/**
 * A hue (0 to 359) from a channel's id, the same on every page and visit. The
 * background is dark enough at any hue (lightness 30 %) for white initials to
 * keep a 4.5:1 contrast.
 */
export function channelHue(id: string): number {
  let hash = 0;
  for (const char of id) hash = (hash * 31 + char.codePointAt(0)!) >>> 0;
  return hash % 360;
}
