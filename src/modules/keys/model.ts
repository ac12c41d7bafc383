import { t } from 'elysia'
import { QueryText, numeric } from '../../lib/validate'
import { Int, PlainUserSchema } from '../users/model'
import { pageQueryFields } from '../../lib/pagination'

/** The PublicKey record; empty/false optional keys are omitted like Gitea does. */
export const PublicKeySchema = t.Object(
  {
    id: Int(),
    key: t.String(),
    url: t.Optional(t.String()),
    title: t.Optional(t.String()),
    fingerprint: t.Optional(t.String()),
    created_at: t.String(),
    key_type: t.Optional(t.String()),
    read_only: t.Optional(t.Boolean()),
    user: t.Optional(PlainUserSchema),
  },
  { $id: '#/components/schemas/PublicKey' },
)

const GPGKeyEmailSchema = t.Object({ email: t.String(), verified: t.Boolean() }, { $id: '#/components/schemas/GPGKeyEmail' })

const gpgKeyFields = {
  id: Int(),
  primary_key_id: t.String(),
  key_id: t.String(),
  public_key: t.String(),
  emails: t.Array(GPGKeyEmailSchema),
  can_sign: t.Boolean(),
  can_encrypt_comms: t.Boolean(),
  can_encrypt_storage: t.Boolean(),
  can_certify: t.Boolean(),
  created_at: t.String(),
  expires_at: t.String(),
  verified: t.Boolean(),
}

/** The GPGKey record; subkeys have the same shape with empty lists. */
export const GPGKeySchema = t.Object(
  { ...gpgKeyFields, subkeys: t.Array(t.Object({ ...gpgKeyFields, subkeys: t.Array(t.Any()) })) },
  { $id: '#/components/schemas/GPGKey' },
)

/** CreateKeyOption. */
export const CreateKeyOption = t.Object(
  {
    title: t.String({ description: 'Title of the key to add' }),
    key: t.String({ description: 'An armored SSH key to add' }),
    read_only: t.Optional(t.Boolean({ description: 'Describe if the key has only read access or read/write' })),
  },
  { $id: '#/components/schemas/CreateKeyOption' },
)

/** CreateGPGKeyOption. */
export const CreateGPGKeyOption = t.Object(
  {
    armored_public_key: t.String({ description: 'An armored GPG key to add' }),
    armored_signature: t.Optional(t.String()),
  },
  { $id: '#/components/schemas/CreateGPGKeyOption' },
)

/** VerifyGPGKeyOption: an armored detached signature of the user's token (GET /user/gpg_key_token) by the key. */
export const VerifyGPGKeyOption = t.Object(
  {
    key_id: t.String({ description: 'The key ID of the GPG key to verify' }),
    armored_signature: t.String({ description: 'The armored signature to verify the GPG key' }),
  },
  { $id: '#/components/schemas/VerifyGPGKeyOption' },
)

/** The verification token: plain text. */
export const GPGKeyToken = t.String({ description: 'the text to sign (detached, armored) with the key to verify' })

export const KeyIdParams = t.Object({ id: numeric({ description: 'id of the key' }) })
export const UserKeyParams = t.Object({ username: t.String(), id: numeric({ description: 'id of the key' }) })
export const KeyListQuery = t.Object({ ...pageQueryFields, fingerprint: QueryText('fingerprint of the key') })
