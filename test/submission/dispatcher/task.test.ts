/**
 * A task carries the tip cap of its user txs from the moment it is taken on (read from their RLP
 * fields, no decode): a backrun bids over every open submission's tip (Replanning.tipFloor), also
 * those whose first simulation is still queued behind the block's other submissions.
 */
import { privateKeyToAccount } from 'viem/accounts'
import { describe, expect, it } from 'vitest'

import { newTask } from '../../../src/submission/dispatcher/task.ts'
import { submissionId, type StoredSubmission } from '../../../src/submission/types.ts'
import type { Hex } from '../../../src/chain/types.ts'

const account = privateKeyToAccount('0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80')

const sign = (nonce: number, tip: bigint): Promise<Hex> =>
  account.signTransaction({ type: 'eip1559', chainId: 1, nonce, to: '0x000000000000000000000000000000000000dEaD', gas: 21_000n, maxFeePerGas: 100_000_000_000n, maxPriorityFeePerGas: tip }) as Promise<Hex>

function stored(rawTxs: Hex[]): StoredSubmission {
  const hash = `0x${'ab'.repeat(32)}` as Hex
  return { record: { id: submissionId('bundle', hash), kind: 'bundle', hash, partnerId: 'p', receivedAt: 0, rawTxs, txHashes: rawTxs.map(() => hash) }, events: [{ type: 'received', at: 0 }] }
}

describe('newTask', () => {
  it('the highest tip cap among its txs, before any simulation, and not yet decoded', async () => {
    const task = newTask(stored([await sign(0, 3_000_000_000n), await sign(1, 7_000_000_000n), await sign(2, 1n)]))
    expect(task.userTipCap).toBe(7_000_000_000n)
    expect(task.decodeChecked).toBe(false)
    expect(task.simulatedFor).toBeUndefined()
  })

  it('decoded as it was accepted: the tip cap the accepting call read is taken, the txs are not read again', () => {
    // '0x02c0' does not parse: a tip cap here can only come from the accepting call
    const task = newTask(stored(['0x02c0' as Hex]), { tipCap: 5n })
    expect(task.userTipCap).toBe(5n)
    expect(task.decodeChecked).toBe(true)
  })

  it('txs whose fields do not parse: no tip cap (the floor leaves them out), and the task is still made', () => {
    const task = newTask(stored(['0x02c0' as Hex]))
    expect(task.userTipCap).toBeUndefined()
  })
})
