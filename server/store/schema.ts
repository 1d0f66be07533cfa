// The database as Kysely sees it: every feature's tables, declared beside the feature that owns them.
import type { TenantTables } from '../tenants/tenants.tables';
import type { IdempotencyTables } from '../http/idempotency.tables';
import type { OperationTables } from '../operations/operations.tables';
import type { EventTables } from '../events/events.tables';
import type { ApplicationTables } from '../applications/applications.tables';
import type { MediaTables } from '../media/media.tables';
import type { PlaylistTables } from '../playlists/playlists.tables';
import type { ScreenTables } from '../screens/screens.tables';
import type { PairingTables } from '../pairing/pairing.tables';
import type { ReleaseHostTables } from '../release-host/release-host.tables';
import type { RuntimeTables } from '../runtime/runtime.tables';
import type { KvTables } from '../kv/kv.tables';
import type { MemberTables } from '../members/members.tables';
import type { SignInTables } from '../sign-in/sign-in.tables';
import type { InvitationTables } from '../invitations/invitations.tables';
import type { AgentTables } from '../agents/agents.tables';
import type { OperatorTables } from '../operators/operators.tables';
import type { NativeIdentityTables } from '../pairing/native-identity.tables';
import type { FleetTables } from '../fleet/fleet.tables';
import type { FeedbackTables } from '../feedback/feedback.tables';
import type { BrowserLinkTables } from '../pairing/browser-links.tables';
import type { PlaybackTables } from '../playback/playback.tables';
import type { ScreenHealthTables } from '../screens/screen-health.tables';
import type { ReplicaTables } from '../replicas/replicas.tables';

export interface Database
  extends TenantTables,
    IdempotencyTables,
    OperationTables,
    EventTables,
    ApplicationTables,
    MediaTables,
    ReleaseHostTables,
    PlaylistTables,
    ScreenTables,
    PairingTables,
    RuntimeTables,
    KvTables,
    MemberTables,
    SignInTables,
    InvitationTables,
    AgentTables,
    OperatorTables,
    NativeIdentityTables,
    FeedbackTables,
    PlaybackTables,
    ScreenHealthTables,
    FleetTables,
    BrowserLinkTables,
    ReplicaTables {}
