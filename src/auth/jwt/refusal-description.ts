import { errors } from 'jose'

// Why a JWT was refused, for the 401's message and its challenge's error_description: each is a
// fixed text, so none holds a double quote, a backslash or any part of the token (jose's own
// messages are not used, as they quote claim names).

// Keyed by `${claim} ${reason}`, as jose's JWTClaimValidationFailed names them.
const claimRefusals: Readonly<Record<string, string>> = {
  'iss missing': 'the token names no issuer',
  'iss check_failed': 'the token was issued by another issuer',
  'aud missing': 'the token names no audience',
  'aud check_failed': 'the token is for another audience',
  'sub missing': 'the token names no subject',
  'exp missing': 'the token has no expiry',
  'exp invalid': 'the token expiry is not a number',
  'nbf check_failed': 'the token is not valid yet',
  'nbf invalid': 'the token not-before time is not a number',
  'iat invalid': 'the token issue time is not a number',
}

export function refusalDescriptionOf (error: unknown): string {
  if (error instanceof errors.JWTExpired) return 'the token has expired'
  if (error instanceof errors.JWTClaimValidationFailed) {
    return claimRefusals[`${error.claim} ${error.reason}`] ?? 'the token claims are not valid'
  }
  if (error instanceof errors.JWSSignatureVerificationFailed) return 'the token signature is not valid'
  if (error instanceof errors.JOSEAlgNotAllowed) return 'the token is signed with an algorithm this service does not accept'
  if (error instanceof errors.JWSInvalid || error instanceof errors.JWTInvalid) return 'the token is not a well-formed JWT'
  if (error instanceof errors.JWKSNoMatchingKey) return 'no signing key matches the token'
  // A token without a kid, when the keys hold more than one for its algorithm (or keys sharing a
  // kid): trying each would let one token cost a signature check per key.
  if (error instanceof errors.JWKSMultipleMatchingKeys) return 'several signing keys match the token'
  // An unknown crit header, say.
  if (error instanceof errors.JOSENotSupported) return 'the token uses a JOSE feature this service does not support'
  // Anything else (a key of the set that does not import, an RSA key under 2048 bits) is still
  // the token's refusal, never a 500.
  return 'the bearer token is not valid'
}
