/**
 * A teardown that closes everything whatever fails: each step runs even when one
 * before it threw (a Herald whose close found an answer off its schema must not
 * leave the local servers after it open, which held the file until its time
 * limit), then the failures are reported, the first alone or all together.
 */
export async function teardown(...steps: Array<() => unknown>): Promise<void> {
  const failures: unknown[] = [];
  for (const step of steps) {
    try {
      await step();
    } catch (err) {
      failures.push(err);
    }
  }
  if (failures.length === 1) throw failures[0];
  if (failures.length > 1) throw new AggregateError(failures, `${failures.length} steps of the teardown failed`);
}
