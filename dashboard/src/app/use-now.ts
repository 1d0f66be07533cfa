// The current time, ticking every 30 s, so "last seen 2 min ago" stays true on an open page.
import { useEffect, useState } from 'react';

export const NOW_TICK_MS = 30_000;

export function useNow(): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), NOW_TICK_MS);
    return () => clearInterval(timer);
  }, []);
  return now;
}
