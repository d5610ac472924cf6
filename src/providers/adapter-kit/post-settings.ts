/**
 * A post's network settings as an adapter reads them when it publishes. POST
 * /posts checked them when it accepted the post, so a failure here is a post
 * saved before a rule changed: it is refused, saying which setting and why.
 */
import type { z } from 'zod';
import { PublishError } from '../errors.ts';

export function postSettings<S extends z.ZodType>(schema: S, item: { settings: Record<string, unknown> }, network: string): z.output<S> {
  const parsed = schema.safeParse(item.settings);
  if (parsed.success) return parsed.data;
  const problems = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
  throw new PublishError('refused', `the post's ${network} settings are not valid: ${problems}`);
}
