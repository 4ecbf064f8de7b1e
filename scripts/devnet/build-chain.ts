/**
 * The throw-away chain the devnet is built on: an in-process @ethereumjs/vm on a
 * SimpleStateManager (a plain map, so every account and slot can be listed at the end), prague
 * rules, one block per transaction on a fixed clock. No network, no wall clock, no randomness.
 *
 * Build transactions are signed legacy transactions with gas price 0 in blocks with base fee 0,
 * so balances move only by the value sent. Setup calls on behalf of the dev accounts (approvals)
 * run as plain calls without a nonce bump, so the dev accounts start at nonce 0 like on a fresh
 * anvil.
 */
import { createBlock, type Block } from '@ethereumjs/block'
import { Mainnet, createCustomCommon, type Common } from '@ethereumjs/common'
import { SimpleStateManager } from '@ethereumjs/statemanager'
import { createLegacyTx } from '@ethereumjs/tx'
import { Account, bytesToBigInt, bytesToHex, createAddressFromString, hexToBytes } from '@ethereumjs/util'
import { createVM, runTx, type VM } from '@ethereumjs/vm'
import {
  decodeErrorResult,
  decodeFunctionResult,
  encodeDeployData,
  encodeFunctionData,
  getAddress,
  type Abi,
  type Hex,
} from 'viem'
import { BLOCK_GAS_LIMIT, BUILD_BLOCK_TIME, BUILD_START_TIMESTAMP, CHAIN_ID, GENESIS_TIMESTAMP, type KeyedAccount } from './config.ts'

export interface DumpedAccount {
  nonce: bigint
  balance: bigint
  code: Hex
  /** non-zero slots only, slot -> value */
  storage: Map<bigint, bigint>
}

export interface CallSpec {
  abi: Abi
  functionName: string
  args?: readonly unknown[]
  value?: bigint
}

const BUILD_TX_GAS_LIMIT = BLOCK_GAS_LIMIT
const ZERO_ADDRESS = '0x0000000000000000000000000000000000000000'
/** Standard Error(string) for decoding revert reasons of build steps. */
const ERROR_ABI = [{ type: 'error', name: 'Error', inputs: [{ name: 'message', type: 'string' }] }] as const

/** SimpleStateManager keeps its maps protected; the build needs to list them once at the end. */
class DumpableStateManager extends SimpleStateManager {
  maps() {
    return { accounts: this.topAccountStack(), codes: this.topCodeStack(), storage: this.topStorageStack() }
  }
}

export class BuildChain {
  private blockNumber = 0n

  private constructor(
    readonly common: Common,
    readonly vm: VM,
    private readonly state: DumpableStateManager,
  ) {}

  static async create(): Promise<BuildChain> {
    const common = createCustomCommon({ chainId: CHAIN_ID, name: 'devnet' }, Mainnet, { hardfork: 'prague' })
    const state = new DumpableStateManager({ common })
    const vm = await createVM({ common, stateManager: state })
    return new BuildChain(common, vm, state)
  }

  async setBalance(address: Hex, balance: bigint): Promise<void> {
    const addr = createAddressFromString(address)
    const account = (await this.state.getAccount(addr)) ?? new Account()
    account.balance = balance
    await this.state.putAccount(addr, account)
  }

  async balanceOf(address: Hex): Promise<bigint> {
    return (await this.state.getAccount(createAddressFromString(address)))?.balance ?? 0n
  }

  /** Deploys a contract in its own transaction and returns its address. */
  async deploy(from: KeyedAccount, artifact: { abi: Abi; bytecode: Hex }, args: readonly unknown[] = []): Promise<Hex> {
    const data = encodeDeployData({ abi: artifact.abi, bytecode: artifact.bytecode, args })
    const result = await this.sendRaw(from, undefined, data, 0n, 'deploy')
    if (!result.createdAddress) throw new Error('deployment created no contract')
    return getAddress(result.createdAddress.toString())
  }

  /** Sends a signed transaction calling `to`; throws with the revert reason when it fails. */
  async send(from: KeyedAccount, to: Hex, call: CallSpec): Promise<Hex> {
    const data = encodeFunctionData({ abi: call.abi, functionName: call.functionName, args: call.args ?? [] })
    const result = await this.sendRaw(from, to, data, call.value ?? 0n, call.functionName)
    return bytesToHex(result.execResult.returnValue)
  }

  /** Sends and decodes the function's return values. */
  async sendAndDecode<T>(from: KeyedAccount, to: Hex, call: CallSpec): Promise<T> {
    const output = await this.send(from, to, call)
    return decodeFunctionResult({ abi: call.abi, functionName: call.functionName, data: output }) as T
  }

