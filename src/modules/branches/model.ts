import { t } from 'elysia'
import { Int } from '../users/model'

const PayloadUserSchema = t.Object({
  name: t.String(),
  email: t.String(),
  username: t.String(),
}, { $id: '#/components/schemas/PayloadUser' })

/** Gitea's PayloadCommitVerification: of a branch's commit, of an annotated tag (git-data). */
export const PayloadCommitVerificationSchema = t.Object({
  verified: t.Boolean(),
  reason: t.String(),
  signature: t.String(),
  signer: t.Optional(t.Nullable(PayloadUserSchema)),
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
  required_approvals: Int(),
  effective_branch_protection_name: t.String(),
}, { $id: '#/components/schemas/Branch' })


/** Longest branch name taken (Gitea's binding: MaxSize(100)). */
export const MAX_BRANCH_NAME = 100

/** CreateBranchRepoOption: the source is `old_ref_name` (branch, tag or commit), else `old_branch_name` (deprecated), else the default branch. */
export const CreateBranchRepoOption = t.Object(
  {
    new_branch_name: t.String({ maxLength: MAX_BRANCH_NAME }),
    old_branch_name: t.Optional(t.String({ maxLength: MAX_BRANCH_NAME })),
    old_ref_name: t.Optional(t.String({ maxLength: MAX_BRANCH_NAME })),
  },
  { $id: '#/components/schemas/CreateBranchRepoOption' },
)

/** UpdateBranchRepoOption: the branch's new name. */
export const UpdateBranchRepoOption = t.Object(
  { name: t.String({ maxLength: MAX_BRANCH_NAME }) },
  { $id: '#/components/schemas/UpdateBranchRepoOption' },
)
