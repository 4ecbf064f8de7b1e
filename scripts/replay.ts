/**
 * npm run replay -- FILE
 * Replays one go-ethereum tracer fixture (genesis, context, input) and prints JSON with status,
 * gasUsed, output, logs, and geth's recorded gasUsed/output when the fixture has them.
 */
import { readFileSync } from 'node:fs'
import { bytesToHexString } from '../src/chain/quantity.ts'
import { replayGethFixture, type GethFixture } from '../src/evm/geth-fixture.ts'

const file = process.argv[2]
if (!file) {
  console.error('usage: npm run replay -- FILE')
  process.exit(2)
}
const fixture = JSON.parse(readFileSync(file, 'utf8')) as GethFixture
const { hardfork, result } = await replayGethFixture(fixture)
const recorded = fixture.result as { gasUsed?: string; output?: string; error?: string } | undefined
console.log(
  JSON.stringify(
    {
      file,
      hardfork,
      hash: result.hash,
      from: result.from,
      status: result.status,
      gasUsed: result.gasUsed.toString(),
      output: bytesToHexString(result.returnData),
      revertReason: result.revertReason,
      error: result.error,
      logs: result.logs,
      recorded: recorded && 'gasUsed' in recorded
        ? { gasUsed: BigInt(recorded.gasUsed as string).toString(), output: recorded.output, error: recorded.error }
        : undefined,
    },
    null,
    2,
  ),
)
