/**
 * Whether this process's secret opens what the store sealed. A store moved to
 * PostgreSQL and started with a new HERALD_SECRET looks healthy while every
 * channel token fails to open, so the service refuses to start with such a
 * secret and /api/ready reports it (a `secret` check).
 */
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.ts';
import { createSecretBox, existingSecret, secretFile, UnsealError, type SecretBox } from '../lib/secrets.ts';

/** Where this process's secret comes from, as the person running it would look for it. */
function secretSource(config: { secret?: string; dataDir: string }): string {
  return config.secret ? 'HERALD_SECRET' : `The secret in ${secretFile(config.dataDir)} (HERALD_SECRET is not set)`;
}

/** The newest live sealed value of each kind: a sample that shows which secret the store is sealed with, at three cheap reads. */
async function newestSealed(db: Kysely<Database>): Promise<string[]> {
  const [channel, key, webhook] = await Promise.all([
    db.selectFrom('channels').select('config_sealed as sealed').where('deleted_at', 'is', null).orderBy('created_at', 'desc').limit(1).executeTakeFirst(),
    db.selectFrom('api_keys').select('key_sealed as sealed').where('revoked_at', 'is', null).orderBy('created_at', 'desc').limit(1).executeTakeFirst(),
    db.selectFrom('webhooks').select('secret_sealed as sealed').where('deleted_at', 'is', null).orderBy('created_at', 'desc').limit(1).executeTakeFirst(),
  ]);
  return [channel, key, webhook].flatMap((row) => (row ? [row.sealed] : []));
}

/** The first refusal among the sampled values, or undefined when one of them opens (or there is none). */
function refusal(box: SecretBox, sealed: string[]): UnsealError | undefined {
  let first: UnsealError | undefined;
  for (const value of sealed) {
    try {
      box.decrypt(value);
      return undefined;
    } catch (err) {
      if (!(err instanceof UnsealError)) throw err;
      first ??= err;
    }
  }
  return first;
}

/**
 * Undefined when the store has nothing sealed yet or the secret opens one of its
 * newest sealed values; otherwise what is wrong and what to do. One value that
 * does not open (a damaged row) is left to the post or request that needs it;
 * none opening means the whole store was sealed with another secret.
 */
export async function secretMismatch(db: Kysely<Database>, box: SecretBox, config: { secret?: string; dataDir: string }): Promise<string | undefined> {
  const sealed = await newestSealed(db);
  const refused = refusal(box, sealed);
  if (!refused) return undefined;
  const problem = `${secretSource(config)} does not open the channel tokens, API keys and webhook secrets this store sealed: ${refused.message}.`;
  // The usual way here: a new HERALD_SECRET exported beside the data folder whose generated secret sealed the store.
  const file = secretFile(config.dataDir);
  const kept = config.secret ? existingSecret(undefined, config.dataDir) : undefined;
  if (kept && kept !== config.secret && !refusal(createSecretBox(kept), sealed)) {
    return `${problem} The secret in ${file} opens it: unset HERALD_SECRET, or set it to that file's content on every process (HERALD_SECRET="$(cat ${file})").`;
  }
  return (
    `${problem} Give every Herald process of this store the secret that sealed it: the HERALD_SECRET it ran with before or, for a store moved ` +
    'from the embedded store (herald move-store), the content of the secret.key in the data folder it was moved from ' +
    '(HERALD_SECRET="$(cat /path/to/data/secret.key)").'
  );
}
