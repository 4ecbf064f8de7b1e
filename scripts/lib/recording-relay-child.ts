/**
 * The entry of recordingRelayProcess (recording-relay.ts): starts the recording relay and prints
 * its URL as the first line of stdout; it runs until killed.
 */
import { recordingRelay } from './recording-relay.ts'

const relay = await recordingRelay()
process.stdout.write(`${relay.url}\n`)
