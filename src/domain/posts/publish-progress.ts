/**
 * What a publish made on the network for one post item that its next attempt may
 * use again: a media container Meta is still processing, an upload a network is
 * still working on. Adapters key it by what made it (a digest of the request),
 * so an edited post never picks up what was made for its old version.
 */
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.ts';
import type { ItemProgress } from '../../providers/types.ts';

/** Networks keep such things for a day at most (Meta's containers expire after 24 hours). */
const KEEP_MS = 2 * 24 * 60 * 60_000;

export class PublishProgress {
  constructor(private readonly db: Kysely<Database>) {}

  /** The progress of one post item, as its adapter reads and writes it. */
  of(postId: string): ItemProgress {
    return {
      get: async (key) => {
        const row = await this.db.selectFrom('publish_progress').select('value').where('post_id', '=', postId).where('key', '=', key).executeTakeFirst();
        return row?.value;
      },
      set: async (key, value) => {
        await this.db
          .insertInto('publish_progress')
          .values({ post_id: postId, key, value, created_at: Date.now() })
          .onConflict((oc) => oc.columns(['post_id', 'key']).doUpdateSet({ value, created_at: Date.now() }))
          .execute();
      },
    };
  }

  async prune(now = Date.now()): Promise<void> {
    await this.db
      .deleteFrom('publish_progress')
      .where('created_at', '<', now - KEEP_MS)
      .execute();
  }
}
