/** A media tag: letters, digits, spaces and hyphens (so it never needs escaping in a LIKE pattern), up to 40 characters. */
export const MEDIA_TAG = /^[\p{L}\p{N}][\p{L}\p{N} -]{0,39}$/u;