  /**
   * A state-changing call made by `from` without a transaction: no signature, no nonce bump.
   * Used for the dev accounts' setup so they keep nonce 0.
   */
  async callAs(from: Hex, to: Hex, call: CallSpec): Promise<void> {
    const data = encodeFunctionData({ abi: call.abi, functionName: call.functionName, args: call.args ?? [] })
    const block = this.nextBlock()
    const result = await this.vm.evm.runCall({
      block,
      caller: createAddressFromString(from),
      origin: createAddressFromString(from),
      to: createAddressFromString(to),
      data: hexToBytes(data),
      value: call.value ?? 0n,
      gasLimit: BUILD_TX_GAS_LIMIT,
      skipNonceIncrement: true,
    })
    if (result.execResult.exceptionError) {
      throw new Error(`${call.functionName} as ${from} failed: ${reason(result.execResult.returnValue, result.execResult.exceptionError.error)}`)
    }
  }

  /** A read-only call against the current state; any state it touches is rolled back. */
  async read<T>(to: Hex, call: CallSpec): Promise<T> {
    const data = encodeFunctionData({ abi: call.abi, functionName: call.functionName, args: call.args ?? [] })
    await this.state.checkpoint()
    try {
      const result = await this.vm.evm.runCall({
        block: this.currentBlock(),
        caller: createAddressFromString(ZERO_ADDRESS),
        to: createAddressFromString(to),
        data: hexToBytes(data),
        gasLimit: BUILD_TX_GAS_LIMIT,
        skipNonceIncrement: true,
        isStatic: true,
      })
      if (result.execResult.exceptionError) {
        throw new Error(`read ${call.functionName} failed: ${reason(result.execResult.returnValue, result.execResult.exceptionError.error)}`)
      }
      return decodeFunctionResult({ abi: call.abi, functionName: call.functionName, data: bytesToHex(result.execResult.returnValue) }) as T
    } finally {
      await this.state.revert()
    }
  }

  /** Every existing account with its code and non-zero storage, keyed by lower-case address. */
  dump(): Map<string, DumpedAccount> {
    const { accounts, codes, storage: flatStorage } = this.state.maps()
    const storage = new Map<string, Map<bigint, bigint>>()
    for (const [key, value] of flatStorage) {
      // SimpleStateManager keys storage as `${address}_${32-byte slot hex}`
      const [address, slot] = key.split('_') as [string, string]
      const v = bytesToBigInt(value)
      if (v === 0n) continue
      let slots = storage.get(address)
      if (!slots) storage.set(address, (slots = new Map()))
      slots.set(BigInt(slot), v)
    }
    const out = new Map<string, DumpedAccount>()
    for (const [address, account] of accounts) {
      if (account === undefined) continue
      const code = codes.get(address) ?? new Uint8Array(0)
      const slots = storage.get(address) ?? new Map<bigint, bigint>()
      // EIP-161: an empty account does not exist (the zero-fee build still touches the coinbase)
      if (account.nonce === 0n && account.balance === 0n && code.length === 0 && slots.size === 0) continue
      out.set(address.toLowerCase(), { nonce: account.nonce, balance: account.balance, code: bytesToHex(code), storage: slots })
    }
    return out
  }

  /** Blocks the build has used so far (one per transaction or setup call). */
  get blockCount(): bigint {
    return this.blockNumber
  }

  /** The last build block's timestamp; genesis must come after it. */
  get lastTimestamp(): bigint {
    return BUILD_START_TIMESTAMP + this.blockNumber * BUILD_BLOCK_TIME
  }

  private async sendRaw(from: KeyedAccount, to: Hex | undefined, data: Hex, value: bigint, what: string) {
    const nonce = (await this.state.getAccount(createAddressFromString(from.address)))?.nonce ?? 0n
    const tx = createLegacyTx(
      { nonce, gasPrice: 0n, gasLimit: BUILD_TX_GAS_LIMIT, to, value, data: hexToBytes(data) },
      { common: this.common },
    ).sign(hexToBytes(from.privateKey))
    const block = this.nextBlock()
    const result = await runTx(this.vm, { tx, block })
    if (result.execResult.exceptionError) {
      throw new Error(`${what} from ${from.address} failed: ${reason(result.execResult.returnValue, result.execResult.exceptionError.error)}`)
    }
    return result
  }

  private nextBlock(): Block {
    this.blockNumber += 1n
    if (this.lastTimestamp >= GENESIS_TIMESTAMP) throw new Error('the build ran past the genesis timestamp; raise the slack in config.ts')
    return this.currentBlock()
  }

  private currentBlock(): Block {
    return createBlock(
      {
        header: {
          number: this.blockNumber,
          timestamp: this.lastTimestamp,
          gasLimit: BLOCK_GAS_LIMIT,
          baseFeePerGas: 0n,
          coinbase: createAddressFromString(ZERO_ADDRESS),
        },
      },
      { common: this.common, skipConsensusFormatValidation: true },
    )
  }
}

function reason(returnValue: Uint8Array, error: string): string {
  if (returnValue.length >= 4) {
    try {
      const decoded = decodeErrorResult({ abi: ERROR_ABI, data: bytesToHex(returnValue) })
      return `${error}: ${decoded.args[0]}`
    } catch {
      return `${error}: ${bytesToHex(returnValue)}`
    }
  }
  return error
}
