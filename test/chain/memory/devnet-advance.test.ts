/**
 * The embedded devnet advances: committing a simulated block makes a new head whose reader is the
 * previous state plus the block's changes, with the EIP-1559 base fee following the gas used,
 * a deterministic hash, listeners told, and readers of older heads pinned to their own block.
 * The layered readers agree with a plain model of the state through any mix of writes, clears,
 * deletions, overlay forks and flattening.
 */
import { createAddressFromString, KECCAK256_NULL, bigIntToBytes, setLengthLeft } from '@ethereumjs/util'
import { keccak_256 } from '@noble/hashes/sha3.js'
import fc from 'fast-check'
import { decodeFunctionResult, encodeFunctionData, parseAbi } from 'viem'
import { describe, expect, it } from 'vitest'
import { DevnetCommitError, DevnetStateSource } from '../../../src/chain/memory/devnet-source.ts'
import { parseGenesis, type GethGenesisJson } from '../../../src/chain/memory/genesis.ts'
import { LayeredStateReader } from '../../../src/chain/memory/layered-state-reader.ts'
import { bytesToHexString } from '../../../src/chain/quantity.ts'
import type { Address, BlockInfo, StateReader } from '../../../src/chain/types.ts'
import { commonForChain } from '../../../src/evm/chain-config.ts'
import { JournaledState } from '../../../src/evm/journaled-state.ts'
import { Simulator, TransactionRejectedError, type SimulationState } from '../../../src/evm/simulator.ts'
import { decodeSignedTransaction } from '../../../src/tx/index.ts'
import { GENESIS_PATH, loadFixtureTxs, lower, type FixtureTx } from '../../support/devnet.ts'

const fixtures = loadFixtureTxs()
const fixture = (name: string): FixtureTx => {
  const f = fixtures.find((t) => t.name === name)
  if (f === undefined) throw new Error(`fixture ${name} missing`)
  return f
}
const ABI = parseAbi([
  'function balanceOf(address) view returns (uint256)',
  'function getReserves() view returns (uint112, uint112, uint32)',
])
const VIEWER: Address = '0x0000000000000000000000000000000000000b0b'
const USDC: Address = '0x390fc41d31554d120bc63d41b1389b832d774089'
const V2_USDC_WETH: Address = '0xe421afd0eb5c3a190448b9b76622d65104935813'

function setup(options: { maxLayerDepth?: number } = {}) {
  const source = DevnetStateSource.fromGenesisFile(GENESIS_PATH, options)
  const sim = new Simulator({ common: commonForChain(source.chainId) })
  const decode = (f: FixtureTx) => decodeSignedTransaction(f.raw, { chainId: source.chainId, common: sim.common })
  return { source, sim, decode }
}

async function usdcBalance(sim: Simulator, reader: StateReader, holder: Address): Promise<bigint> {
  const r = await sim.call(sim.openState(reader), { from: VIEWER, to: USDC, data: encodeFunctionData({ abi: ABI, functionName: 'balanceOf', args: [holder] }) })
  return decodeFunctionResult({ abi: ABI, functionName: 'balanceOf', data: bytesToHexString(r.returnData) })
}

async function reserves(sim: Simulator, state: SimulationState): Promise<readonly [bigint, bigint, number]> {
  const r = await sim.call(state, { from: VIEWER, to: V2_USDC_WETH, data: encodeFunctionData({ abi: ABI, functionName: 'getReserves' }) })
  return decodeFunctionResult({ abi: ABI, functionName: 'getReserves', data: bytesToHexString(r.returnData) })
}

/** EIP-1559, written out independently of src/evm/block-context.ts */
function eip1559(parentBaseFee: bigint, parentGasUsed: bigint, parentGasLimit: bigint): bigint {
  const target = parentGasLimit / 2n
  if (parentGasUsed === target) return parentBaseFee
  if (parentGasUsed > target) {
    const d = (parentBaseFee * (parentGasUsed - target)) / target / 8n
    return parentBaseFee + (d > 1n ? d : 1n)
  }
  return parentBaseFee - (parentBaseFee * (target - parentGasUsed)) / target / 8n
}

