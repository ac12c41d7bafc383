import { t } from 'elysia'

const PayloadUserSchema = t.Object({
  name: t.String(),
  email: t.String(),
  username: t.String(),
}, { $id: '#/components/schemas/PayloadUser' })

const PayloadCommitVerificationSchema = t.Object({
  verified: t.Boolean(),
  reason: t.String(),
  signature: t.String(),
  payload: t.String(),
}, { $id: '#/components/schemas/PayloadCommitVerification' })

const PayloadCommitSchema = t.Object({
  id: t.String(),
  message: t.String(),
  url: t.String(),
  author: PayloadUserSchema,
  committer: PayloadUserSchema,
  verification: t.Nullable(PayloadCommitVerificationSchema),
  timestamp: t.String(),
}, { $id: '#/components/schemas/PayloadCommit' })

export const BranchSchema = t.Object({
  name: t.String(),
  commit: PayloadCommitSchema,
  protected: t.Boolean(),
  user_can_push: t.Boolean(),
  user_can_merge: t.Boolean(),
  enable_status_check: t.Boolean(),
  status_check_contexts: t.Array(t.String()),
  required_approvals: t.Integer(),
}, { $id: '#/components/schemas/Branch' })

