/**
 * Who wrote a comment or made a decision, as stored beside it: a person of the
 * team, an API key (which acts for the account), or a visitor of a preview link
 * by the name they gave. The name is kept as it was, so the history still reads
 * right after the person or key is gone.
 */
import type { Kysely } from 'kysely';
import type { AuthorKind, Database } from '../../db/schema.ts';
import type { Principal } from '../accounts.ts';

export interface Author {
  kind: AuthorKind;
  id: string | null;
  name: string;
}

/** The stored columns of an author. */
export interface AuthorColumns {
  author_kind: AuthorKind;
  author_id: string | null;
  author_name: string;
}

export function authorColumns(author: Author): AuthorColumns {
  return { author_kind: author.kind, author_id: author.id, author_name: author.name };
}

export function authorView(row: AuthorColumns): Author {
  return { kind: row.author_kind, id: row.author_id, name: row.author_name };
}

/** A person of the account, or undefined when they were removed. */
export async function personAuthor(db: Kysely<Database>, accountId: string, userId: string): Promise<Author | undefined> {
  const user = await db.selectFrom('users').select(['id', 'name', 'email']).where('id', '=', userId).where('account_id', '=', accountId).executeTakeFirst();
  return user ? { kind: 'person', id: user.id, name: user.name || user.email } : undefined;
}

/** Whoever a credential acts for: its person, or the API key itself. */
export async function principalAuthor(db: Kysely<Database>, principal: Principal): Promise<Author> {
  if (principal.userId) {
    const person = await personAuthor(db, principal.accountId, principal.userId);
    if (person) return person;
  }
  const key = await db.selectFrom('api_keys').select('name').where('id', '=', principal.keyId).where('account_id', '=', principal.accountId).executeTakeFirst();
  return { kind: 'key', id: principal.keyId, name: key ? `API key "${key.name}"` : 'API key' };
}

/** Whether `author` is the one `principal` acts for (its own comments may be deleted). */
export function isOwn(author: Author, principal: Principal): boolean {
  if (author.kind === 'person') return author.id === principal.userId;
  if (author.kind === 'key') return !principal.userId && author.id === principal.keyId;
  return false;
}