describe('DevnetStateSource.commitBlock', () => {
  it("a head's stateDiff names every key its block changed: a swap's pair slots, sender, token balances; unnamed keys read as in the parent", async () => {
    const { source, sim, decode } = setup()
    const genesis = source.latest()
    const tx = decode(fixture('v2-swapExactETHForTokens-small'))
    const result = await sim.transaction(sim.openState(genesis), tx.tx)
    const head = source.commitBlock(result.state, { ...result.state.block, gasUsed: result.gasUsed, transactionHashes: [tx.hash] })
    const diff = head.stateDiff()
    expect(diff.parentHash).toBe(genesis.block.hash)
    expect(head.stateDiff()).toBe(diff)
    expect(diff.accounts).toContain(lower(tx.sender))
    expect(diff.accounts).toContain(V2_USDC_WETH)
    for (const address of diff.accounts) expect(address).toBe(address.toLowerCase())
    const pairSlots = diff.storage.find(([address]) => address === V2_USDC_WETH)?.[1]
    // the reserves and the block timestamp (slot 8) were written by the swap
    expect(pairSlots).toContain(8n)
    // every slot the diff names may differ; the ones it does not name (slots 0..11 of each touched contract) read the same
    for (const [address, slots] of diff.storage) {
      for (let slot = 0n; slot < 12n; slot++) {
        if (slots.includes(slot)) continue
        expect(await head.getStorage(address, slot)).toBe(await genesis.getStorage(address, slot))
      }
    }
    expect(await head.getStorage(V2_USDC_WETH, 8n)).not.toBe(await genesis.getStorage(V2_USDC_WETH, 8n))
    // an account the block did not touch
    expect(diff.accounts).not.toContain(VIEWER)
    expect(diff.clearedStorage).toEqual([])
  })

  it('makes a new head with the transaction applied; the genesis reader is unchanged; listeners are told', async () => {
    const { source, sim, decode } = setup()
    const genesis = source.latest()
    const seen: BlockInfo[] = []
    source.onNewHead((b) => seen.push(b))
    const fx = fixture('v2-swapExactETHForTokens-small')
    const tx = decode(fx)
    const sender = tx.sender
    const before = (await genesis.getAccount(sender))!
    const usdcBefore = await usdcBalance(sim, genesis, sender)
    const reservesBefore = await reserves(sim, sim.openState(genesis))

    const result = await sim.transaction(sim.openState(genesis), tx.tx)
    expect(result.status).toBe('success')
    expect(result.gasUsed.toString()).toBe(fx.expected.gasUsed)
    const reader = source.commitBlock(result.state, { ...result.state.block, gasUsed: result.gasUsed, transactionHashes: [tx.hash] })

    const head = source.latest()
    expect(head).toBe(reader)
    expect(head.block.number).toBe(1n)
    expect(head.block.timestamp).toBe(genesis.block.timestamp + 12n)
    expect(head.block.timestamp.toString()).toBe(fx.block.timestamp)
    expect(head.block.baseFeePerGas).toBe(eip1559(genesis.block.baseFeePerGas!, 0n, genesis.block.gasLimit))
    expect(head.block.baseFeePerGas?.toString()).toBe(fx.block.baseFeePerGas)
    expect(head.block.gasUsed).toBe(135_155n)
    expect(head.block.gasLimit).toBe(genesis.block.gasLimit)
    expect(reader.block.parentHash).toBe(genesis.block.hash)
    expect(head.block.hash).toMatch(/^0x[0-9a-f]{64}$/)
    expect(head.block.hash).not.toBe(genesis.block.hash)
    expect(seen).toEqual([head.block])
    // the head carries its transaction hashes: the dispatcher sees what landed without receipts
    expect(head.block.transactionHashes).toEqual([tx.hash.toLowerCase()])

    // the new head: nonce and ETH (value + gas at the legacy gas price), USDC and the pool's reserves
    const after = (await head.getAccount(sender))!
    expect(after.nonce).toBe(before.nonce + 1n)
    expect(before.balance - after.balance).toBe(tx.value + result.gasUsed * tx.gasFeeCap)
    expect((before.balance - after.balance).toString()).toBe(fx.expected.balanceChanges[0].deltas.ETH.replace('-', ''))
    expect(await usdcBalance(sim, head, sender)).toBe(usdcBefore + BigInt(fx.expected.balanceChanges[0].deltas.USDC))
    const reservesAfter = await reserves(sim, sim.openState(head))
    expect(reservesAfter).not.toEqual(reservesBefore)
    expect(BigInt(reservesAfter[2])).toBe(head.block.timestamp)

    // the genesis reader still reads the genesis
    expect(await genesis.getAccount(sender)).toEqual(before)
    expect(await usdcBalance(sim, genesis, sender)).toBe(usdcBefore)
    expect(await reserves(sim, sim.openState(genesis))).toEqual(reservesBefore)

    // executing on the new head sees the committed state: the same transaction cannot land twice
    await expect(sim.transaction(sim.openState(head), tx.tx)).rejects.toBeInstanceOf(TransactionRejectedError)
  })

  it('the next base fee follows the gas the block used (EIP-1559), block after block', async () => {
    const { source, sim, decode } = setup()
    const big = decode(fixture('v2-swapExactETHForTokens-large'))
    const r1 = await sim.transaction(sim.openState(source.latest()), big.tx)
    const b1 = source.commitBlock(r1.state, { ...r1.state.block, gasUsed: r1.gasUsed }).block
    const empty = sim.openState(source.latest())
    const b2 = source.commitBlock(empty, { ...empty.block, gasUsed: 0n }).block
    expect(b2.baseFeePerGas).toBe(eip1559(b1.baseFeePerGas!, r1.gasUsed, b1.gasLimit))
    expect(b2.baseFeePerGas).toBeLessThan(b1.baseFeePerGas!)
    // a block above the target raises it
    const full = sim.openState(source.latest())
    const b3 = source.commitBlock(full, { ...full.block, gasUsed: 20_000_000n }).block
    const next = sim.openState(source.latest())
    const b4 = source.commitBlock(next, { ...next.block, gasUsed: 0n }).block
    expect(b3.baseFeePerGas).toBe(eip1559(b2.baseFeePerGas!, 0n, b2.gasLimit))
    expect(b4.baseFeePerGas).toBe(eip1559(b3.baseFeePerGas!, 20_000_000n, b3.gasLimit))
    expect(b4.baseFeePerGas).toBeGreaterThan(b3.baseFeePerGas!)
    expect(b4.number).toBe(4n)
  })

  it('block hashes are deterministic: same parent and transactions, same hash; different ones differ', async () => {
    const hashes: string[] = []
    for (const name of ['eth-transfer', 'eth-transfer', 'v2-swapExactETHForTokens-small']) {
      const { source, sim, decode } = setup()
      const tx = decode(fixture(name))
      const r = await sim.transaction(sim.openState(source.latest()), tx.tx)
      hashes.push(source.commitBlock(r.state, { ...r.state.block, gasUsed: r.gasUsed, transactionHashes: [tx.hash] }).block.hash)
    }
    expect(hashes[0]).toBe(hashes[1])
    expect(hashes[2]).not.toBe(hashes[0])
  })

  it('refuses a state opened on an older head, and fields that do not extend the head; nothing changes then', async () => {
    const { source, sim } = setup()
    const genesis = source.latest()
    const stale = sim.openState(genesis)
    const s1 = sim.openState(genesis)
    source.commitBlock(s1, { ...s1.block, gasUsed: 0n })
    const head = source.latest()
    expect(() => source.commitBlock(stale, { ...stale.block, gasUsed: 0n })).toThrow(DevnetCommitError)
    const fresh = sim.openState(head)
    expect(() => source.commitBlock(fresh, { ...fresh.block, number: 5n, gasUsed: 0n })).toThrow(/number 5 is not 2/)
    expect(() => source.commitBlock(fresh, { ...fresh.block, baseFeePerGas: 1n, gasUsed: 0n })).toThrow(/EIP-1559/)
    expect(() => source.commitBlock(fresh, { ...fresh.block, parentHash: genesis.block.hash, gasUsed: 0n })).toThrow(/parentHash/)
    expect(() => source.commitBlock(fresh, { ...fresh.block, timestamp: head.block.timestamp, gasUsed: 0n })).toThrow(/timestamp/)
    expect(() => source.commitBlock(fresh, { ...fresh.block, gasUsed: fresh.block.gasLimit + 1n })).toThrow(/gasUsed/)
    // adopting a block that is not newer than the head is the same kind of refusal
    expect(() => source.adopt(genesis)).toThrow(DevnetCommitError)
    expect(() => source.adopt(head)).toThrow(/block 1 is not newer than the head 1/)
    expect(source.latest()).toBe(head)
  })

  it('a listener that throws does not stop the commit or the other listeners', async () => {
    const errors: unknown[] = []
    const source = new DevnetStateSource(parseGenesis({ config: { chainId: 31337 }, alloc: {}, baseFeePerGas: '0x3b9aca00' }), { onError: (e) => errors.push(e) })
    const sim = new Simulator({ common: commonForChain(source.chainId) })
    const seen: bigint[] = []
    source.onNewHead(() => {
      throw new Error('listener bug')
    })
    source.onNewHead((b) => seen.push(b.number))
    const s = sim.openState(source.latest())
    source.commitBlock(s, { ...s.block, gasUsed: 0n })
    expect(seen).toEqual([1n])
    expect(errors).toHaveLength(1)
    expect(source.latest().block.number).toBe(1n)
  })

  it('bounds the layer depth by flattening, and every older reader keeps its own block', async () => {
    const { source, sim } = setup({ maxLayerDepth: 3 })
    const who: Address = '0x00000000000000000000000000000000000a11ce'
    const ejsWho = createAddressFromString(who)
    const readers: StateReader[] = [source.latest()]
    for (let i = 1n; i <= 10n; i++) {
      const state = sim.openState(source.latest())
      await state.overlay.modifyAccountFields(ejsWho, { balance: i * 1000n, nonce: i })
      await state.overlay.putStorage(ejsWho, setLengthLeft(bigIntToBytes(1n), 32), bigIntToBytes(i))
      if (i === 6n) await state.overlay.putStorage(ejsWho, setLengthLeft(bigIntToBytes(2n), 32), bigIntToBytes(66n))
      if (i === 8n) await state.overlay.clearStorage(ejsWho)
      const reader = source.commitBlock(state, { ...state.block, gasUsed: 0n })
      expect(reader.depth).toBeLessThanOrEqual(3)
      readers.push(reader)
    }
    expect((readers[4] as LayeredStateReader).depth).toBe(1) // 1, 2, 3, then flattened
    expect(await readers[0].getAccount(who)).toBeUndefined()
    for (let i = 1; i <= 10; i++) {
      const r = readers[i]
      expect(r.block.number).toBe(BigInt(i))
      expect(await r.getAccount(who)).toEqual({ nonce: BigInt(i), balance: BigInt(i) * 1000n, codeHash: KECCAK256_NULL })
      expect(await r.getStorage(who, 1n)).toBe(i === 8 ? 0n : BigInt(i))
      expect(await r.getStorage(who, 2n)).toBe(i >= 6 && i < 8 ? 66n : 0n)
    }
    // the genesis contracts are still read through every layer
    expect((await readers[10].getCode(V2_USDC_WETH)).length).toBeGreaterThan(0)
  })
})

