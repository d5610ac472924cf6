import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { wholeNumber } from '../../src/contract/index.ts';

describe('wholeNumber (delay, page, limit)', () => {
  const minutes = wholeNumber(0, 100);
  it('takes a number or decimal digits, as clients and query strings send them', () => {
    assert.equal(minutes.parse(5), 5);
    assert.equal(minutes.parse('5'), 5);
    assert.equal(minutes.parse('007'), 7);
  });
  it('refuses what Number() would also turn into a number', () => {
    for (const value of [true, [1], '0x10', '', ' 5', '1e2', '5.0', 1.5, -1, 101, null]) {
      assert.equal(minutes.safeParse(value).success, false, `refuses ${JSON.stringify(value)}`);
    }
  });
});
