// Start-up wiring of each feature: operation runners, housekeeping jobs, advertised features.
// Routes are not here: every route is in routes.ts.
import type { Services } from './services';
import { installEvents } from './events/events.module';
import { installTenants } from './tenants/tenants.module';
import { installScreens } from './screens/screens.module';
import { installMedia } from './media/media.module';
import { installApplications } from './applications/applications.module';
import { installReleaseHost } from './release-host/release-host.module';
import { installRuntime } from './runtime/runtime.module';
import { installNative } from './pairing/native.module';

export type Installer = (services: Services) => void;

export const installers: Installer[] = [
  installTenants,
  installEvents,
  installMedia,
  installApplications,
  installReleaseHost,
  installScreens, // playlists, screens and pairing; installs services.references
  installRuntime, // after screens: wraps services.references with active grants, installs presence
  installNative,
];
