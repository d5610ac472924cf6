/**
 * A person's preferences (language, zone, week start, clock) live on the
 * server: they follow the person to a new session, stay theirs alone, change
 * field by field, and a bad value is refused naming the field.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { WebClient } from '../accounts/web-client.ts';
import { appRoutes } from '../../src/contract/routes/app.ts';
import { personPreferences } from '../../src/contract/preferences.ts';
import { assertError } from '../helpers/api-fixtures.ts';
import { startHerald, type TestHerald } from '../helpers/herald.ts';
import { testStores, storeSuite } from '../helpers/stores.ts';
import { teardown } from '../helpers/teardown.ts';

const { routes } = appRoutes;

for (const store of await testStores()) {
  describe(`person preferences (${store})`, storeSuite(store), () => {
    let herald: TestHerald;
    let owner: WebClient;
    let member: WebClient;

    before(async () => {
      herald = await startHerald(store);
      owner = new WebClient(herald.url);
      await owner.signUp('owner@example.com');
      const invited = await owner.app('POST', '/invitations', { email: 'member@example.com', role: 'member' });
      assert.equal(invited.status, 201, JSON.stringify(invited.body));
      member = new WebClient(herald.url);
      await member.signUp('member@example.com', undefined, { invitation: invited.body.token });
    });
    after(() => teardown(() => herald?.close()));

    it('starts with nothing chosen, so the browser supplies the defaults', async () => {
      const answer = await owner.route(routes.preferences, {});
      assert.equal(answer.status, 200);
      assert.deepEqual(answer.body, { language: null, zone: null, weekStart: null, clock: null });
    });

    it('keeps what the person chose and gives it to their next session, not to anyone else', async () => {
      const saved = await owner.route(routes.setPreferences, { body: { language: 'fr', zone: 'Europe/Paris', weekStart: 1, clock: '24h' } });
      assert.equal(saved.status, 200, JSON.stringify(saved.body));
      personPreferences.parse(saved.body);

      const elsewhere = new WebClient(herald.url);
      assert.equal((await elsewhere.logIn('owner@example.com')).status, 200);
      const read = await elsewhere.route(routes.preferences, {});
      assert.deepEqual(read.body, { language: 'fr', zone: 'Europe/Paris', weekStart: 1, clock: '24h' });

      const theirs = await member.route(routes.preferences, {});
      assert.deepEqual(theirs.body, { language: null, zone: null, weekStart: null, clock: null });
    });

    it('changes only the fields sent, and null gives a field back to the browser', async () => {
      const changed = await owner.route(routes.setPreferences, { body: { clock: '12h', zone: null } });
      assert.equal(changed.status, 200, JSON.stringify(changed.body));
      assert.deepEqual(changed.body, { language: 'fr', zone: null, weekStart: 1, clock: '12h' });
      assert.deepEqual((await owner.route(routes.preferences, {})).body, changed.body);
    });

    it('refuses a bad value with a 400 naming the field and its rule, and keeps what was there', async () => {
      const before = (await owner.route(routes.preferences, {})).body;
      const cases: [Record<string, unknown>, string, RegExp][] = [
        [{ language: 'xx' }, 'language', /en, es, fr/],
        [{ zone: 'Mars/Olympus' }, 'zone', /IANA time zone/],
        [{ weekStart: 3 }, 'weekStart', /0 \(Sunday\) or 1 \(Monday\)/],
        [{ clock: 'metric' }, 'clock', /12h or 24h/],
        // An unknown field is named in the message of the body's problem.
        [{ colour: 'blue' }, 'body', /colour/],
      ];
      for (const [body, field, rule] of cases) {
        const refused = await owner.app('PUT', '/preferences', body);
        assertError(refused, 400, { path: field });
        assert.match(refused.body.errors.find((e: { path: string }) => e.path === field).message, rule, JSON.stringify(refused.body));
      }
      assert.deepEqual((await owner.route(routes.preferences, {})).body, before);
    });

    it('answers only a signed-in person, and a change needs the CSRF token', async () => {
      assert.equal((await new WebClient(herald.url).app('GET', '/preferences')).status, 401);
      const forged = await owner.app('PUT', '/preferences', { language: 'de' }, { csrf: false });
      assert.equal(forged.status, 403);
    });

    it('goes with the person when they are removed from the account', async () => {
      await member.route(routes.setPreferences, { body: { language: 'ja' } });
      const people = await owner.route(routes.people, {});
      const memberId = people.body.find((p) => p.email === 'member@example.com')!.id;
      assert.equal((await owner.app('DELETE', `/people/${memberId}`)).status, 200);
      const left = await herald.services.store.db.selectFrom('person_preferences').select('user_id').where('user_id', '=', memberId).execute();
      assert.deepEqual(left, []);
    });
  });
}
