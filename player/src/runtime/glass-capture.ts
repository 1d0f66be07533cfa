// A screenshot of what the browser player shows, composed from its own layers: a page cannot read
// its pixels back, so the player draws on a canvas what it put on glass — backgrounds, images, the
// current frame of each video, text, each at its current opacity and place (a transition mid-way
// shows mid-way). A cross-origin frame (an application, a web page) cannot be drawn: it becomes a
// labelled placeholder. The still is encoded as WebP (method `composed`).

/** What a capture request asks for (screen.screenshot_requested details). */
export interface CaptureRequest {
  max_width_divisor: number;
  max_height_divisor: number;
  quality: number;
  max_bytes: number;
}

const PLACEHOLDER_FILL = '#2b2f36';
const PLACEHOLDER_INK = '#d0d4da';

interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
}

/** The rectangle an image of `natural` size takes inside `box` under CSS object-fit. */
export function fitRect(box: Box, natural: { width: number; height: number }, fit: string): Box {
  if (natural.width <= 0 || natural.height <= 0 || fit === 'fill') return box;
  const scaleContain = Math.min(box.width / natural.width, box.height / natural.height);
  const scaleCover = Math.max(box.width / natural.width, box.height / natural.height);
  const scale =
    fit === 'cover' ? scaleCover : fit === 'none' ? 1 : fit === 'scale-down' ? Math.min(1, scaleContain) : scaleContain;
  const width = natural.width * scale;
  const height = natural.height * scale;
  return { x: box.x + (box.width - width) / 2, y: box.y + (box.height - height) / 2, width, height };
}

function visibleOpacity(element: Element, view: Window): number {
  let opacity = 1;
  for (let e: Element | null = element; e; e = e.parentElement) {
    const style = view.getComputedStyle(e);
    if (style.display === 'none' || style.visibility === 'hidden') return 0;
    opacity *= Number(style.opacity);
  }
  return opacity;
}

function isTransparent(color: string): boolean {
  return color === 'transparent' || /rgba\([^)]*,\s*0\)$/.test(color);
}

/** The text an element shows itself (not its children's). */
function ownText(element: Element): string {
  let text = '';
  for (const node of element.childNodes) if (node.nodeType === 3) text += node.textContent ?? '';
  return text.trim();
}

/** What a placeholder says: an application or a web page (the placement's kind), and its title. */
function frameLabel(frame: HTMLIFrameElement): string {
  const kind = frame.closest<HTMLElement>('[data-kind]')?.dataset.kind === 'application' ? 'application' : 'web page';
  const title = frame.title || frame.getAttribute('aria-label') || frame.name;
  return title ? `${kind}: ${title}` : kind;
}

/** Draws `root`'s subtree in paint order (document order; stacking contexts are not reordered). */
function paint(
  context: CanvasRenderingContext2D,
  root: Element,
  view: Window,
  scale: number,
  drawMedia: boolean,
): void {
  const walker = root.ownerDocument.createTreeWalker(root, 1 /* SHOW_ELEMENT */);
  for (let node: Node | null = walker.currentNode; node; node = walker.nextNode()) {
    const element = node as HTMLElement;
    const rect = element.getBoundingClientRect();
    if (rect.width <= 0 || rect.height <= 0) continue;
    const opacity = visibleOpacity(element, view);
    if (opacity <= 0) continue;
    const box = { x: rect.left * scale, y: rect.top * scale, width: rect.width * scale, height: rect.height * scale };
    const style = view.getComputedStyle(element);
    context.globalAlpha = opacity;
    if (!isTransparent(style.backgroundColor)) {
      context.fillStyle = style.backgroundColor;
      context.fillRect(box.x, box.y, box.width, box.height);
    }
    const tag = element.tagName;
    if (tag === 'IMG' || tag === 'VIDEO') {
      const media = element as HTMLImageElement | HTMLVideoElement;
      const natural =
        tag === 'IMG'
          ? { width: (media as HTMLImageElement).naturalWidth, height: (media as HTMLImageElement).naturalHeight }
          : { width: (media as HTMLVideoElement).videoWidth, height: (media as HTMLVideoElement).videoHeight };
      const ready = tag === 'IMG' ? (media as HTMLImageElement).complete : (media as HTMLVideoElement).readyState >= 2;
      if (natural.width > 0 && ready) {
        const target = fitRect(box, natural, style.objectFit);
        if (drawMedia) {
          context.save();
          context.beginPath();
          context.rect(box.x, box.y, box.width, box.height);
          context.clip();
          context.drawImage(media, target.x, target.y, target.width, target.height);
          context.restore();
        } else placeholder(context, box, tag === 'IMG' ? 'image' : 'video', scale);
      }
    } else if (tag === 'IFRAME') {
      placeholder(context, box, frameLabel(element as HTMLIFrameElement), scale);
    }
    const text = ownText(element);
    if (text) {
      context.fillStyle = style.color;
      const size = parseFloat(style.fontSize) * scale;
      context.font = `${style.fontWeight} ${size}px ${style.fontFamily}`;
      context.textBaseline = 'middle';
      context.textAlign = style.textAlign === 'center' ? 'center' : 'left';
      const x = style.textAlign === 'center' ? box.x + box.width / 2 : box.x + parseFloat(style.paddingLeft) * scale;
      const lines = text.split('\n');
      lines.forEach((line, i) =>
        context.fillText(line, x, box.y + box.height / 2 + (i - (lines.length - 1) / 2) * size * 1.2, box.width),
      );
    }
  }
  context.globalAlpha = 1;
}

