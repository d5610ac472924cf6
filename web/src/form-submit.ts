/**
 * A form's submission: busy while it runs, and the error it ended with, so the
 * sign-in, sign-up and password forms show both the same way.
 */
import { useState, type FormEvent } from 'react';

export function useFormSubmit(run: (form: FormData) => Promise<void>) {
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const onSubmit = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    // Read before the first await: React reuses the event's target afterwards.
    const form = new FormData(event.currentTarget);
    setBusy(true);
    setError(undefined);
    try {
      await run(form);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return { onSubmit, busy, error };
}
