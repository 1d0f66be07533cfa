// Media generation: prompt framing, the vendor's size and price, credit admission, and the one
// in-flight generation per project. The route (media-generation.routes.ts) strings them together.
import { GENERATED_SIZES, type AspectRatio, type GenerationQuality } from '../../sdk/contract/media';
import { problem } from '../problem';
import type { Tx } from '../store/store';
import { floorMillis, MILLIS_PER_CREDIT } from '../tenants/credits';
import type { VendorSize } from './image-vendor';

/** spec Media: appended before the prompt reaches the vendor; the stored prompt stays unchanged. */
export const FRAMING_REQUIREMENTS =
  'Requirements: edge-to-edge artwork that fills the whole canvas. Do not depict a television, monitor, device, bezel, frame, border, mounting, room, shadow, or a photograph of an installed sign.';

export function framedPrompt(prompt: string): string {
  return `${prompt}\n\n${FRAMING_REQUIREMENTS}`;
}

/** The vendor size closest in shape to the aspect; the server then crops and scales to the exact size. */
export function vendorSizeFor(aspect: AspectRatio): VendorSize {
  const { width, height } = GENERATED_SIZES[aspect];
  return width === height ? '1024x1024' : width > height ? '1536x1024' : '1024x1536';
}

/**
 * The vendor's price of one image in US dollars, by size and quality: the list prices of the
 * OpenAI gpt-image-1 model, which the default adapter targets. Known before the call, so admission
 * can check the balance first.
 */
export const VENDOR_PRICE_USD: Record<VendorSize, Record<GenerationQuality, number>> = {
  '1024x1024': { low: 0.011, medium: 0.042, high: 0.167 },
  '1536x1024': { low: 0.016, medium: 0.063, high: 0.25 },
  '1024x1536': { low: 0.016, medium: 0.063, high: 0.25 },
};

/** What one credit is worth when a vendor cost is charged in credits (10,000 included credits = $10). */
export const USD_PER_CREDIT = 0.001;

export interface GenerationPrice {
  usd: string;
  /** Whole credits charged on success: the vendor cost rounded up. */
  credits: number;
}

export function priceOf(size: VendorSize, quality: GenerationQuality): GenerationPrice {
  const usd = VENDOR_PRICE_USD[size][quality];
  return { usd: decimal(usd), credits: Math.ceil(Math.round((usd / USD_PER_CREDIT) * 1e6) / 1e6) };
}

function decimal(value: number): string {
  return value.toFixed(6).replace(/0+$/, '').replace(/\.$/, '');
}

/** A running generation holds the project's slot this long at most (a crashed one frees it). */
export const GENERATION_LEASE_MS = 10 * 60_000;

/**
 * spec Limits: remaining credits must be above the floor by at least 1 credit, and must cover twice
 * the vendor cost (rounded up to whole credits); both measured above the floor, like every debit.
 */
export async function admitGeneration(tx: Tx, tenantId: string, price: GenerationPrice, now: number): Promise<void> {
  const tenant = await tx
    .selectFrom('tenants')
    .select(['credit_millis'])
    .where('id', '=', tenantId)
    .executeTakeFirstOrThrow();
  const spendable = tenant.credit_millis - floorMillis(now);
  if (spendable < MILLIS_PER_CREDIT)
    throw problem(
      'payment_required',
      'remaining credits are at the floor; media generation needs at least 1 credit above it',
    );
  if (spendable < 2 * price.credits * MILLIS_PER_CREDIT) {
    throw problem(
      'payment_required',
      `media generation at this quality needs ${2 * price.credits} credits of headroom (twice its ${price.credits}-credit vendor cost)`,
    );
  }
}

/** spec Limits: one in-flight generation per project; more parallelism is rate_limited (no RateLimit headers). */
export async function holdGenerationSlot(tx: Tx, tenantId: string, now: number): Promise<void> {
  const running = await tx
    .selectFrom('media_generations')
    .select('id')
    .where('tenant_id', '=', tenantId)
    .where('state', '=', 'running')
    .where('lease_expires_at', '>', now)
    .executeTakeFirst();
  if (running)
    throw problem('rate_limited', 'another media generation of this project is still running; retry when it finished', {
      retryAfter: 5,
    });
}
