// Every route Marquee serves, by plane. Policies (auth, area, idempotency, ...) live with handlers.
import type { RouteEntry } from './http/dispatch';
import * as media from './media/media.routes';
import * as mediaGeneration from './media/media-generation.routes';
import * as mediaUpload from './media/media-upload.routes';
import * as operations from './operations/operations.routes';
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
];
