/**
 * @deprecated A bridge for the scripts that still read the flat configuration of before the
 * sections (scripts/lib/soak-pending.ts, scripts/lib/naive-quoter.ts): loadConfig, plus the few
 * flat fields they read, under their old names. Nothing in src/ uses it. Remove it once they read
 * the sections (`config.chain.hardfork`, `config.devnet.registryPath`, `config.backrun.refundBps`,
 * `config.backrun.priorityFeeWei`, `config.submission.expiryBlocks`,
 * `config.submission.maxPendingSubmissions`).
 */
import type { Hardfork, ServiceConfig } from '../config.ts'
import { loadConfig, type LoadConfigOptions } from './config.ts'

/** @deprecated the old flat names of a few sectioned values (copies: changing one changes nothing) */
export interface LegacyFlatFields {
  /** config.chain.hardfork */
  hardfork: Hardfork
  /** config.devnet.registryPath */
  devnetRegistryPath: string
  /** config.backrun.refundBps */
  backrunRefundBps: number
  /** config.backrun.priorityFeeWei */
  backrunPriorityFeeWei: bigint
  /** config.submission.expiryBlocks */
  submissionExpiryBlocks: number
  /** config.submission.maxPendingSubmissions */
  maxPendingSubmissions: number
}

/** @deprecated loadConfig, plus the old flat names of a few values; see the module comment */
export function loadLegacyConfig(env: Readonly<Record<string, string | undefined>>, options?: LoadConfigOptions): ServiceConfig & LegacyFlatFields {
  const config = loadConfig(env, options)
  return {
    ...config,
    hardfork: config.chain.hardfork,
    devnetRegistryPath: config.devnet.registryPath,
    backrunRefundBps: config.backrun.refundBps,
    backrunPriorityFeeWei: config.backrun.priorityFeeWei,
    submissionExpiryBlocks: config.submission.expiryBlocks,
    maxPendingSubmissions: config.submission.maxPendingSubmissions,
  }
}
