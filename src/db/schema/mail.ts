import { sqliteTable, integer, text, index, uniqueIndex } from 'drizzle-orm/sqlite-core'
import { users } from './users'

/**
 * Mails waiting to be sent (src/mail/): written in the transaction of the change that causes them
 * (a sign-up, a reset asked for, an outbox event's notification), sent by the `mailer` job, one
 * row a message to one address; a sent one is deleted, one that failed waits until
 * `next_attempt_ms` and is given up (kept a week, `failed`: src/mail/queue.ts pruneFailedMails) after the
 * configured number of attempts.
 */
export const mailQueue = sqliteTable(
  'mail_queue',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    recipient: text('recipient').notNull(),
    subject: text('subject').notNull(),
    textBody: text('text_body').notNull(),
    htmlBody: text('html_body').notNull(),
    /** 'waiting' until sent (then deleted) or given up ('failed'). */
    status: text('status').notNull().default('waiting'),
    attempts: integer('attempts').notNull().default(0),
    /** Not sent before this (Unix milliseconds); a claim moves it past its lease; a failed one's: when it was given up. */
    nextAttemptMs: integer('next_attempt_ms').notNull(),
    lastError: text('last_error').notNull().default(''),
    createdUnix: integer('created_unix').notNull(),
  },
  (t) => [index('mail_queue_due_idx').on(t.status, t.nextAttemptMs)],
)
export type MailQueueRow = typeof mailQueue.$inferSelect

/**
 * Codes mailed to a user (an account's activation, an added address's, a password reset): only
 * the SHA-256 of the code is kept; each is used once (deleted as it is used), expires, and is
 * bound to the password the user had when it was made (`password_stamp`), so changing the password
 * voids it.
 */
export const userCodes = sqliteTable(
  'user_codes',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    userId: integer('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    /** 'activate' | 'activate_email' | 'reset_password' */
    purpose: text('purpose').notNull(),
    codeHash: text('code_hash').notNull(),
    /** The address an `activate_email` code confirms ('' otherwise). */
    email: text('email').notNull().default(''),
    passwordStamp: text('password_stamp').notNull(),
    createdUnix: integer('created_unix').notNull(),
    expiresUnix: integer('expires_unix').notNull(),
  },
  (t) => [uniqueIndex('user_codes_hash_uq').on(t.codeHash), index('user_codes_user_idx').on(t.userId, t.purpose)],
)
export type UserCodeRow = typeof userCodes.$inferSelect
