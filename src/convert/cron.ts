import type { JobInfo } from '../lib/job-board'
import { isoTime, ZERO_TIME } from '../lib/time'

const printed = (ms: number | null) => (ms === null ? ZERO_TIME : isoTime(Math.floor(ms / 1000)))

/** The Cron record of a background job: Go's zero time where a time is not known (never ran; no next round planned). */
export const toApiCron = (job: JobInfo) => ({
  name: job.name,
  schedule: job.schedule,
  next: printed(job.next),
  prev: printed(job.prev),
  exec_times: job.execTimes,
})
