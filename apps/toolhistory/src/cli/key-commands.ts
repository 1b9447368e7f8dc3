import { AppError, ErrorCode } from '@toolhistory/errors';
import { rotateDataKeys } from '@toolhistory/encryption';
import { PostgresPayloadExpiry } from '@toolhistory/persistence';
import type { Encryption } from '../encryption/open-encryption';
import { loadPolicyFile } from '../policy/load-policy-file';
import { RetentionStatus } from '../retention/retention-status';
import type { CliContext, CliOutput } from './cli-context';

async function encryptionOf(context: CliContext): Promise<Encryption> {
  const encryption = await context.encryption();
  if (encryption === null)
    throw new AppError(ErrorCode.InvalidConfig, 'no keyring and key store are configured (ENCRYPTION_KEYRING_FILE, KEYSTORE_URL)');
  return encryption;
}

/**
 * `keys rotate`: every data key wrapped again by the keyring's active key;
 * payloads are not touched. Says which keys no data key needs any more.
 */
export async function rotateKeys(context: CliContext, output: CliOutput): Promise<void> {
  const { keys, keyring } = await encryptionOf(context);
  const rotation = await rotateDataKeys(keys, keyring);
  output.out(`rewrapped ${rotation.rewrapped} data key(s) with ${keyring.activeKeyId}`);
  const left = Object.entries(rotation.left);
  for (const [kekId, count] of left) output.out(`${count} data key(s) still wrapped by ${kekId}: run keys rotate again`);
  const free = keyring.keyIds.filter((id) => id !== keyring.activeKeyId && rotation.left[id] === undefined);
  if (free.length > 0) output.out(`no data key needs ${free.join(', ')} any more: it may leave the keyring (and be destroyed)`);
}

/** `retention status`: the policy's retention, and what the sweeper has due now and next. */
export async function retentionStatus(context: CliContext, output: CliOutput, options: { json?: boolean }): Promise<void> {
  const encryption = await encryptionOf(context);
  const report = await new RetentionStatus(
    new PostgresPayloadExpiry(context.database(), encryption.vault),
    encryption.keys,
    loadPolicyFile(context.config.policyFile).retention,
  ).execute();
  if (options.json) return output.out(JSON.stringify(report));
  const { policy, payloads, keys } = report;
  const levels = [
    ...(policy.defaults === null ? [] : [`defaults ${policy.defaults}`]),
    ...Object.entries(policy.tenants).map(([k, v]) => `tenant ${k} ${v}`),
    ...Object.entries(policy.channels).map(([k, v]) => `channel ${k} ${v}`),
    ...Object.entries(policy.tools).map(([k, v]) => `tool ${k} ${v}`),
  ];
  output.out(`retention: ${levels.length === 0 ? 'none (payloads kept until erased)' : levels.join(', ')}`);
  output.out(
    `payloads: ${payloads.duePayloads} due now, ${payloads.expiringPayloads - payloads.duePayloads} expiring later` +
      `${payloads.nextExpiry ? ` (next at ${payloads.nextExpiry})` : ''}, ${payloads.expiredPayloads} expired so far`,
  );
  const wrapped = Object.entries(keys.byKek).map(([kek, n]) => `${n} wrapped by ${kek}`);
  output.out(
    `data keys: ${wrapped.length === 0 ? 'none' : wrapped.join(', ')}; ${keys.due} due now, ${keys.expiring - keys.due} expiring later` +
      `${keys.nextExpiry ? ` (next at ${keys.nextExpiry})` : ''}`,
  );
}
