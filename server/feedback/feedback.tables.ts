/** One bug report or feature request a project sent; the operators read them all. */
export interface FeedbackTable {
  id: string;
  tenant_id: string;
  kind: 'bug' | 'feature';
  title: string;
  body: string;
  /** JSON of the optional context (CLI version, platform, command); `{}` when none was sent. */
  context: string;
  created_at: number;
}

export interface FeedbackTables {
  feedback: FeedbackTable;
}
