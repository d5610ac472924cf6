import { useEffect, useState } from 'react';
import { api, pub } from '../api.ts';

/**
 * The first chosen channel's next free slot (ISO), looked up while `wanted` and
 * again whenever the chosen channels change; a failed look-up goes to `onError`.
 */
export function useNextSlot(channels: string[], wanted: boolean, onError: (error: unknown) => void): string | undefined {
  const [slot, setSlot] = useState<string>();
  useEffect(() => {
    if (!wanted || !channels[0]) return;
    let current = true;
    api('GET', pub(`/find-slot/${channels[0]}`))
      .then((r) => current && setSlot(r.date))
      .catch((err) => current && onError(err));
    return () => {
      current = false;
    };
  }, [wanted, channels, onError]);
  return slot;
}