// ---- the layered readers against a plain model ----

type Op =
  | { kind: 'balance'; a: number; v: bigint }
  | { kind: 'nonce'; a: number; v: bigint }
  | { kind: 'slot'; a: number; s: number; v: bigint }
  | { kind: 'clear'; a: number }
  | { kind: 'delete'; a: number }
  | { kind: 'code'; a: number; c: number }
  | { kind: 'revertedSlot'; a: number; s: number; v: bigint }
  | { kind: 'fork' }
  | { kind: 'commit' }

const ADDRS: Address[] = ['0x00000000000000000000000000000000000000a1', '0x00000000000000000000000000000000000000a2', '0x00000000000000000000000000000000000000a3']
const SLOTS = [0n, 1n, 2n]
const CODES = [Uint8Array.of(0x60, 0x01), Uint8Array.of(0x60, 0x02, 0x00)]

interface ModelAccount {
  nonce: bigint
  balance: bigint
  codeHash: Uint8Array
}
interface Model {
  accounts: Map<Address, ModelAccount>
  code: Map<Address, Uint8Array>
  storage: Map<Address, Map<bigint, bigint>>
}

function cloneModel(m: Model): Model {
  return {
    accounts: new Map([...m.accounts].map(([k, v]) => [k, { ...v }])),
    code: new Map(m.code),
    storage: new Map([...m.storage].map(([k, v]) => [k, new Map(v)])),
  }
}

