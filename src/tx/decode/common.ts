/**
 * The ethereumjs Common a transaction is decoded with: the caller's (the VM's own), or one per
 * chain id and hardfork, made once.
 */
import { Common, Hardfork, Mainnet, createCustomCommon } from '@ethereumjs/common'

import { CUSTOM_CRYPTO } from '../../crypto/ecrecover.ts'
import type { DecodeTransactionOptions } from './types.ts'

export const DEFAULT_TX_HARDFORK = 'prague'

const KNOWN_HARDFORKS = new Set<string>(Object.values(Hardfork))
const commonCache = new Map<string, Common>()

export function resolveCommon(options: DecodeTransactionOptions): Common {
  if (options.common !== undefined) {
    if (options.common.chainId() !== options.chainId) {
      throw new RangeError(
        `decodeSignedTransaction: options.common is for chain ${options.common.chainId()}, options.chainId is ${options.chainId}`,
      )
    }
    return options.common
  }
  const hardfork = options.hardfork ?? DEFAULT_TX_HARDFORK
  if (!KNOWN_HARDFORKS.has(hardfork)) {
    throw new RangeError(`decodeSignedTransaction: unknown hardfork ${JSON.stringify(hardfork)}`)
  }
  const key = `${options.chainId}:${hardfork}`
  let common = commonCache.get(key)
  if (common === undefined) {
    // ethereumjs copies the Common into every transaction, so one cached instance is never mutated.
    common =
      options.chainId === 1n
        ? new Common({ chain: Mainnet, hardfork, customCrypto: CUSTOM_CRYPTO })
        : createCustomCommon({ chainId: options.chainId.toString(), name: `chain-${options.chainId}` }, Mainnet, { hardfork, customCrypto: CUSTOM_CRYPTO })
    commonCache.set(key, common)
  }
  return common
}
