/**
 * Where the composer keeps unsent drafts in this browser: under the person and
 * the account they were written in, so someone else signing in on the same
 * browser never sees them, and all of them go at sign-out.
 */
const PREFIX = 'herald.composer.';

/** Whose drafts: the signed-in person in their account. */
export interface DraftOwner {
  account: string;
  user: string;
}

/** The key of one draft: a new post, a post being edited, or a series ("series-<id>"). */
export const draftStorageKey = (owner: DraftOwner, id?: string) => `${PREFIX}${owner.account}.${owner.user}.${id ?? 'new'}`;

/** Removes every draft saved in this browser, whoever wrote it (also those saved before drafts had owners). */
export function forgetAllDrafts(storage: Storage = localStorage): void {
  const keys = Array.from({ length: storage.length }, (_, i) => storage.key(i)).filter((k): k is string => !!k?.startsWith(PREFIX));
  for (const key of keys) storage.removeItem(key);
}
