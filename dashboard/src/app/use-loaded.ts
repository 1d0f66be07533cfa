// A value read from the server for a page: loading, the value, or the reason it could not be read.
import { useCallback, useEffect, useState } from 'react';
import { problemMessage } from '../state/problem-message';

export interface Loaded<T> {
  value: T | undefined;
  error: string | null;
  loading: boolean;
  reload(): void;
}

/** `load` may show a part of its value before it has the whole (`partial`), e.g. a list page by page. */
export function useLoaded<T>(
  load: (partial: (value: T) => void) => Promise<T>,
  deps: readonly unknown[],
  what: string,
): Loaded<T> {
  const [value, setValue] = useState<T>();
  const [error, setError] = useState<string | null>(null);
  const [loading, setLoading] = useState(true);
  const [round, setRound] = useState(0);
  // biome-ignore lint/correctness/useExhaustiveDependencies: the caller names what the load depends on
  useEffect(() => {
    let current = true;
    setLoading(true);
    load((v) => {
      if (current) setValue(v);
    }).then(
      (v) => {
        if (!current) return;
        setValue(v);
        setError(null);
        setLoading(false);
      },
      (e: unknown) => {
        if (!current) return;
        setError(problemMessage(e, `${what} could not be loaded`));
        setLoading(false);
      },
    );
    return () => {
      current = false;
    };
  }, [...deps, round]);
  const reload = useCallback(() => setRound((r) => r + 1), []);
  return { value, error, loading, reload };
}
