import type { Static } from '@sinclair/typebox'
import type { ConfigSchema } from './settings.js'

type WebhookConfig = Pick<Static<typeof ConfigSchema>, 'WEBHOOK_RETRY_SCHEDULE'>

// The longest wait a retry schedule may hold: 30 days, beyond any schedule a receiver would
// want. An attempt's time is stored as whole milliseconds in a 64-bit integer; a wait of
// 10^20 seconds made every create owing a message fail instead of starting up refused.
export const longestRetryWaitSeconds = 30 * 24 * 60 * 60

// The problems of the webhook settings that their patterns cannot show.
export function webhookConfigProblems (config: WebhookConfig): string[] {
  const tooLong = config.WEBHOOK_RETRY_SCHEDULE.split(',').filter((seconds) => Number(seconds) > longestRetryWaitSeconds)
  if (tooLong.length === 0) return []
  return [`WEBHOOK_RETRY_SCHEDULE=${JSON.stringify(config.WEBHOOK_RETRY_SCHEDULE)} is not valid: each wait must be at most ${longestRetryWaitSeconds} seconds (30 days), not ${tooLong.join(', ')}`]
}
