/**
 * The Common every decoded transaction is built with, prepared once per base Common.
 *
 * ethereumjs' transaction constructor copies the Common it is given and applies its transaction
 * parameters to the copy (`updateParams(paramsTx)`: a JSON round trip of each EIP's parameters
 * and a rebuilt parameter cache; twice for a legacy transaction). On the acknowledgement path that
 * was most of a decode's CPU after sender recovery and ~100 KB of garbage per transaction (scratch
 * micro-benchmark, BENCHMARKS.md "Private submission", ninth session), and every copy was then
 * thrown away for the first transaction's one anyway (transactions of one Common kept equal
 * copies). So the copy with the transaction parameters applied is made here once, and the
 * constructor is handed a handle whose `copy()` returns it; applying `paramsTx` again to it is
 * skipped while nothing else changed its parameters since (the result would be the same object
 * contents).
 *
 * The shared Common also hashes with the native keccak (src/crypto/keccak.ts) where its binding
 * loads: the signing hash every sender recovery needs was noble's JavaScript keccak, a fifth of a
 * decode's CPU. It is the transaction's Common only: the VM's own Common and its EVM keep theirs.
 *
 * The one change ethereumjs makes to a transaction's Common later is runTx's `setHardfork` to its
 * block's hardfork when they differ (the same for every transaction of that chain); a shared Common
 * found on another hardfork than its base is replaced by a fresh one, so a new transaction always
 * starts on its base's hardfork, as a copy of the base would.
 */
import type { Common } from '@ethereumjs/common'
import { paramsTx } from '@ethereumjs/tx'

import { wasmKeccak256 } from '../../crypto/keccak.ts'

interface Prepared {
  /** what the constructor is given: its copy() is `shared` */
  handle: Common
  /** the Common every transaction built through `handle` holds */
  shared: Common
}

const prepared = new WeakMap<Common, Prepared>()

/** The Common to hand to an ethereumjs transaction factory for transactions of `base`. */
export function transactionCommonHandle(base: Common): Common {
  let entry = prepared.get(base)
  if (entry === undefined || entry.shared.hardfork() !== base.hardfork()) {
    entry = prepare(base)
    prepared.set(base, entry)
  }
  return entry.handle
}

function prepare(base: Common): Prepared {
  const shared = base.copy()
  const updateParams = shared.updateParams
  const resetParams = shared.resetParams
  // true while the last parameter change of `shared` was paramsTx itself
  let txParamsApplied = false
  Object.defineProperties(shared, {
    updateParams: {
      value(this: Common, params: Parameters<Common['updateParams']>[0]): void {
        if (this === shared && params === paramsTx && txParamsApplied) return
        updateParams.call(this, params)
        if (this === shared) txParamsApplied = params === paramsTx
      },
      writable: true,
      configurable: true,
    },
    resetParams: {
      value(this: Common, params: Parameters<Common['resetParams']>[0]): void {
        resetParams.call(this, params)
        if (this === shared) txParamsApplied = false
      },
      writable: true,
      configurable: true,
    },
  })
  shared.updateParams(paramsTx)
  if (wasmKeccak256 !== undefined && base.customCrypto.keccak256 === undefined) {
    ;(shared as { customCrypto: Common['customCrypto'] }).customCrypto = { ...base.customCrypto, keccak256: wasmKeccak256 }
  }
  const handle = Object.create(shared, { copy: { value: () => shared } }) as Common
  return { handle, shared }
}
