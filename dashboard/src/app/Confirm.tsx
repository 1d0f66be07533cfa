// An inline confirmation in place of the button that asked for it ("Delete…"): a group whose legend
// asks the question, its action buttons, and Cancel. By keyboard it behaves as a small dialog: it
// takes the focus when it opens (the asking button is gone), Escape cancels it, and when it closes
// with the focus lost the focus goes back to the asking button (the one marked data-asks={asker}).
import { type ReactNode, useEffect, useRef } from 'react';

export function Confirm({
  question,
  asker,
  onCancel,
  children,
}: {
  question: ReactNode;
  /** The data-asks value of the button that opened it. */
  asker: string;
  onCancel: () => void;
  /** The action buttons; the first takes the focus. */
  children: ReactNode;
}) {
  const box = useRef<HTMLFieldSetElement>(null);
  useEffect(() => {
    box.current?.querySelector('button')?.focus();
    return () => {
      // After the asking button is drawn again in this confirmation's place.
      requestAnimationFrame(() => {
        if (document.activeElement && document.activeElement !== document.body) return;
        document.querySelector<HTMLElement>(`[data-asks="${CSS.escape(asker)}"]`)?.focus();
      });
    };
  }, [asker]);
  return (
    <fieldset
      className="confirm"
      ref={box}
      onKeyDown={(e) => {
        if (e.key !== 'Escape') return;
        e.preventDefault();
        onCancel();
      }}
    >
      <legend>{question}</legend>
      {children}
      <button type="button" className="quiet" onClick={onCancel}>
        Cancel
      </button>
    </fieldset>
  );
}
