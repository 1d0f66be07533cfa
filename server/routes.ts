// Every route Marquee serves, by plane. Policies (auth, area, idempotency, ...) live with handlers.
import type { RouteEntry } from './http/dispatch';
import * as applications from './applications/applications.routes';
import * as operations from './operations/operations.routes';
import * as releaseHost from './release-host/release-host.routes';
import * as problems from './status/problem-pages.routes';
import * as status from './status/status.routes';
import * as tenants from './tenants/tenants.routes';

export const routeTable: RouteEntry[] = [
  // Status (spec: Endpoints / Status)
  { plane: 'control', method: 'GET', path: '/.health', route: status.health },
  { plane: 'control', method: 'GET', path: '/.ready', route: status.ready },
  { plane: 'control', method: 'GET', path: '/.version', route: status.version },
  { plane: 'control', method: 'GET', path: '/api/v1/capabilities', route: status.capabilities },
  { plane: 'control', method: 'GET', path: '/problems/:slug', route: problems.problemPage },

  // Accounts (Model A)
  { plane: 'control', method: 'POST', path: '/api/v1/accounts', route: tenants.createAccount },
  { plane: 'control', method: 'GET', path: '/api/v1/account', route: tenants.getAccount },
  { plane: 'control', method: 'POST', path: '/api/v1/account/credential-issuances/:id/ack', route: tenants.ackCredentialIssuance },

  // Enrollment and projects (Model P)
  { plane: 'control', method: 'POST', path: '/api/v1/enrollments', route: tenants.enroll },
  { plane: 'control', method: 'GET', path: '/api/v1/project', route: tenants.getProject },
  { plane: 'control', method: 'PATCH', path: '/api/v1/project', route: tenants.patchProject },
  { plane: 'control', method: 'GET', path: '/api/v1/project/capabilities', route: tenants.getProjectCapabilities },

  // Operations
  { plane: 'control', method: 'GET', path: '/api/v1/operations/:id', route: operations.getOperation },
  { plane: 'control', method: 'POST', path: '/api/v1/operations/:id/cancel', route: operations.cancelOperation },

  // Applications
  { plane: 'control', method: 'GET', path: '/api/v1/applications', route: applications.listApplications },
  { plane: 'control', method: 'POST', path: '/api/v1/applications', route: applications.uploadApplication },
  { plane: 'control', method: 'GET', path: '/api/v1/applications/:id', route: applications.getApplication },
  { plane: 'control', method: 'DELETE', path: '/api/v1/applications/:id', route: applications.deleteApplication },
  { plane: 'control', method: 'POST', path: '/api/v1/applications/:id/releases', route: applications.uploadRelease },

  // Release hosts (GET also answers HEAD; any other method is refused with 403 in app.ts)
  { plane: 'release', method: 'GET', path: '/{*asset_path}', route: releaseHost.releaseAsset },
];
