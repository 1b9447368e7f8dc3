/** What the parent asks of the keeper (its first IPC message), and what the keeper answers. */
export interface KeeperRequest {
  /** The cluster's folder: data/, password, postgres.log. */
  directory: string;
  port: number;
}

export type KeeperMessage =
  { kind: 'ready'; passwordFile: string; logFile: string } | { kind: 'failed'; reason: string } | { kind: 'stopped' };