function placeholder(context: CanvasRenderingContext2D, box: Box, label: string, scale: number): void {
  context.fillStyle = PLACEHOLDER_FILL;
  context.fillRect(box.x, box.y, box.width, box.height);
  context.strokeStyle = PLACEHOLDER_INK;
  context.lineWidth = Math.max(1, 2 * scale);
  context.strokeRect(box.x, box.y, box.width, box.height);
  context.fillStyle = PLACEHOLDER_INK;
  context.font = `${Math.max(10, Math.round(24 * scale))}px sans-serif`;
  context.textAlign = 'center';
  context.textBaseline = 'middle';
  context.fillText(label, box.x + box.width / 2, box.y + box.height / 2, box.width);
}

function encode(canvas: HTMLCanvasElement, quality: number): Promise<Blob> {
  return new Promise((resolve, reject) =>
    canvas.toBlob(
      (blob) => (blob ? resolve(blob) : reject(new Error('the canvas did not encode'))),
      'image/webp',
      quality,
    ),
  );
}

/**
 * The glass of `view` (its whole viewport) as a still WebP of at most a divisor-th of its CSS
 * pixels each way. Media a canvas may not read back (another origin without CORS) become
 * placeholders rather than failing the capture.
 */
export async function composeGlass(view: Window, request: CaptureRequest): Promise<Blob> {
  const scale = 1 / Math.max(request.max_width_divisor, request.max_height_divisor, 1);
  const canvas = view.document.createElement('canvas');
  canvas.width = Math.max(1, Math.round(view.innerWidth * scale));
  canvas.height = Math.max(1, Math.round(view.innerHeight * scale));
  const compose = (drawMedia: boolean) => {
    const context = canvas.getContext('2d')!;
    context.fillStyle = '#000';
    context.fillRect(0, 0, canvas.width, canvas.height);
    paint(context, view.document.body, view, scale, drawMedia);
  };
  compose(true);
  let blob: Blob;
  try {
    blob = await encode(canvas, request.quality / 100);
  } catch {
    compose(false); // a tainted canvas cannot be encoded: draw media as placeholders instead
    blob = await encode(canvas, request.quality / 100);
  }
  for (let quality = request.quality - 20; blob.size > request.max_bytes && quality > 0; quality -= 20)
    blob = await encode(canvas, quality / 100);
  return blob;
}

/** The surface the player lays its canvas out on (PUT /runtime/v1/observation). */
export function observeSurface(view: Window): {
  id: string;
  width: number;
  height: number;
  pixel_ratio: number;
  presentation: 'output' | 'windowed';
} {
  const full =
    view.document.fullscreenElement !== null ||
    (view.innerWidth >= view.screen.width && view.innerHeight >= view.screen.height);
  return {
    id: 'primary',
    width: Math.max(1, Math.round(view.innerWidth)),
    height: Math.max(1, Math.round(view.innerHeight)),
    pixel_ratio: view.devicePixelRatio > 0 ? view.devicePixelRatio : 1,
    presentation: full ? 'output' : 'windowed',
  };
}