const opArb: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ kind: fc.constant('balance' as const), a: fc.nat(2), v: fc.bigInt(0n, 5n) }),
  fc.record({ kind: fc.constant('nonce' as const), a: fc.nat(2), v: fc.bigInt(0n, 5n) }),
  fc.record({ kind: fc.constant('slot' as const), a: fc.nat(2), s: fc.nat(2), v: fc.bigInt(0n, 3n) }),
  fc.record({ kind: fc.constant('slot' as const), a: fc.nat(2), s: fc.nat(2), v: fc.bigInt(0n, 3n) }),
  fc.record({ kind: fc.constant('clear' as const), a: fc.nat(2) }),
  fc.record({ kind: fc.constant('delete' as const), a: fc.nat(2) }),
  fc.record({ kind: fc.constant('code' as const), a: fc.nat(2), c: fc.nat(1) }),
  fc.record({ kind: fc.constant('revertedSlot' as const), a: fc.nat(2), s: fc.nat(2), v: fc.bigInt(4n, 9n) }),
  fc.constant({ kind: 'fork' as const }),
  fc.constant({ kind: 'commit' as const }),
)

async function expectReaderMatches(reader: StateReader, model: Model, label: string) {
  for (const a of ADDRS) {
    const account = await reader.getAccount(a)
    const expected = model.accounts.get(a)
    expect(account === undefined ? undefined : { ...account, codeHash: bytesToHexString(account.codeHash) }, `${label} account ${a}`).toEqual(
      expected === undefined ? undefined : { ...expected, codeHash: bytesToHexString(expected.codeHash) },
    )
    expect(bytesToHexString(await reader.getCode(a)), `${label} code ${a}`).toBe(bytesToHexString(model.code.get(a) ?? new Uint8Array(0)))
    for (const s of SLOTS) expect(await reader.getStorage(a, s), `${label} slot ${a}/${s}`).toBe(model.storage.get(a)?.get(s) ?? 0n)
  }
}

