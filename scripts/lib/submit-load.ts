/**
 * bench:submit's load (and its probes'): the fixture swaps that leave an arbitrage, each re-signed
 * by a devnet account the service does not sign backruns with, nonce 0, distinct by priority fee.
 */
import { readFileSync } from 'node:fs'
import { parseTransaction, type Hex } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { DEVNET_SEARCHER_ACCOUNT_INDEX } from '../../src/node/submission.ts'

export const registry = JSON.parse(readFileSync('fixtures/devnet/registry.json', 'utf8')) as {
  chainId: number
  devAccounts: { searcherIndexes?: number[]; accounts: Array<{ index: number; address: string; privateKey: Hex }> }
}

interface FixtureTx {
  name: string
  raw: Hex
  createsArbitrage: boolean
  expected: { status: number }
}

/** the devnet accounts the service does not sign backruns with (read from the registry at run time) */
export function senderAccounts(): ReturnType<typeof privateKeyToAccount>[] {
  const reserved = new Set(registry.devAccounts.searcherIndexes ?? [DEVNET_SEARCHER_ACCOUNT_INDEX])
  return registry.devAccounts.accounts.filter((a) => !reserved.has(a.index)).map((a) => privateKeyToAccount(a.privateKey))
}

/**
 * The background load: the fixture swaps that leave an arbitrage (fixtures/txs), each re-signed by
 * a distinct devnet account with nonce 0 on the head, so every one passes the dispatcher's
 * simulation and has its backrun searched, signed and bundled. Senders rotate over every
 * non-searcher account; the i-th submission of a sender differs from its others by its priority
 * fee (distinct hashes), and the relay never lands anything, so nonce 0 stays valid all run.
 */
export async function signSwaps(count: number, offset: number): Promise<Hex[]> {
  const swaps = (JSON.parse(readFileSync('fixtures/txs/transactions.json', 'utf8')) as { transactions: FixtureTx[] }).transactions
    .filter((f) => f.createsArbitrage && f.expected.status === 1)
    .map((f) => parseTransaction(f.raw))
  const senders = senderAccounts()
  const out: Hex[] = []
  for (let k = 0; k < count; k++) {
    const i = offset + k
    const swap = swaps[i % swaps.length]
    const account = senders[Math.floor(i / swaps.length) % senders.length]
    const round = BigInt(Math.floor(i / (swaps.length * senders.length)))
    out.push(
      await account.signTransaction({
        chainId: registry.chainId,
        type: 'eip1559',
        nonce: 0,
        to: swap.to!,
        data: swap.data,
        value: swap.value ?? 0n,
        gas: swap.gas!,
        maxFeePerGas: 100_000_000_000n,
        maxPriorityFeePerGas: 1_000_000_000n + round,
      }),
    )
  }
  return out
}

