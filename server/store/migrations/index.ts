// Numbered migrations, applied in name order at start. Never edit one that has shipped; add the next.
import type { Migration } from 'kysely';
import * as m0001 from './0001-foundation';

export const migrations: Record<string, Migration> = {
  '0001-foundation': m0001,
};
