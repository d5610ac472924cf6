/**
 * Pieces every part of the public API's contract uses: instants, ids, whole
 * numbers, pages and the one error body. The contract (this folder) is what the
 * server validates with, what the domain takes and gives, what the OpenAPI
 * document shows and what the SDK's types are derived from.
 */
import { z } from 'zod';
import { parseInstant } from '../lib/time.ts';

/** Clients send "" for "not given" (value[].id, posts[].group). */
export const optionalId = z
  .string()
  .max(200)
  .optional()
  .transform((v) => (v ? v : undefined));

export const isoInstant = z
  .string()
  .refine((v) => parseInstant(v) !== undefined, { error: 'must be an ISO 8601 date-time, e.g. 2026-12-01T09:00:00.000Z' })
  .transform((v) => parseInstant(v) as number);

export const idParam = z.object({ id: z.string().min(1).max(200) });

/**
 * A whole number sent as a number or as decimal digits ("5", as query strings and
 * some clients send it); never true, [1] or "0x10", which Number() would also
 * turn into a number.
 */
export function wholeNumber(min: number, max: number) {
  return z
    .union(
      [
        z.number(),
        z
          .string()
          .regex(/^\d{1,15}$/, 'must be a whole number (digits only)')
          .transform(Number),
      ],
      { error: 'must be a whole number' },
    )
    .pipe(z.number().int().min(min).max(max));
}

/** ?page=N of the paged lists; pages count from 0. */
export const pageQuery = z.object({ page: z.coerce.number().int().min(0).max(100_000).optional().default(0) });

/** Body of every non-2xx answer; `code` is one of the codes in ../domain/error-codes.ts (listed in the README). */
export const errorBody = z.object({
  statusCode: z.number(),
  error: z.string(),
  message: z.string(),
  msg: z.string(),
  code: z.string().describe("What went wrong, for programs: one of the codes listed in this document's description"),
  errors: z.array(z.object({ path: z.string(), message: z.string() })),
});