describe('JournaledState.changesSinceReader and LayeredStateReader against a model', () => {
  it('every committed head (and every older one, through flattening) reads what the model says', async () => {
    const genesisJson: GethGenesisJson = {
      config: { chainId: 31337 },
      baseFeePerGas: '0x3b9aca00',
      alloc: {
        [ADDRS[0]]: { balance: '0x7', nonce: '0x1', code: '0x6003', storage: { '0x0': '0x5', '0x2': '0x9' } },
        [ADDRS[1]]: { balance: '0x3', storage: { '0x1': '0x1' } },
      },
    }
    await fc.assert(
      fc.asyncProperty(fc.array(opArb, { minLength: 1, maxLength: 60 }), fc.integer({ min: 1, max: 4 }), async (ops, maxLayerDepth) => {
        const source = new DevnetStateSource(parseGenesis(genesisJson), { maxLayerDepth })
        const sim = new Simulator({ common: commonForChain(source.chainId) })
        const model: Model = { accounts: new Map(), code: new Map(), storage: new Map() }
        const g = parseGenesis(genesisJson)
        for (const [a, acc] of g.accounts) {
          model.accounts.set(a, { nonce: acc.nonce, balance: acc.balance, codeHash: acc.codeHash })
          if (acc.code.length > 0) model.code.set(a, acc.code)
          model.storage.set(a, new Map(acc.storage))
        }
        const snapshots: Array<{ reader: StateReader; model: Model }> = [{ reader: source.latest(), model: cloneModel(model) }]
        let state = sim.openState(source.latest())
        let overlay: JournaledState = state.overlay
        for (const op of [...ops, { kind: 'commit' as const }]) {
          if (op.kind === 'fork') {
            state = state.fork()
            overlay = state.overlay
            continue
          }
          if (op.kind === 'commit') {
            const reader = source.commitBlock(state, { ...state.block, gasUsed: 0n })
            snapshots.push({ reader, model: cloneModel(model) })
            state = sim.openState(reader)
            overlay = state.overlay
            continue
          }
          const a = ADDRS[op.a]
          const ejs = createAddressFromString(a)
          const current = model.accounts.get(a) ?? { nonce: 0n, balance: 0n, codeHash: KECCAK256_NULL }
          switch (op.kind) {
            case 'balance':
              await overlay.modifyAccountFields(ejs, { balance: op.v })
              model.accounts.set(a, { ...current, balance: op.v })
              break
            case 'nonce':
              await overlay.modifyAccountFields(ejs, { nonce: op.v })
              model.accounts.set(a, { ...current, nonce: op.v })
              break
            case 'slot': {
              await overlay.putStorage(ejs, setLengthLeft(bigIntToBytes(SLOTS[op.s]), 32), op.v === 0n ? new Uint8Array(0) : bigIntToBytes(op.v))
              const slots = model.storage.get(a) ?? new Map<bigint, bigint>()
              slots.set(SLOTS[op.s], op.v)
              model.storage.set(a, slots)
              break
            }
            case 'revertedSlot':
              await overlay.checkpoint()
              await overlay.putStorage(ejs, setLengthLeft(bigIntToBytes(SLOTS[op.s]), 32), bigIntToBytes(op.v))
              await overlay.clearStorage(ejs)
              await overlay.revert()
              break
            case 'clear':
              await overlay.clearStorage(ejs)
              model.storage.set(a, new Map())
              break
            case 'delete':
              await overlay.deleteAccount(ejs)
              model.accounts.delete(a)
              model.code.delete(a)
              model.storage.set(a, new Map())
              break
            case 'code':
              await overlay.putCode(ejs, CODES[op.c])
              model.code.set(a, CODES[op.c])
              model.accounts.set(a, { ...current, codeHash: keccak_256(CODES[op.c]) })
              break
          }
        }
        for (const [i, snap] of snapshots.entries()) {
          expect(snap.reader.block.number).toBe(BigInt(i))
          if (snap.reader instanceof LayeredStateReader) expect(snap.reader.depth).toBeLessThanOrEqual(maxLayerDepth)
          await expectReaderMatches(snap.reader, snap.model, `block ${i}`)
        }
      }),
      { numRuns: 150 },
    )
  })

  it('changesSinceReader merges a chain of overlays (newest wins, a clear drops older slots) and leaves them untouched', async () => {
    const a = createAddressFromString(ADDRS[0])
    const source = new DevnetStateSource(parseGenesis({ config: { chainId: 31337 }, alloc: { [ADDRS[0]]: { balance: '0x1', storage: { '0x1': '0x1' } } } }))
    const base = JournaledState.over(source.latest())
    const key = (n: bigint) => setLengthLeft(bigIntToBytes(n), 32)
    await base.putStorage(a, key(1n), bigIntToBytes(2n))
    await base.putStorage(a, key(2n), bigIntToBytes(3n))
    const child = base.fork()
    await child.clearStorage(a)
    await child.putStorage(a, key(3n), bigIntToBytes(4n))
    await child.modifyAccountFields(a, { balance: 9n })
    const grandchild = child.fork()
    await grandchild.deleteAccount(createAddressFromString(ADDRS[1]))
    const changes = grandchild.changesSinceReader()
    expect(changes.cleared).toEqual(new Set([ADDRS[0], ADDRS[1]]))
    expect(changes.storage.get(ADDRS[0])).toEqual(new Map([[3n, 4n]]))
    expect(changes.accounts.get(ADDRS[0])?.balance).toBe(9n)
    expect(changes.accounts.get(ADDRS[1])).toBeNull()
    expect(changes.code.get(ADDRS[1])).toEqual(new Uint8Array(0))
    // the overlays themselves are unchanged
    expect(base.diff().storage.get(ADDRS[0])).toEqual(new Map([[1n, 2n], [2n, 3n]]))
    expect(await grandchild.readStorage(ADDRS[0], 1n)).toBe(0n)
    expect(await base.readStorage(ADDRS[0], 1n)).toBe(2n)
    // inside an open checkpoint the writes are not final
    const open = grandchild.fork()
    await open.checkpoint()
    expect(() => open.changesSinceReader()).toThrow(/checkpoint/)
    await open.commit()
    // committing it: the head reads the merged result
    const reader = source.commitBlock(open, { ...nextContext(source.latest().block), gasUsed: 0n })
    expect(await reader.getStorage(ADDRS[0], 1n)).toBe(0n)
    expect(await reader.getStorage(ADDRS[0], 3n)).toBe(4n)
    expect((await reader.getAccount(ADDRS[0]))?.balance).toBe(9n)
    expect(await source.latest().getStorage(lower(ADDRS[0]), 2n)).toBe(0n)
  })
})

function nextContext(parent: BlockInfo) {
  const sim = new Simulator({ common: commonForChain(31337n) })
  return sim.openState({ block: parent, getAccount: async () => undefined, getCode: async () => new Uint8Array(0), getStorage: async () => 0n }).block
}
