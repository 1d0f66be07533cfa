// The kiosk answers screenshot requests with real pixels: the browser window's own capture (the
// Chromium shell's DevTools pipe), scaled by the request's divisors and encoded as WebP, uploaded
// upstream with method `kiosk`. The renderer never hears the request (the agent answers it), and
// the surface the window lays out on is reported upstream once it is known.
import sharp from 'sharp';
import type { CaptureMethod, ScreenObservation, ScreenSurface } from '../../sdk/contract/screen-health';

/** What can capture the glass: the Chromium shell (chromium.ts); an Electron shell may add its own. */
export interface GlassSource {
  /** The window's pixels now, as PNG. */
  capture(): Promise<Buffer>;
  /** The surface the page lays out on (CSS pixels and the device pixel ratio), when the shell knows it. */
  surface?(): Promise<ScreenSurface>;
}

/** What the agent gives this module: the upstream calls, made with its session. */
export interface ScreenshotUpstream {
  upload(capture: { captureId: string; method: CaptureMethod; image: Uint8Array }): Promise<void>;
  observe(observation: ScreenObservation): Promise<void>;
}

/** The request as it arrives on the upstream runtime stream (screen.screenshot_requested details). */
interface Request {
  capture_id?: unknown;
  expires_at?: unknown;
  max_width_divisor?: unknown;
  max_height_divisor?: unknown;
  quality?: unknown;
  max_bytes?: unknown;
}

/** The kiosk's build, told with its observation (kept equal to the package's version by a test). */
export const KIOSK_VERSION = '0.1.0';

const positive = (value: unknown, fallback: number) =>
  typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : fallback;

/** The PNG a window capture gave, as the WebP still a request asks for (at most its bytes). */
export async function stillFrom(png: Buffer, request: Request): Promise<Buffer> {
  const { width = 1, height = 1 } = await sharp(png).metadata();
  const target = {
    width: Math.max(1, Math.round(width / positive(request.max_width_divisor, 2))),
    height: Math.max(1, Math.round(height / positive(request.max_height_divisor, 2))),
  };
  const maxBytes = positive(request.max_bytes, 2_097_152);
  for (let quality = positive(request.quality, 80); ; quality -= 20) {
    const still = await sharp(png).resize(target.width, target.height, { fit: 'fill' }).webp({ quality }).toBuffer();
    if (still.length <= maxBytes || quality <= 20) return still;
  }
}

export class KioskScreenshots {
  /** Set by the shell that owns the window; without one a request is left to time out upstream. */
  source: GlassSource | undefined;

  constructor(
    private readonly upstream: ScreenshotUpstream,
    private readonly log: (message: string) => void = () => undefined,
    private readonly now: () => number = Date.now,
  ) {}

  /** Answers one request, unless it expired or nothing can capture; true when a still was sent. */
  async answer(request: Request): Promise<boolean> {
    const captureId = typeof request.capture_id === 'string' ? request.capture_id : undefined;
    const expiresAt = typeof request.expires_at === 'string' ? Date.parse(request.expires_at) : Number.NaN;
    if (!captureId || !(expiresAt > this.now())) return false;
    if (!this.source) {
      this.log(`screenshot ${captureId}: this shell cannot capture its window; the request will time out`);
      return false;
    }
    try {
      const still = await stillFrom(await this.source.capture(), request);
      await this.upstream.upload({ captureId, method: 'kiosk', image: still });
      return true;
    } catch (error) {
      this.log(`screenshot ${captureId} not sent: ${String(error)}`);
      return false;
    }
  }

  private reported: string | undefined;

  /** Tells upstream the window's surface when it is known and changed (the agent calls it on each reconnection). */
  async reportSurface(): Promise<void> {
    const surface = await this.source?.surface?.();
    if (!surface) return;
    const key = JSON.stringify(surface);
    if (key === this.reported) return;
    await this.upstream.observe({ observed_at: new Date(this.now()).toISOString(), surfaces: [surface] });
    this.reported = key;
  }
}
