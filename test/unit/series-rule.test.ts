/**
 * The rule math of repeating posts: which instants a rule gives, in its time
 * zone across daylight-saving changes, where it ends, and which rules it refuses.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { RepeatInput } from '../../src/contract/series.ts';
import { nextOccurrences, normaliseRule, occurrencesAfter, occurrencesBetween, type RepeatRule } from '../../src/domain/series/series-rule.ts';

const at = (text: string) => Date.parse(text);
const iso = (ms: number) => new Date(ms).toISOString();

function rule(r: Partial<RepeatRule> & Pick<RepeatRule, 'start' | 'unit'>): RepeatRule {
  return { every: 1, weekdays: null, timezone: 'UTC', until: null, count: null, ...r };
}

/** Every occurrence of a rule that ends. */
function all(r: RepeatRule): { index: number; at: string }[] {
  return [...occurrencesAfter(r)].map((o) => ({ index: o.index, at: iso(o.at) }));
}

describe('series rule: the instants a rule gives', () => {
  it('every 2 days, for 4 times, at the start time', () => {
    assert.deepEqual(all(rule({ start: at('2026-03-01T10:00:00Z'), unit: 'day', every: 2, count: 4 })), [
      { index: 0, at: '2026-03-01T10:00:00.000Z' },
      { index: 1, at: '2026-03-03T10:00:00.000Z' },
      { index: 2, at: '2026-03-05T10:00:00.000Z' },
      { index: 3, at: '2026-03-07T10:00:00.000Z' },
    ]);
  });

  it('weekly on Monday and Thursday at 09:00 in Europe/Berlin keeps 09:00 across the change to summer time', () => {
    // Clocks go forward on Sunday 2026-03-29: 09:00 is 08:00Z before, 07:00Z after.
    const monThu = rule({ start: at('2026-03-23T09:00:00+01:00'), unit: 'week', weekdays: ['mon', 'thu'], timezone: 'Europe/Berlin' });
    assert.deepEqual(
      nextOccurrences(monThu, -Infinity, 5).map((o) => iso(o.at)),
      ['2026-03-23T08:00:00.000Z', '2026-03-26T08:00:00.000Z', '2026-03-30T07:00:00.000Z', '2026-04-02T07:00:00.000Z', '2026-04-06T07:00:00.000Z'],
    );
  });

  it('daily at 09:00 in Europe/Berlin across the change back to winter time', () => {
    const daily = rule({ start: at('2026-10-24T09:00:00+02:00'), unit: 'day', timezone: 'Europe/Berlin', count: 3 });
    assert.deepEqual(
      all(daily).map((o) => o.at),
      ['2026-10-24T07:00:00.000Z', '2026-10-25T08:00:00.000Z', '2026-10-26T08:00:00.000Z'],
    );
  });

  it('a time the clocks skip moves forward by the jump on that day only', () => {
    // 02:30 does not exist in Berlin on 2026-03-29: that occurrence is at 03:30 local (01:30Z).
    const early = rule({ start: at('2026-03-28T02:30:00+01:00'), unit: 'day', timezone: 'Europe/Berlin', count: 3 });
    assert.deepEqual(
      all(early).map((o) => o.at),
      ['2026-03-28T01:30:00.000Z', '2026-03-29T01:30:00.000Z', '2026-03-30T00:30:00.000Z'],
    );
  });

  it('every 2 weeks on Monday and Friday, starting on a Wednesday: that week only from the start on', () => {
    const r = rule({ start: at('2026-03-04T12:00:00Z'), unit: 'week', every: 2, weekdays: ['mon', 'fri'], count: 5 });
    assert.deepEqual(all(r), [
      { index: 0, at: '2026-03-06T12:00:00.000Z' },
      { index: 1, at: '2026-03-16T12:00:00.000Z' },
      { index: 2, at: '2026-03-20T12:00:00.000Z' },
      { index: 3, at: '2026-03-30T12:00:00.000Z' },
      { index: 4, at: '2026-04-03T12:00:00.000Z' },
    ]);
  });

  it("weekly without weekdays repeats on the start's weekday", () => {
    const r = rule({ start: at('2026-01-01T18:15:00Z'), unit: 'week', count: 3 });
    assert.deepEqual(
      all(r).map((o) => o.at),
      ['2026-01-01T18:15:00.000Z', '2026-01-08T18:15:00.000Z', '2026-01-15T18:15:00.000Z'],
    );
  });

  it('until is inclusive, and an until date alone counts its whole day in the time zone', () => {
    const instant = rule({ start: at('2026-05-01T08:00:00Z'), unit: 'day', until: at('2026-05-03T08:00:00Z') });
    assert.deepEqual(
      all(instant).map((o) => o.at),
      ['2026-05-01T08:00:00.000Z', '2026-05-02T08:00:00.000Z', '2026-05-03T08:00:00.000Z'],
    );
    // 23:30 in New York is 03:30Z the next day; "until 2026-05-02" still includes the 2nd's evening there.
    const input: RepeatInput = {
      start: at('2026-05-01T23:30:00-04:00'),
      unit: 'day',
      every: 1,
      weekdays: undefined,
      timezone: 'America/New_York',
      until: '2026-05-02',
      count: undefined,
    };
    const { rule: dated, problems } = normaliseRule(input, at('2026-04-01T00:00:00Z'));
    assert.deepEqual(problems, []);
    assert.deepEqual(
      all(dated!).map((o) => o.at),
      ['2026-05-02T03:30:00.000Z', '2026-05-03T03:30:00.000Z'],
    );
  });

  it('occurrences after a moment and in a range keep their place in the rule', () => {
    const r = rule({ start: at('2025-01-01T09:00:00Z'), unit: 'day' });
    const next = nextOccurrences(r, at('2026-01-01T10:00:00Z'), 2);
    assert.deepEqual(
      next.map((o) => [o.index, iso(o.at)]),
      [
        [366, '2026-01-02T09:00:00.000Z'],
        [367, '2026-01-03T09:00:00.000Z'],
      ],
    );
    assert.deepEqual(
      occurrencesBetween(r, at('2026-01-02T09:00:00Z'), at('2026-01-04T09:00:00Z')).map((o) => iso(o.at)),
      ['2026-01-03T09:00:00.000Z', '2026-01-04T09:00:00.000Z'],
      'the range excludes its start and includes its end',
    );
  });

  it('starting near a moment gives what reading the rule from its start gives', () => {
    // A small seeded generator: the same rules on every run.
    let seed = 7;
    const random = () => {
      seed = (seed * 48271) % 2147483647;
      return seed / 2147483647;
    };
    const zones = ['UTC', 'Europe/Berlin', 'America/New_York', 'Australia/Sydney'];
    const days = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] as const;
    for (let i = 0; i < 60; i++) {
      const weekly = random() < 0.5;
      const r = rule({
        start: at('2025-01-01T00:00:00Z') + Math.floor(random() * 400) * 86_400_000 + Math.floor(random() * 1440) * 60_000,
        unit: weekly ? 'week' : 'day',
        every: 1 + Math.floor(random() * 4),
        weekdays: weekly && random() < 0.7 ? days.filter(() => random() < 0.4) : null,
        timezone: zones[Math.floor(random() * zones.length)],
        count: 40,
      });
      if (r.weekdays?.length === 0) r.weekdays = null;
      const whole = [...occurrencesAfter(r)];
      const after = whole[Math.floor(random() * whole.length)].at - 1 - Math.floor(random() * 3 * 86_400_000);
      assert.deepEqual(
        [...occurrencesAfter(r, after)],
        whole.filter((o) => o.at > after),
        `rule ${JSON.stringify(r)} after ${iso(after)}`,
      );
    }
  });
});

