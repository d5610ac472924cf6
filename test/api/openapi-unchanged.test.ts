/**
 * The OpenAPI document, byte for byte, against the one served before the routes
 * were declared through the contract's route table (fixtures/openapi.json):
 * moving where a route is declared must not move a comma of what clients read.
 * A deliberate change to the public API updates the fixture in the same commit.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { startHerald, type TestHerald } from '../helpers/herald.ts';

/** The fixture names this address where the test server's own (its port changes each run) appears. */
const FIXTURE_URL = 'http://herald.test';
const FIXTURE = new URL('./fixtures/openapi.json', import.meta.url);

describe('OpenAPI document, unchanged', () => {
  let herald: TestHerald;
  before(async () => {
    herald = await startHerald('sqlite');
  });
  after(() => herald.close());

  it('is served exactly as recorded', async () => {
    const response = await fetch(`${herald.url}/api/docs/json`);
    assert.equal(response.status, 200);
    const served = (await response.text()).replaceAll(herald.url, FIXTURE_URL);
    const recorded = fs.readFileSync(FIXTURE, 'utf8');
    if (served !== recorded) {
      // deepEqual names the first path that differs; the byte check below still catches key order and spacing.
      assert.deepEqual(JSON.parse(served), JSON.parse(recorded));
    }
    assert.equal(served, recorded, 'same content, different bytes (key order or spacing)');
  });
});
