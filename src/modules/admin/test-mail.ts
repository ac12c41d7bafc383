import type { AppDeps } from '../../deps'
import { queueMails } from '../../mail/queue'
import { testMail } from '../../mail/messages'
import { notFound } from '../../lib/errors'
import { checkEmail } from '../../lib/validate'

/**
 * Gitea's SendTestMail (`/-/admin/config/test_mail`): a test mail to an address the site
 * administrator typed, queued as every mail is (sent by the mailer job, retried while the SMTP
 * server is unreachable). 404 while the mailer is off, 422 for a bad address.
 */
export async function queueTestMail(deps: AppDeps, email: string): Promise<void> {
  if (!deps.config.mailer) throw notFound('the mailer is off')
  checkEmail(email, 'Email')
  await queueMails(deps.db, [testMail(deps.config, email)])
}
