import type { Static } from '@sinclair/typebox'
import { type ConfigSchema, longestRetryWaitSeconds } from './settings.js'

type WebhookConfig = Pick<Static<typeof ConfigSchema>, 'WEBHOOK_RETRY_SCHEDULE'>

// The problems of the webhook settings that their patterns cannot show.
export function webhookConfigProblems (config: WebhookConfig): string[] {
  const tooLong = config.WEBHOOK_RETRY_SCHEDULE.split(',').filter((seconds) => Number(seconds) > longestRetryWaitSeconds)
  if (tooLong.length === 0) return []
  return [`WEBHOOK_RETRY_SCHEDULE=${JSON.stringify(config.WEBHOOK_RETRY_SCHEDULE)} is not valid: each wait must be at most ${longestRetryWaitSeconds} seconds (30 days), not ${tooLong.join(', ')}`]
}
