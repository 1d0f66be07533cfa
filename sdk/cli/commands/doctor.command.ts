// `marquee doctor`: is the server reachable and ready, does the stored credential work, do the
// clocks agree, do the versions fit, and is the local setup sound. It never enrolls.
import type { MarqueeClient } from '../../client/marquee-client';
import { API_VERSION } from '../../contract/limits';
import { command } from '../command';
import { CliFailure, EXIT, failureOf, type ExitCode } from '../exit-codes';
import { fields, table } from '../output';
import { findOnPath } from '../transcode';
import { CLI_VERSION } from '../version';

/** Beyond this, expiry times the server sends (ten-minute links, 30 s tickets) read wrong here. */
export const CLOCK_SKEW_WARN_MS = 30_000;

type Status = 'ok' | 'warn' | 'fail';
interface Check {
  name: string;
  status: Status;
  detail: string;
}

interface DoctorReport {
  api_url: string;
  cli_version: string;
  cli_api_version: string;
  server: { version: string; commit: string; api_version: string; protocol_version: string } | null;
  clock_skew_ms: number | null;
  project_id: string | null;
  checks: Check[];
}

/** The major.minor of a version ("0.2.0" → "0.2"): a difference there may change shapes. */
const minorOf = (version: string) => version.split('.').slice(0, 2).join('.');

export const doctorCommand = command({
  name: 'doctor',
  summary: 'check the server, the credential, the clocks and the versions',
  async run(ctx) {
    const checks: Check[] = [];
    let firstFailure: ExitCode | undefined;
    const add = (name: string, status: Status, detail: string, exitCode?: ExitCode) => {
      checks.push({ name, status, detail });
      if (status === 'fail') firstFailure ??= exitCode ?? EXIT.unexpected;
    };
    const attempt = async <T>(name: string, fn: () => Promise<T>): Promise<T | undefined> => {
      try {
        return await fn();
      } catch (error) {
        if (ctx.signal.aborted) throw error;
        const { exitCode, error: report } = failureOf(error, false);
        add(name, 'fail', `${report.code}: ${report.detail}`, exitCode);
        return undefined;
      }
    };
    const report: DoctorReport = {
      api_url: ctx.apiUrl,
      cli_version: CLI_VERSION,
      cli_api_version: API_VERSION,
      server: null,
      clock_skew_ms: null,
      project_id: null,
      checks,
    };

    const permission = await ctx.config.permissionProblem();
    const stored = await attempt('config', () => ctx.config.read());
    if (stored) add('config', permission ? 'warn' : 'ok', permission ?? ctx.config.path);

    const anonymous = ctx.publicClient();
    const started = Date.now();
    const health = await attempt('reachable', () => anonymous.status.health());
    if (health) add('reachable', 'ok', `${ctx.apiUrl} answered in ${Date.now() - started} ms`);
    if (health) {
      const ready = await attempt('ready', () => anonymous.status.ready());
      if (ready)
        add(
          'ready',
          ready.data.degraded.length > 0 ? 'warn' : 'ok',
          ready.data.degraded.length > 0 ? `degraded: ${ready.data.degraded.join(', ')}` : 'ready',
        );
      const version = await attempt('version', () => anonymous.status.version());
      if (version) {
        report.server = version.data;
        const fits = minorOf(version.data.api_version) === minorOf(API_VERSION);
        add(
          'version',
          fits ? 'ok' : 'warn',
          `server ${version.data.version} (${version.data.commit}), API ${version.data.api_version}; CLI ${CLI_VERSION} speaks API ${API_VERSION}` +
            (fits ? '' : ': some commands may not fit this server'),
        );
      }
      const capabilities = await attempt('capabilities', () => anonymous.status.capabilities());
      if (capabilities) {
        const on = Object.entries(capabilities.data.features).filter(([, enabled]) => enabled);
        add(
          'capabilities',
          'ok',
          on.length > 0 ? `features: ${on.map(([name]) => name).join(', ')}` : 'no optional features',
        );
      }
      const samples = ctx.serverDates;
      if (samples.length > 0) {
        // The Date header has whole seconds: take the sample closest to agreement.
        const skews = samples.map((s) => s.serverMs - s.localMs);
        const skew = skews.reduce((a, b) => (Math.abs(b) < Math.abs(a) ? b : a));
        report.clock_skew_ms = skew;
        const seconds = (skew / 1000).toFixed(1);
        add(
          'clock',
          Math.abs(skew) > CLOCK_SKEW_WARN_MS ? 'warn' : 'ok',
          Math.abs(skew) > CLOCK_SKEW_WARN_MS
            ? `this machine's clock is ${seconds} s off the server's: expiry times will read wrong; sync it (NTP)`
            : `within ${Math.max(1, Math.ceil(Math.abs(skew) / 1000))} s of the server`,
        );
      }
      const token = stored?.servers[ctx.apiUrl]?.token;
      if (!token)
        add('credential', 'warn', `none for ${ctx.apiUrl} yet; the first command that needs one enrolls (--email)`);
      else {
        const project = await attempt('credential', async () => {
          const client: MarqueeClient = await ctx.client();
          return client.project.get();
        });
        if (project) {
          report.project_id = project.data.id;
          add('credential', 'ok', `project ${project.data.id} (${project.data.name})`);
        }
      }
    }

    const ffmpeg = await findOnPath('ffmpeg');
    add(
      'ffmpeg',
      'ok',
      ffmpeg ? `${ffmpeg} (media upload --transcode)` : 'not on the PATH (only needed to transcode media)',
    );

    if (firstFailure !== undefined) {
      const failed = checks.filter((c) => c.status === 'fail');
      throw new CliFailure(firstFailure, 'doctor_failed', failed.map((c) => `${c.name}: ${c.detail}`).join('; '), {
        checks,
        hint: failed.some((c) => c.name === 'reachable')
          ? `is the server running at ${ctx.apiUrl}? (npm start)`
          : undefined,
      });
    }
    return report;
  },
  human: (report) => [
    fields(['server', report.api_url], ['CLI', `${report.cli_version} (API ${report.cli_api_version})`]),
    table(
      ['check', 'status', 'detail'],
      report.checks.map((c) => [c.name, c.status, c.detail]),
    ),
  ],
});
