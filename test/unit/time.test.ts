import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseInstant, zonedInstant } from '../../src/lib/time.ts';

describe('parseInstant', () => {
  const cases: [string, string | undefined][] = [
    ['2026-12-01T09:00:00.000Z', '2026-12-01T09:00:00.000Z'],
    ['2026-12-01T09:00:00', '2026-12-01T09:00:00.000Z'], // no offset means UTC, never the server's zone
    ['2026-12-01T10:30:00+01:30', '2026-12-01T09:00:00.000Z'],
    ['2026-12-01T04:00:00-0500', '2026-12-01T09:00:00.000Z'],
    ['2026-12-01', '2026-12-01T00:00:00.000Z'],
    ['2026-12-01T09:00:00.123456Z', '2026-12-01T09:00:00.123Z'],
    ['2026-02-30T00:00:00Z', undefined],
    ['2026-13-01T00:00:00Z', undefined],
    ['2026-12-01T24:00:00Z', undefined],
    ['tomorrow', undefined],
    ['', undefined],
    ['2026-12-01T09:00:00+19:00', undefined],
    // Every four-digit year is a year: 0001 to 0099 are not 1901 to 1999.
    ['0001-01-01T00:00:00Z', '0001-01-01T00:00:00.000Z'],
    ['0099-12-31T23:59:59Z', '0099-12-31T23:59:59.000Z'],
    ['0050-06-15', '0050-06-15T00:00:00.000Z'],
    ['0004-02-29T00:00:00Z', '0004-02-29T00:00:00.000Z'],
    ['0001-02-29T00:00:00Z', undefined],
    ['9999-12-31T23:59:59Z', '9999-12-31T23:59:59.000Z'],
  ];
  for (const [input, expected] of cases) {
    it(`${JSON.stringify(input)} -> ${expected ?? 'rejected'}`, () => {
      const parsed = parseInstant(input);
      assert.equal(parsed === undefined ? undefined : new Date(parsed).toISOString(), expected);
    });
  }
});

describe('zonedInstant', () => {
  it('keeps a wall-clock time across a daylight-saving change', () => {
    // 09:00 in Berlin is 08:00Z in winter and 07:00Z in summer (change on 2026-03-29).
    assert.equal(new Date(zonedInstant('Europe/Berlin', 2026, 3, 28, 9, 0)).toISOString(), '2026-03-28T08:00:00.000Z');
    assert.equal(new Date(zonedInstant('Europe/Berlin', 2026, 3, 29, 9, 0)).toISOString(), '2026-03-29T07:00:00.000Z');
  });

  it('moves a time skipped by the spring jump forward by the jump', () => {
    assert.equal(new Date(zonedInstant('Europe/Berlin', 2026, 3, 29, 2, 30)).toISOString(), '2026-03-29T01:30:00.000Z');
  });

  it('rolls day overflow into the next month', () => {
    assert.equal(new Date(zonedInstant('UTC', 2026, 1, 32, 12, 0)).toISOString(), '2026-02-01T12:00:00.000Z');
  });
});
