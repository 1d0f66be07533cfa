// Every route Marquee serves, by plane. Policies (auth, area, idempotency, ...) live with handlers.
import type { RouteEntry } from './http/dispatch';
import { withOwnership } from './ownership';
import * as events from './events/events.routes';
import * as media from './media/media.routes';
import * as mediaGeneration from './media/media-generation.routes';
import * as mediaUpload from './media/media-upload.routes';
import * as operations from './operations/operations.routes';
import * as pairing from './pairing/pairing.routes';
import * as playlists from './playlists/playlists.routes';
import * as screens from './screens/screens.routes';
import * as fleet from './fleet/fleet.routes';
import * as applications from './applications/applications.routes';
import * as releaseHost from './release-host/release-host.routes';
import * as problems from './status/problem-pages.routes';
import * as status from './status/status.routes';
import * as tenants from './tenants/tenants.routes';
import * as ownerKv from './kv/kv.routes';
import * as runtimeContent from './runtime/content.routes';
import * as runtimeEvents from './runtime/events.routes';
import * as runtimeKv from './runtime/kv.routes';
import * as runtimeLaunch from './runtime/launch.routes';
import * as runtimeManifest from './runtime/manifest.routes';
import * as runtimeReports from './runtime/reports.routes';
import * as nativePairing from './pairing/native-pairing.routes';
import * as recovery from './screens/recovery.routes';
import * as runtimeTime from './runtime/time.routes';
import * as runtimeSync from './runtime/sync.routes';
import * as runtimeChrome from './runtime/chrome.routes';
import * as runtimeUnpair from './runtime/unpair.routes';
import * as browserLinks from './pairing/browser-links.routes';
import * as screenshots from './screens/screenshots.routes';
import * as runtimeScreenReports from './runtime/screen-reports.routes';
import { PLAYER_ORIGIN_PATH } from '../sdk/contract/archive-paths';
import * as accessPages from './access-pages/access-pages.routes';
import * as agents from './agents/agents.routes';
import * as billing from './billing/billing.routes';
import * as invitations from './invitations/invitations.routes';
import * as operators from './operators/operators.routes';
import * as feedback from './feedback/feedback.routes';
import * as comments from './comments/comments.routes';
import * as playback from './playback/playback.routes';
import * as resets from './sign-in/resets.routes';
import * as signIn from './sign-in/sign-in.routes';
import { DASHBOARD_PAGES, dashboardAsset, dashboardShell } from './dashboard/dashboard-app.routes';
import { declareDashboardUpload } from './dashboard/dashboard-media';
import { onDashboard } from './dashboard/dashboard-twin';

