// Start-up wiring of each feature: operation runners, housekeeping jobs, advertised features, and
// the seams one feature offers another. Routes are not here: every route is in routes.ts.
import { installApplications } from './applications/applications.module';
import { installEvents } from './events/events.module';
import { installFeedback } from './feedback/feedback.module';
import { installFleet } from './fleet/fleet.module';
import { installPlayback } from './playback/playback.module';
import { installMedia } from './media/media.module';
import { playlistReferences } from './playlists/content-references';
import type { ContentReferences } from './references';
import { installReleaseHost } from './release-host/release-host.module';
import { withActiveGrants } from './runtime/active-references';
import { installRuntime } from './runtime/runtime.module';
import { installNative } from './pairing/native.module';
import { installScreens } from './screens/screens.module';
import { installScreenHealth } from './screens/screen-health.module';
import type { Services } from './services';
import { installTenants } from './tenants/tenants.module';
import { installPeople } from './sign-in/sign-in.module';

/**
 * Registers what one feature runs in the background and advertises. An installer only adds (a
 * runner of its own kind, jobs of its own names, its own feature flags), so their order is free.
 */
export type Installer = (services: Services) => void;

export const installers: Installer[] = [
  installTenants,
  installEvents,
  installMedia,
  installApplications,
  installReleaseHost,
  installScreens,
  installRuntime,
  installPeople,
  installNative,
  installFleet,
  installFeedback,
  installPlayback,
  installScreenHealth,
];

/**
 * Who references content: the playlists' "desired" answers (what screens are assigned to show),
 * and the runtime plane's "active" ones (what players have on glass) around them.
 */
export function composeReferences(services: Services): ContentReferences {
  return withActiveGrants(playlistReferences(services));
}
