/**
 * Gives every dev account ETH, every token, and max approvals to the swap routers, so a test can
 * sign a swap from any of them without setup transactions.
 */
import { maxUint256, type Hex } from 'viem'
import { ERC20_ABI } from './artifacts.ts'
import type { BuildChain } from './build-chain.ts'
import { DEPLOYER, DEV_ACCOUNT_ETH, type KeyedAccount } from './config.ts'
import { DEV_ACCOUNT_TOKENS } from './layout.ts'
import type { TokenInfo } from './add-liquidity.ts'

export interface Spender {
  name: string
  address: Hex
}

export async function fundDevAccounts(chain: BuildChain, accounts: readonly KeyedAccount[], tokens: Iterable<TokenInfo>, spenders: readonly Spender[]) {
  const tokenList = [...tokens]
  for (const account of accounts) {
    await chain.setBalance(account.address, DEV_ACCOUNT_ETH)
    for (const token of tokenList) {
      const amount = DEV_ACCOUNT_TOKENS[token.symbol] * 10n ** BigInt(token.decimals)
      await chain.send(DEPLOYER, token.address, { abi: ERC20_ABI, functionName: 'transfer', args: [account.address, amount] })
      for (const spender of spenders) {
        await chain.callAs(account.address, token.address, { abi: ERC20_ABI, functionName: 'approve', args: [spender.address, maxUint256] })
      }
    }
  }
}

/** Each dev account's genesis balances in base units, by symbol. */
export function devAccountBalances(tokens: Iterable<TokenInfo>): Record<string, string> {
  const out: Record<string, string> = { ETH: DEV_ACCOUNT_ETH.toString() }
  for (const token of tokens) out[token.symbol] = (DEV_ACCOUNT_TOKENS[token.symbol] * 10n ** BigInt(token.decimals)).toString()
  return out
}