export const routeTable: RouteEntry[] = withOwnership([
  // Status (spec: Endpoints / Status)
  { plane: 'control', method: 'GET', path: '/.health', route: status.health },
  { plane: 'control', method: 'GET', path: '/.ready', route: status.ready },
  { plane: 'control', method: 'GET', path: '/.version', route: status.version },
  { plane: 'control', method: 'GET', path: '/api/v1/capabilities', route: status.capabilities },
  { plane: 'control', method: 'GET', path: '/problems/:slug', route: problems.problemPage },

  // Accounts (Model A)
  { plane: 'control', method: 'POST', path: '/api/v1/accounts', route: tenants.createAccount },
  { plane: 'control', method: 'GET', path: '/api/v1/account', route: tenants.getAccount },
  {
    plane: 'control',
    method: 'POST',
    path: '/api/v1/account/credential/revoke',
    route: tenants.revokeCallingCredential,
  },
  {
    plane: 'control',
    method: 'POST',
    path: '/api/v1/account/dashboard-links',
    route: invitations.createAccountDashboardLink,
  },
  { plane: 'control', method: 'POST', path: '/api/v1/account/browser-links/claim', route: browserLinks.claimLink },
  {
    plane: 'control',
    method: 'POST',
    path: '/api/v1/account/credential-issuances/:id/ack',
    route: tenants.ackCredentialIssuance,
  },

  // Enrollment and projects (Model P)
  { plane: 'control', method: 'POST', path: '/api/v1/enrollments', route: tenants.enroll },
  { plane: 'control', method: 'GET', path: '/api/v1/project', route: tenants.getProject },
  { plane: 'control', method: 'PATCH', path: '/api/v1/project', route: tenants.patchProject },
  { plane: 'control', method: 'GET', path: '/api/v1/project/capabilities', route: tenants.getProjectCapabilities },

  // Operations
  { plane: 'control', method: 'GET', path: '/api/v1/operations/:id', route: operations.getOperation },
  { plane: 'control', method: 'POST', path: '/api/v1/operations/:id/cancel', route: operations.cancelOperation },

  // Events (spec: Events)
  { plane: 'control', method: 'GET', path: '/api/v1/events', route: events.listEvents },
  { plane: 'control', method: 'GET', path: '/api/v1/events/stream', route: events.streamEvents },

  // Playlists (spec: Endpoints / Playlists)
  { plane: 'control', method: 'GET', path: '/api/v1/playlists', route: playlists.v1.list },
  { plane: 'control', method: 'POST', path: '/api/v1/playlists', route: playlists.v1.create },
  { plane: 'control', method: 'GET', path: '/api/v1/playlists/:id', route: playlists.v1.get },
  { plane: 'control', method: 'PUT', path: '/api/v1/playlists/:id', route: playlists.v1.replace },
  { plane: 'control', method: 'DELETE', path: '/api/v1/playlists/:id', route: playlists.v1.remove },
  { plane: 'control', method: 'GET', path: '/api/v2/playlists', route: playlists.v2.list },
  { plane: 'control', method: 'POST', path: '/api/v2/playlists', route: playlists.v2.create },
  { plane: 'control', method: 'GET', path: '/api/v2/playlists/:id', route: playlists.v2.get },
  { plane: 'control', method: 'PUT', path: '/api/v2/playlists/:id', route: playlists.v2.replace },
  { plane: 'control', method: 'DELETE', path: '/api/v2/playlists/:id', route: playlists.v2.remove },

  // Screens (spec: Endpoints / Screens)
  { plane: 'control', method: 'GET', path: '/api/v1/screens', route: screens.listScreens },
  { plane: 'control', method: 'POST', path: '/api/v1/screens/pair', route: pairing.pairScreen },
  { plane: 'control', method: 'POST', path: '/api/v1/screens/provision', route: pairing.provisionScreen },
  { plane: 'control', method: 'GET', path: '/api/v1/screens/:id', route: screens.getScreen },
  { plane: 'control', method: 'PATCH', path: '/api/v1/screens/:id', route: screens.patchScreen },
  { plane: 'control', method: 'DELETE', path: '/api/v1/screens/:id', route: screens.deleteScreen },
  { plane: 'control', method: 'POST', path: '/api/v1/screens/:id/public-id/rotate', route: screens.rotatePublicId },
  { plane: 'control', method: 'POST', path: '/api/v1/screens/:id/credential/revoke', route: screens.revokeCredential },
  { plane: 'control', method: 'POST', path: '/api/v1/screens/:id/archive', route: screens.archiveScreen },
  { plane: 'control', method: 'POST', path: '/api/v1/screens/:id/unarchive', route: screens.unarchiveScreen },
  { plane: 'control', method: 'POST', path: '/api/v1/screens/:id/reload', route: screens.reloadScreen },
  {
    plane: 'control',
    method: 'POST',
    path: '/api/v1/screens/:id/recovery/confirm',
    route: recovery.confirmScreenRecovery,
  },
  { plane: 'control', method: 'POST', path: '/api/v1/screens/actions', route: fleet.screenActions },
  { plane: 'control', method: 'GET', path: '/api/v1/screens/:id/playlist-schedule', route: fleet.getPlaylistSchedule },
  { plane: 'control', method: 'PUT', path: '/api/v1/screens/:id/playlist-schedule', route: fleet.putPlaylistSchedule },
  {
    plane: 'control',
    method: 'DELETE',
    path: '/api/v1/screens/:id/playlist-schedule',
    route: fleet.deletePlaylistSchedule,
  },
  { plane: 'control', method: 'POST', path: '/api/v1/screens/:id/takeover', route: fleet.startTakeover },
  { plane: 'control', method: 'POST', path: '/api/v1/screens/:id/takeover/clear', route: fleet.clearTakeover },
  { plane: 'control', method: 'POST', path: '/api/v1/screens/:id/toast', route: fleet.toastScreen },
  { plane: 'control', method: 'POST', path: '/api/v1/screens/:id/reboot', route: fleet.rebootScreen },
  // Screenshots and screen health (issue 17)
  {
    plane: 'control',
    method: 'POST',
    path: '/api/v1/screens/:id/screenshot',
    route: screenshots.requestScreenScreenshot,
  },
  { plane: 'control', method: 'GET', path: '/api/v1/screens/:id/screenshot', route: screenshots.getScreenScreenshot },
  {
    plane: 'control',
    method: 'GET',
    path: '/api/v1/screens/:id/screenshot/status',
    route: screenshots.getScreenScreenshotStatus,
  },
  { plane: 'control', method: 'GET', path: '/api/v1/screens/:id/display', route: fleet.getDisplay },
  { plane: 'control', method: 'POST', path: '/api/v1/screens/:id/display', route: fleet.setDisplay },
  { plane: 'control', method: 'POST', path: '/api/v1/screens/:id/display/clear', route: fleet.clearDisplay },
  { plane: 'control', method: 'PUT', path: '/api/v1/screens/:id/display-schedule', route: fleet.putDisplaySchedule },
  {
    plane: 'control',
    method: 'DELETE',
    path: '/api/v1/screens/:id/display-schedule',
    route: fleet.deleteDisplaySchedule,
  },

  // Pairing and runtime sessions (spec: Endpoints / Runtime plane)
  { plane: 'runtime', method: 'POST', path: '/runtime/v1/pairing-sessions', route: pairing.startPairing },
  { plane: 'runtime', method: 'GET', path: '/runtime/v1/pairing-events', route: pairing.pairingEvents },
  { plane: 'runtime', method: 'POST', path: '/runtime/v1/pairing-sessions/complete', route: pairing.completePairing },
  { plane: 'runtime', method: 'POST', path: '/runtime/v1/device-sessions', route: pairing.createDeviceSession },
  { plane: 'runtime', method: 'POST', path: '/runtime/v1/sessions', route: pairing.createRuntimeSession },
  {
    plane: 'runtime',
    method: 'POST',
    path: '/runtime/v1/browser-provisioning/exchanges',
    route: pairing.exchangeProvisioning,
  },
  // Native players (reference contract /runtime/v1/native/*): key-based pairing and identity, no cookies
  {
    plane: 'runtime',
    method: 'POST',
    path: '/runtime/v1/native/pairing-sessions',
    route: nativePairing.startNativePairingSession,
  },
  {
    plane: 'runtime',
    method: 'GET',
    path: '/runtime/v1/native/pairing-events',
    route: nativePairing.nativePairingEvents,
  },
  {
    plane: 'runtime',
    method: 'POST',
    path: '/runtime/v1/native/pairing-sessions/complete',
    route: nativePairing.completeNativePairingSession,
  },
  {
    plane: 'runtime',
    method: 'POST',
    path: '/runtime/v1/native/identity/challenges',
    route: nativePairing.createNativeIdentityChallenge,
  },
  {
    plane: 'runtime',
    method: 'POST',
    path: '/runtime/v1/native/identity/sessions',
    route: nativePairing.createNativeIdentitySession,
  },
  {
    plane: 'runtime',
    method: 'POST',
    path: '/runtime/v1/native/identity/reset',
    route: nativePairing.resetNativeIdentityRoute,
  },
  // Media (the signed PUT is the local blob store's private-storage door, authorized by its signature)
  { plane: 'control', method: 'GET', path: '/api/v1/media', route: media.listMedia },
  { plane: 'control', method: 'POST', path: '/api/v1/media/uploads', route: mediaUpload.declareMediaUpload },
  { plane: 'control', method: 'POST', path: '/api/v1/media/uploads/:id/commit', route: mediaUpload.commitMediaUpload },
  { plane: 'control', method: 'POST', path: '/api/v1/media/generations', route: mediaGeneration.generateMedia },
  { plane: 'control', method: 'GET', path: '/api/v1/media/:id', route: media.getMedia },
  { plane: 'control', method: 'PATCH', path: '/api/v1/media/:id', route: media.patchMedia },
  { plane: 'control', method: 'DELETE', path: '/api/v1/media/:id', route: media.deleteMedia },
  { plane: 'control', method: 'GET', path: '/api/v1/media/:id/content', route: media.exportMediaContent },
  { plane: 'control', method: 'PUT', path: '/private-storage/*key', route: mediaUpload.receiveSignedPut },
  // Applications
  { plane: 'control', method: 'GET', path: '/api/v1/applications', route: applications.listApplications },
  { plane: 'control', method: 'POST', path: '/api/v1/applications', route: applications.uploadApplication },
  { plane: 'control', method: 'GET', path: '/api/v1/applications/:id', route: applications.getApplication },
  { plane: 'control', method: 'DELETE', path: '/api/v1/applications/:id', route: applications.deleteApplication },
  { plane: 'control', method: 'POST', path: '/api/v1/applications/:id/releases', route: applications.uploadRelease },

  // Owner key/value (spec: Owner key/value)
  { plane: 'control', method: 'GET', path: '/api/v1/applications/:id/kv', route: ownerKv.listKv },
  { plane: 'control', method: 'GET', path: '/api/v1/applications/:id/kv/:key', route: ownerKv.getKv },
  { plane: 'control', method: 'PUT', path: '/api/v1/applications/:id/kv/:key', route: ownerKv.putKv },
  { plane: 'control', method: 'DELETE', path: '/api/v1/applications/:id/kv/:key', route: ownerKv.deleteKv },

  // Runtime plane: manifest, events, reports, launches, protected content, runtime key/value
  { plane: 'runtime', method: 'GET', path: '/runtime/v1/manifest', route: runtimeManifest.getManifest },
  { plane: 'runtime', method: 'GET', path: '/runtime/v1/events', route: runtimeEvents.runtimeEvents },
  { plane: 'runtime', method: 'POST', path: '/runtime/v1/reports', route: runtimeReports.postReport },
  { plane: 'runtime', method: 'GET', path: '/runtime/v1/time', route: runtimeTime.getTime },
  { plane: 'runtime', method: 'POST', path: '/runtime/v1/sync/advance', route: runtimeSync.postAdvance },
  { plane: 'runtime', method: 'GET', path: '/runtime/v1/sync/lan-key', route: runtimeSync.getLanKey },
  { plane: 'runtime', method: 'GET', path: '/runtime/v1/sync/barrier', route: runtimeSync.getBarrier },
  { plane: 'runtime', method: 'GET', path: '/runtime/v1/chrome', route: runtimeChrome.getChrome },
  { plane: 'runtime', method: 'POST', path: '/runtime/v1/unpair', route: runtimeUnpair.unpair },

  // Browser links: a TV's browser shows a setup code (no JavaScript needed); an agent claims it
  { plane: 'runtime', method: 'POST', path: '/runtime/v1/browser-links', route: browserLinks.startLink },
  { plane: 'runtime', method: 'GET', path: '/runtime/v1/browser-links', route: browserLinks.linkStatus },
  { plane: 'runtime', method: 'GET', path: '/runtime/v1/browser-links/events', route: browserLinks.linkEvents },
  { plane: 'runtime', method: 'GET', path: '/runtime/v1/browser-links/continue', route: browserLinks.continueLink },
  { plane: 'runtime', method: 'GET', path: '/setup', route: browserLinks.setupPage },
  { plane: 'runtime', method: 'PUT', path: '/runtime/v1/screenshot', route: runtimeScreenReports.putScreenshot },
  { plane: 'runtime', method: 'PUT', path: '/runtime/v1/observation', route: runtimeScreenReports.putObservation },
  {
    plane: 'runtime',
    method: 'POST',
    path: '/runtime/v1/manifests/:manifest_revision/releases/:release_id/launch',
    route: runtimeLaunch.launchRelease,
  },
  {
    plane: 'runtime',
    method: 'GET',
    path: '/content/v1/manifests/:manifest_revision/media/:media_id',
    route: runtimeContent.getManifestMedia,
  },
  {
    plane: 'runtime',
    method: 'GET',
    path: '/content/v1/manifests/:manifest_revision/releases/:release_id/package',
    route: runtimeContent.getManifestPackage,
  },
  { plane: 'runtime', method: 'GET', path: '/runtime/v1/apps/:application_id/kv', route: runtimeKv.listRuntimeKv },
  { plane: 'runtime', method: 'GET', path: '/runtime/v1/apps/:application_id/kv/:key', route: runtimeKv.getRuntimeKv },
  { plane: 'runtime', method: 'PUT', path: '/runtime/v1/apps/:application_id/kv/:key', route: runtimeKv.putRuntimeKv },
  {
    plane: 'runtime',
    method: 'DELETE',
    path: '/runtime/v1/apps/:application_id/kv/:key',
    route: runtimeKv.deleteRuntimeKv,
  },

  // Proof of play (issue 17): players upload what went on glass; operators and advertisers read the days
  { plane: 'runtime', method: 'POST', path: '/runtime/v1/playback', route: playback.postPlayback },
  { plane: 'control', method: 'GET', path: '/api/v1/playback', route: playback.listPlaybackRoute },

  // ---- People and access (issue 18) ----
  // Invitations, sign-in resets, billing (spec Endpoints / Projects, invitations, sign-in, enrollment)
  { plane: 'control', method: 'GET', path: '/api/v1/invitations', route: invitations.listProjectInvitations },
  { plane: 'control', method: 'POST', path: '/api/v1/invitations', route: invitations.createProjectInvitations },
  {
    plane: 'control',
    method: 'POST',
    path: '/api/v1/invitations/:id/revoke',
    route: invitations.revokeProjectInvitation,
  },
  { plane: 'control', method: 'POST', path: '/api/v1/sign-in-resets', route: resets.requestSignInReset },
  { plane: 'control', method: 'GET', path: '/api/v1/billing/balance', route: billing.getBalance },
  { plane: 'control', method: 'GET', path: '/api/v1/billing/statement', route: billing.getStatement },

  // Agent installations (spec Endpoints / Agent installations)
  { plane: 'control', method: 'POST', path: '/api/v1/agent-connections', route: agents.startAgentConnection },
  {
    plane: 'control',
    method: 'GET',
    path: '/api/v1/agent-connections/:id/events',
    route: agents.agentConnectionEvents,
  },
  {
    plane: 'control',
    method: 'POST',
    path: '/api/v1/agent-connections/:id/credential',
    route: agents.collectAgentCredential,
  },
  {
    plane: 'control',
    method: 'POST',
    path: '/api/v1/agent-connections/:id/cancel',
    route: agents.cancelAgentConnection,
  },
  { plane: 'control', method: 'POST', path: '/api/v1/agents/self/activate', route: agents.activateSelf },
  { plane: 'control', method: 'GET', path: '/api/v1/agents/self', route: agents.getSelf },
  { plane: 'control', method: 'POST', path: '/api/v1/agents/self/disconnect', route: agents.disconnectSelf },

  // Feedback (a project's bug reports and feature requests; the operators read them below)
  { plane: 'control', method: 'POST', path: '/api/v1/feedback/bugs', route: feedback.submitBug },
  { plane: 'control', method: 'GET', path: '/api/v1/feedback/bugs', route: feedback.listBugs },
  { plane: 'control', method: 'POST', path: '/api/v1/feedback/features', route: feedback.submitFeature },
  { plane: 'control', method: 'GET', path: '/api/v1/feedback/features', route: feedback.listFeatures },
  // Comments (an agent's opaque notes; no revision, no manifest)
  { plane: 'control', method: 'GET', path: '/api/v1/comment/screen/:id', route: comments.screen.get },
  { plane: 'control', method: 'PUT', path: '/api/v1/comment/screen/:id', route: comments.screen.put },
  { plane: 'control', method: 'DELETE', path: '/api/v1/comment/screen/:id', route: comments.screen.remove },
  { plane: 'control', method: 'GET', path: '/api/v1/comment/playlist/:id', route: comments.playlist.get },
  { plane: 'control', method: 'PUT', path: '/api/v1/comment/playlist/:id', route: comments.playlist.put },
  { plane: 'control', method: 'DELETE', path: '/api/v1/comment/playlist/:id', route: comments.playlist.remove },
  { plane: 'control', method: 'GET', path: '/api/v1/comment/playlist/:id/page/:page_id', route: comments.page.get },
  { plane: 'control', method: 'PUT', path: '/api/v1/comment/playlist/:id/page/:page_id', route: comments.page.put },
  {
    plane: 'control',
    method: 'DELETE',
    path: '/api/v1/comment/playlist/:id/page/:page_id',
    route: comments.page.remove,
  },

  // Operators (the operator bearer only; docs/operations.md)
  { plane: 'control', method: 'GET', path: '/operator/v1/projects', route: operators.listAllProjects },
  { plane: 'control', method: 'GET', path: '/operator/v1/projects/:id', route: operators.getAnyProject },
  { plane: 'control', method: 'POST', path: '/operator/v1/projects/:id/suspend', route: operators.suspend },
  { plane: 'control', method: 'POST', path: '/operator/v1/projects/:id/resume', route: operators.resume },
  { plane: 'control', method: 'PUT', path: '/operator/v1/projects/:id/plan', route: operators.setPlan },
  { plane: 'control', method: 'POST', path: '/operator/v1/projects/:id/credit-grants', route: operators.grant },
  { plane: 'control', method: 'GET', path: '/operator/v1/feedback', route: feedback.inbox },

  // Dashboard API (`/dashboard/v1/*`, the dashboard cookie only; docs/dashboard-api.md)
  { plane: 'dashboard', method: 'POST', path: '/dashboard/v1/sign-in', route: signIn.signIn },
  { plane: 'dashboard', method: 'POST', path: '/dashboard/v1/webauthn/assertions', route: signIn.startPasskeySignIn },
  {
    plane: 'dashboard',
    method: 'POST',
    path: '/dashboard/v1/webauthn/assertions/complete',
    route: signIn.completePasskeySignIn,
  },
  {
    plane: 'dashboard',
    method: 'POST',
    path: '/dashboard/v1/webauthn/registrations',
    route: signIn.startPasskeyRegistration,
  },
  {
    plane: 'dashboard',
    method: 'POST',
    path: '/dashboard/v1/webauthn/registrations/complete',
    route: signIn.completePasskeyRegistration,
  },
  { plane: 'dashboard', method: 'GET', path: '/dashboard/v1/session', route: signIn.getSession },
  { plane: 'dashboard', method: 'PUT', path: '/dashboard/v1/session/project', route: signIn.selectProject },
  { plane: 'dashboard', method: 'POST', path: '/dashboard/v1/logout', route: signIn.logout },
  { plane: 'dashboard', method: 'GET', path: '/dashboard/v1/sessions', route: signIn.listMySessions },
  { plane: 'dashboard', method: 'POST', path: '/dashboard/v1/sessions/:id/revoke', route: signIn.revokeMySession },
  { plane: 'dashboard', method: 'GET', path: '/dashboard/v1/projects', route: signIn.listMyProjects },
  { plane: 'dashboard', method: 'GET', path: '/dashboard/v1/members', route: signIn.listMembers },
  { plane: 'dashboard', method: 'GET', path: '/dashboard/v1/balance', route: billing.getDashboardBalance },
  {
    plane: 'dashboard',
    method: 'POST',
    path: '/dashboard/v1/invitations/claim',
    route: invitations.claimDashboardInvitation,
  },
  // A dashboard link is a ten-minute member link invitation: its claim is the invitation's.
  {
    plane: 'dashboard',
    method: 'POST',
    path: '/dashboard/v1/links/claim',
    route: invitations.claimDashboardInvitation,
  },
  { plane: 'dashboard', method: 'POST', path: '/dashboard/v1/invitations/accept', route: invitations.acceptAsSignedIn },
  { plane: 'dashboard', method: 'POST', path: '/dashboard/v1/signup/email', route: invitations.sendSignupCode },
  {
    plane: 'dashboard',
    method: 'POST',
    path: '/dashboard/v1/signup/email/verify',
    route: invitations.verifySignupCode,
  },
  { plane: 'dashboard', method: 'POST', path: '/dashboard/v1/signup/password', route: invitations.signupWithPassword },
  {
    plane: 'dashboard',
    method: 'POST',
    path: '/dashboard/v1/sign-in-resets',
    route: resets.requestSignInResetFromDashboard,
  },
  { plane: 'dashboard', method: 'POST', path: '/dashboard/v1/sign-in-resets/claim', route: resets.claimSignInReset },
  {
    plane: 'dashboard',
    method: 'POST',
    path: '/dashboard/v1/sign-in-resets/password',
    route: resets.resetWithPassword,
  },
  {
    plane: 'dashboard',
    method: 'GET',
    path: '/dashboard/v1/agent-connections/:id',
    route: agents.showConnectionForApproval,
  },
  {
    plane: 'dashboard',
    method: 'POST',
    path: '/dashboard/v1/agent-connections/:id/approve',
    route: agents.approveAgentConnection,
  },
  {
    plane: 'dashboard',
    method: 'POST',
    path: '/dashboard/v1/agent-connections/:id/deny',
    route: agents.denyAgentConnection,
  },

  // ---- The dashboard (issue 19) ----
  // Project routes: twins of /api/v1 routes (the same handlers behind the session cookie, unmetered,
  // events naming the person as actor; server/dashboard/dashboard-twin.ts). Same shapes as /api/v1.
  ...dashboardTwins([
    ['GET', '/screens', screens.listScreens],
    ['POST', '/screens/pair', pairing.pairScreen],
    ['GET', '/screens/:id', screens.getScreen],
    ['PATCH', '/screens/:id', screens.patchScreen],
    ['POST', '/screens/:id/archive', screens.archiveScreen],
    ['POST', '/screens/:id/unarchive', screens.unarchiveScreen],
    ['POST', '/screens/:id/reload', screens.reloadScreen],
    ['POST', '/screens/:id/toast', fleet.toastScreen],
    // Fleet control and screenshots (the same routes an agent calls; fleet internals stay server/fleet/)
    ['DELETE', '/screens/:id', screens.deleteScreen],
    ['POST', '/screens/:id/recovery/confirm', recovery.confirmScreenRecovery],
    ['POST', '/screens/actions', fleet.screenActions],
    ['GET', '/screens/:id/playlist-schedule', fleet.getPlaylistSchedule],
    ['PUT', '/screens/:id/playlist-schedule', fleet.putPlaylistSchedule],
    ['DELETE', '/screens/:id/playlist-schedule', fleet.deletePlaylistSchedule],
    ['POST', '/screens/:id/takeover', fleet.startTakeover],
    ['POST', '/screens/:id/takeover/clear', fleet.clearTakeover],
    ['POST', '/screens/:id/reboot', fleet.rebootScreen],
    ['GET', '/screens/:id/display', fleet.getDisplay],
    ['POST', '/screens/:id/display', fleet.setDisplay],
    ['POST', '/screens/:id/display/clear', fleet.clearDisplay],
    ['PUT', '/screens/:id/display-schedule', fleet.putDisplaySchedule],
    ['DELETE', '/screens/:id/display-schedule', fleet.deleteDisplaySchedule],
    ['POST', '/screens/:id/screenshot', screenshots.requestScreenScreenshot],
    ['GET', '/screens/:id/screenshot', screenshots.getScreenScreenshot],
    ['GET', '/screens/:id/screenshot/status', screenshots.getScreenScreenshotStatus],
    // Playlists: read only (spec: the dashboard does not author playlists; it assigns them to screens)
    ['GET', '/playlists', playlists.v1.list],
    ['GET', '/playlists/:id', playlists.v1.get],
    // Media: the same upload flow as agents (declare, signed PUT, commit, wait on the operation)
    ['GET', '/media', media.listMedia],
    ['POST', '/media/uploads/:id/commit', mediaUpload.commitMediaUpload],
    ['GET', '/media/:id', media.getMedia],
    ['DELETE', '/media/:id', media.deleteMedia],
    ['GET', '/media/:id/content', media.exportMediaContent],
    ['GET', '/operations/:id', operations.getOperation],
    ['GET', '/events', events.listEvents],
    ['GET', '/events/stream', events.streamEvents],
    ['GET', '/invitations', invitations.listProjectInvitations],
    ['POST', '/invitations', invitations.createProjectInvitations],
    ['POST', '/invitations/:id/revoke', invitations.revokeProjectInvitation],
    // Applications, their key/value stores and proof of play (the same routes an agent calls)
    ['GET', '/applications', applications.listApplications],
    ['POST', '/applications', applications.uploadApplication],
    ['GET', '/applications/:id', applications.getApplication],
    ['DELETE', '/applications/:id', applications.deleteApplication],
    ['POST', '/applications/:id/releases', applications.uploadRelease],
    ['GET', '/applications/:id/kv', ownerKv.listKv],
    ['GET', '/applications/:id/kv/:key', ownerKv.getKv],
    ['PUT', '/applications/:id/kv/:key', ownerKv.putKv],
    ['DELETE', '/applications/:id/kv/:key', ownerKv.deleteKv],
    ['GET', '/playback', playback.listPlaybackRoute],
  ]),
  // The dashboard's media declaration stamps the upload for the dashboard origin (dashboard-media.ts)
  { plane: 'dashboard', method: 'POST', path: '/dashboard/v1/media/uploads', route: declareDashboardUpload },
  // The local blob store's signed-PUT door, also on the dashboard origin (dashboard-media.ts)
  { plane: 'dashboard', method: 'PUT', path: '/private-storage/*key', route: mediaUpload.receiveSignedPut },

  // The access page keeps the link flows (invitations, resets: the app sends `#invite=`/`#reset=` to
  // /access) and agent approval; the dashboard app is every other page.
  { plane: 'dashboard', method: 'GET', path: '/connect/:id', route: accessPages.accessPage },
  { plane: 'dashboard', method: 'GET', path: '/access', route: accessPages.accessPage },
  { plane: 'dashboard', method: 'GET', path: '/access/:file', route: accessPages.accessAsset },
  { plane: 'dashboard', method: 'GET', path: '/assets/:file', route: dashboardAsset },
  ...DASHBOARD_PAGES.map((path): RouteEntry => ({ plane: 'dashboard', method: 'GET', path, route: dashboardShell })),

  // Release hosts (GET also answers HEAD; any other method is refused with 403 in app.ts)
  { plane: 'release', method: 'GET', path: PLAYER_ORIGIN_PATH, route: releaseHost.releasePlayerOrigin },
  { plane: 'release', method: 'GET', path: '/{*asset_path}', route: releaseHost.releaseAsset },
]);

/** `/dashboard/v1` twins of `/api/v1` routes: the same handlers behind the session cookie (dashboard-twin.ts). */
function dashboardTwins(
  twins: readonly (readonly [RouteEntry['method'], string, RouteEntry['route']])[],
): RouteEntry[] {
  return twins.map(([method, path, route]) => ({
    plane: 'dashboard',
    method,
    path: `/dashboard/v1${path}`,
    route: onDashboard(route),
  }));
}