describe('series rule: rules refused, each naming its field', () => {
  const now = at('2026-06-01T00:00:00Z');
  const base: RepeatInput = {
    start: at('2026-06-02T09:00:00Z'),
    unit: 'day',
    every: 1,
    weekdays: undefined,
    timezone: 'UTC',
    until: undefined,
    count: undefined,
  };
  const problem = (input: Partial<RepeatInput>) => normaliseRule({ ...base, ...input }, now).problems;

  it('accepts a good rule and sorts its weekdays', () => {
    const { rule: r, problems } = normaliseRule({ ...base, unit: 'week', weekdays: ['thu', 'mon', 'thu'] }, now);
    assert.deepEqual(problems, []);
    assert.deepEqual(r!.weekdays, ['mon', 'thu']);
  });

  it('an unknown time zone', () => {
    assert.deepEqual(problem({ timezone: 'Mars/Olympus' }), [{ path: 'repeat.timezone', message: 'must be an IANA time zone such as Europe/Berlin or UTC' }]);
  });

  it('weekdays on a daily rule', () => {
    assert.equal(problem({ weekdays: ['mon'] })[0].path, 'repeat.weekdays');
  });

  it('both until and count', () => {
    assert.equal(problem({ until: '2026-07-01', count: 3 })[0].path, 'repeat.count');
  });

  it('until before the start', () => {
    assert.equal(problem({ until: '2026-06-01T00:00:00Z' })[0].path, 'repeat.until');
  });

  it('a rule whose every occurrence is past', () => {
    const [p] = problem({ start: at('2026-05-01T09:00:00Z'), count: 3 });
    assert.equal(p.path, 'repeat');
    assert.match(p.message, /no occurrence after now/);
  });
});
