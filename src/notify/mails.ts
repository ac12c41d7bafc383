import { and, eq, inArray } from 'drizzle-orm'
import type { AppDeps } from '../deps'
import { comments, emailAddresses, users } from '../db/schema'
import type { EventRecord } from '../events/outbox'
import { issueNotificationMail } from '../mail/messages'
import type { MailMessage } from '../mail/queue'
import { batchesOf } from '../lib/batches'
import type { NotificationPlan } from './recipients'

/** Gitea's email_notifications_preference values (users.email_notifications_preference). */
export const EMAIL_PREFERENCES = ['enabled', 'onmention', 'disabled'] as const
export type EmailPreference = (typeof EMAIL_PREFERENCES)[number]

/**
 * The mails of a notifier round's threads (Gitea's mailer.MailParticipants): to each receiver
 * whose preference asks for it ('enabled': every notification; 'onmention': those that mention,
 * assign or ask them to review; 'disabled': none), at their primary address while it is
 * activated; never the actor (the plan has them not). What they need read is read for the whole
 * round at once: the receivers, the actors, the new comments.
 */
export async function notificationMails(deps: AppDeps, planned: { event: EventRecord; plan: NotificationPlan }[]): Promise<MailMessage[]> {
  if (!deps.config.mailer || planned.length === 0) return []
  const receiverIds = [...new Set(planned.flatMap((p) => p.plan.receivers))]
  const receivers = new Map<number, { email: string; preference: string }>()
  for (const ids of batchesOf(receiverIds)) {
    const rows = await deps.db
      .select({ id: users.id, email: emailAddresses.email, preference: users.emailNotificationsPreference })
      .from(users)
      .innerJoin(emailAddresses, and(eq(emailAddresses.userId, users.id), eq(emailAddresses.isPrimary, true), eq(emailAddresses.isActivated, true)))
      .where(and(inArray(users.id, ids), eq(users.isActive, true)))
    for (const r of rows) receivers.set(r.id, r)
  }
  const actorIds = [...new Set(planned.map((p) => p.plan.actorId))]
  const actors = new Map((await deps.db.select({ id: users.id, name: users.name }).from(users).where(inArray(users.id, actorIds))).map((a) => [a.id, a.name]))
  const commentIds = [...new Set(planned.filter((p) => p.event.kind === 'comment.created' && p.plan.commentId).map((p) => p.plan.commentId))]
  const bodies = new Map(
    commentIds.length ? (await deps.db.select({ id: comments.id, content: comments.content }).from(comments).where(inArray(comments.id, commentIds))).map((c) => [c.id, c.content]) : [],
  )
  const mails: MailMessage[] = []
  for (const { event, plan } of planned) {
    const direct = new Set(plan.direct)
    const body = event.kind === 'comment.created' ? (bodies.get(plan.commentId) ?? '') : event.kind === 'issue.opened' || event.kind === 'pull.opened' ? plan.issue.content : ''
    for (const id of plan.receivers) {
      const to = receivers.get(id)
      if (!to || to.preference === 'disabled' || (to.preference === 'onmention' && !direct.has(id))) continue
      mails.push(
        issueNotificationMail(deps.config, to.email, {
          kind: event.kind,
          repoFullName: `${plan.repo.ownerName}/${plan.repo.name}`,
          issue: { index: plan.issue.index, title: plan.issue.title, isPull: plan.issue.isPull },
          actorName: actors.get(plan.actorId) ?? 'Someone',
          body,
          commentId: event.kind === 'comment.created' ? plan.commentId : 0,
        }),
      )
    }
  }
  return mails
}
