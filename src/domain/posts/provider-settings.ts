/** A post's network settings checked against the network's own schema (the one the web forms are built from). */
import type { Provider } from '../../providers/types.ts';
import type { FieldProblem } from '../errors.ts';

/** Validates settings against the provider's schema; drafts may leave required fields out. */
export function validateSettings(
  provider: Provider,
  settings: Record<string, unknown> | undefined,
  draft: boolean,
  path: string,
): { value: Record<string, unknown>; problems: FieldProblem[] } {
  const { __type, ...fields } = settings ?? {};
  const problems: FieldProblem[] = [];
  if (__type !== undefined && __type !== provider.identifier) {
    problems.push({ path: `${path}.__type`, message: `is "${String(__type)}" but the channel is a ${provider.identifier} channel` });
  }
  const schema = draft ? provider.settings.partial() : provider.settings;
  const parsed = schema.safeParse(fields);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) problems.push({ path: [path, ...issue.path].join('.'), message: `${issue.message} (${provider.name} settings)` });
    return { value: {}, problems };
  }
  return { value: { __type: provider.identifier, ...(parsed.data as object) }, problems };
}
