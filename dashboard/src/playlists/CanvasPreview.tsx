// One page drawn to scale: its canvas (size and background) and each placement where it sits, in
// paint order, with the picture of its first media where there is one. A picture of the form around
// it: its words are in its label and caption.
import { useEffect, useRef, useState } from 'react';
import type { PageWrite, PlaylistMediaItem } from '../../../sdk/contract/playlist';
import { backgroundCss, paintOrder } from '../../../player/src/playback/canvas-layout';
import { placementBox, scaleCaption } from './canvas-scale';
import { itemKey } from './playlist-draft';
import { mediaContentPath } from './media-path';

function useWidth<T extends HTMLElement>() {
  const ref = useRef<T>(null);
  const [width, setWidth] = useState(0);
  useEffect(() => {
    const el = ref.current;
    if (!el) return;
    setWidth(el.clientWidth);
    const observer = new ResizeObserver(() => setWidth(el.clientWidth));
    observer.observe(el);
    return () => observer.disconnect();
  }, []);
  return [ref, width] as const;
}

export function CanvasPreview({
  page,
  label,
  items,
}: {
  page: PageWrite;
  label: string;
  items: ReadonlyMap<string, PlaylistMediaItem[]>;
}) {
  const [ref, width] = useWidth<HTMLDivElement>();
  const { canvas } = page;
  const z = paintOrder(page.placements.map((p) => p.layer));
  return (
    <figure className="canvas-preview" data-testid="canvas-preview" data-page-id={page.id}>
      <div
        ref={ref}
        className="canvas-box"
        role="img"
        aria-label={`${label} drawn to scale: ${page.placements.length} placement${page.placements.length === 1 ? '' : 's'}`}
        style={{
          aspectRatio: `${canvas.width} / ${canvas.height}`,
          // A portrait canvas is drawn as tall as a landscape one is wide, not as wide as the column.
          ['--aspect' as string]: String(canvas.width / canvas.height),
          background: backgroundCss(canvas.background),
        }}
      >
        {page.placements.map((placement, i) => {
          const box = placementBox(placement.rect, canvas);
          if (!box) return null;
          const content = placement.content;
          const first = items.get(itemKey(page.id, placement.id))?.[0];
          const fit = placement.content_fit;
          return (
            <div
              key={placement.id}
              className={`placement-box ${content.type}`}
              data-placement-id={placement.id}
              data-media-id={first?.media_id}
              style={{
                left: `${box.left}%`,
                top: `${box.top}%`,
                width: `${box.width}%`,
                height: `${box.height}%`,
                zIndex: z[i],
              }}
            >
              {content.type === 'image' && first ? (
                <img
                  src={mediaContentPath(first.media_id)}
                  alt=""
                  loading="lazy"
                  decoding="async"
                  style={{ objectFit: fit }}
                />
              ) : content.type === 'video' && first ? (
                <video src={mediaContentPath(first.media_id)} muted preload="metadata" style={{ objectFit: fit }} />
              ) : (
                <span className="placement-label">
                  {content.type === 'iframe'
                    ? `Web page: ${content.title}`
                    : content.type === 'application'
                      ? 'Application'
                      : `No ${content.type} yet`}
                </span>
              )}
            </div>
          );
        })}
      </div>
      <figcaption>{width > 0 ? scaleCaption(canvas, width) : `${canvas.width}×${canvas.height}`}</figcaption>
    </figure>
  );
}
