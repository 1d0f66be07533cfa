// A page's h1, focused when the page opens so a screen reader announces where the person landed.
import { type ReactNode, useEffect, useRef } from 'react';

export function PageHeading({ children }: { children: ReactNode }) {
  const ref = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    ref.current?.focus({ preventScroll: true });
  }, []);
  return (
    <h1 ref={ref} tabIndex={-1}>
      {children}
    </h1>
  );
}

/** A result to announce: a polite live region when it worked, an alert when it did not. */
export function Notice({ text, error }: { text: string | null; error?: boolean }) {
  return (
    <p className={`notice ${text ? (error ? 'error' : 'ok') : 'empty'}`} role={error ? 'alert' : 'status'}>
      {text}
    </p>
  );
}
