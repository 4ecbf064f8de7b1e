/**
 * A reorg against a real chain (issue 12): the service started as `npm start` starts it (its own
 * process) in fork mode against anvil, with RELAYS a recording relay that lands each bundle for the
 * next block at once (the user's tx sent to anvil, then a block mined). A private submission lands
 * in block N; anvil_reorg replaces block N with an empty one; the fork source sees the reorg, and
 * the dispatcher re-opens the submission and sends it again for the block after the new head,
 * where it lands again. The status API shows one lifecycle: included in N, the reorg (N replaced),
 * included in N+1.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { ChildProcess } from 'node:child_process'
import type { Hex } from 'viem'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { anvilRpc, startAnvil, type AnvilInstance } from '../support/anvil.ts'
import { rpc } from '../support/flow.ts'
import { freePort } from '../support/net.ts'
import { startServiceProcess } from '../support/service-process.ts'
import { devnetForkEnv, GENESIS_PATH, loadFixtureTxs, loadRegistry } from '../support/devnet.ts'
import { readBody, until } from '../support/waiting.ts'

const TOKEN = 'reorg-partner-token-0123456789'

interface StatusView {
  stage: string
  final: { state: string; block?: string } | null
  events: Array<{ type: string; block?: string; includedBlock?: string; commonAncestor?: string; dropped?: string[] }>
}

describe('a private submission whose block is reorged out (fork mode, anvil)', () => {
  let anvil: AnvilInstance
  let relay: Server
  let service: ChildProcess
  let base: string
  let dataDir: string
  /** every bundle the relay got: its target block and txs; `landed`: the block it was mined in */
  const bundles: Array<{ block: bigint; txs: Hex[]; landed?: bigint }> = []

  beforeAll(async () => {
    anvil = await startAnvil({ genesisPath: GENESIS_PATH, extraArgs: ['--no-mining'] })
    // lands a bundle for the next block at once, one block per bundle (a builder in miniature)
    let landing = Promise.resolve()
    relay = createServer(async (req, res) => {
      const body = JSON.parse(await readBody(req)) as { id: unknown; method: string; params: Array<{ txs: Hex[]; blockNumber: string }> }
      res.setHeader('content-type', 'application/json')
      if (body.method !== 'eth_sendBundle') {
        res.end(JSON.stringify({ jsonrpc: '2.0', id: body.id, error: { code: -32601, message: 'method not found' } }))
        return
      }
      const entry: (typeof bundles)[number] = { block: BigInt(body.params[0].blockNumber), txs: body.params[0].txs }
      bundles.push(entry)
      landing = landing.then(async () => {
        const head = BigInt(await anvilRpc<Hex>(anvil.url, 'eth_blockNumber'))
        if (entry.block !== head + 1n) return
        for (const tx of entry.txs) await anvilRpc(anvil.url, 'eth_sendRawTransaction', [tx]).catch(() => undefined)
        await anvilRpc(anvil.url, 'evm_mine')
        entry.landed = entry.block
      })
      await landing
      res.end(JSON.stringify({ jsonrpc: '2.0', id: body.id, result: { bundleHash: `0x${'00'.repeat(32)}` } }))
    })
    const relayPort = await freePort()
    await new Promise<void>((resolve) => relay.listen(relayPort, '127.0.0.1', resolve))
    dataDir = mkdtempSync(join(tmpdir(), 'reorg-e2e-'))
    const port = await freePort()
    base = `http://127.0.0.1:${port}`
    service = await startServiceProcess(port, {
      ...devnetForkEnv(loadRegistry()),
      UPSTREAM_RPC_URL: anvil.url,
      HEAD_POLL_INTERVAL_MS: '100',
      API_KEYS: 'reorg-test-api-key-0123456789',
      PARTNER_TOKENS: `reorg:${TOKEN}`,
      RELAYS: JSON.stringify([{ name: 'recorder', url: `http://127.0.0.1:${relayPort}` }]),
      DATA_DIR: dataDir,
    })
  })

  afterAll(async () => {
    service?.kill('SIGKILL')
    relay?.close()
    await anvil?.stop()
    if (dataDir) rmSync(dataDir, { recursive: true, force: true })
  })

  it('is re-opened and sent again after the reorg, and lands again; the status API shows one lifecycle', async () => {
    const fx = loadFixtureTxs().find((f) => f.name === 'eth-transfer')!
    const status = async (): Promise<StatusView> => {
      const res = await fetch(`${base}/v1/submissions/${fx.hash}`, { headers: { authorization: `Bearer ${TOKEN}` } })
      return ((await res.json()) as { submissions: StatusView[] }).submissions[0]
    }
    expect(await rpc<string>(`${base}/rpc/${TOKEN}/submit`, 'eth_sendPrivateRawTransaction', [{ tx: fx.raw }])).toBe(fx.hash)

    const first = await until('the first inclusion', async () => ((await status()).final?.state === 'included' ? await status() : undefined), 45_000)
    const landedIn = BigInt(first.final!.block!)
    expect(bundles.find((b) => b.landed === landedIn)?.txs).toEqual([fx.raw.toLowerCase()])
    const sentBefore = bundles.length

    // block N replaced by an empty block at the same height: the transfer is no longer on chain
    await anvilRpc(anvil.url, 'anvil_reorg', [1, []])
    expect(await anvilRpc(anvil.url, 'eth_getTransactionReceipt', [fx.hash])).toBeNull()
    expect(BigInt(await anvilRpc<Hex>(anvil.url, 'eth_blockNumber'))).toBe(landedIn)

    const again = await until('the inclusion after the reorg', async () => {
      const s = await status()
      return s.final?.state === 'included' && BigInt(s.final.block!) !== landedIn ? s : undefined
    }, 45_000)
    // sent again for the block after the new head, the user's bytes unchanged, and landed there
    const resent = bundles.slice(sentBefore).filter((b) => b.txs.length === 1 && b.txs[0] === fx.raw.toLowerCase())
    expect(resent.map((b) => b.block)).toContain(landedIn + 1n)
    expect(again.final!.block).toBe(String(landedIn + 1n))
    const receipt = await anvilRpc<{ blockNumber: Hex; status: Hex }>(anvil.url, 'eth_getTransactionReceipt', [fx.hash])
    expect([BigInt(receipt.blockNumber), receipt.status]).toEqual([landedIn + 1n, '0x1'])

    // one lifecycle: included in N, the reorg that replaced N (re-opened), included in N+1
    const milestones = again.events.filter((e) => e.type === 'included' || e.type === 'reorg')
    expect(milestones).toEqual([
      expect.objectContaining({ type: 'included', block: String(landedIn) }),
      expect.objectContaining({ type: 'reorg', includedBlock: String(landedIn), commonAncestor: String(landedIn - 1n), dropped: [String(landedIn)] }),
      expect.objectContaining({ type: 'included', block: String(landedIn + 1n) }),
    ])
    expect(again.stage).toBe('included')
  })
})
