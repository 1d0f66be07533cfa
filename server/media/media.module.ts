// Start-up wiring of media: the upload verification runner, upload expiry, advertised features.
import type { Services } from '../services';
import { expireUploads, mediaUploadRunner } from './media-uploads';

const UPLOAD_EXPIRY_EVERY_MS = 60_000;

export function installMedia(services: Services): void {
  services.operations.register(mediaUploadRunner(services));
  services.housekeeping.every('media-upload-expiry', UPLOAD_EXPIRY_EVERY_MS, async () => {
    await expireUploads(services);
  });
  Object.assign(services.features, { media: true, media_generation: services.imageVendor !== undefined });
}
