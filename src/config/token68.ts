// RFC 6750 section 2.1: the characters a bearer token may hold. Configured tokens are checked
// against it at start-up, so a token that could never be sent is refused there, not per request.
export const token68Source = '[A-Za-z0-9\\-._~+/]+=*'
export const token68 = new RegExp(`^${token68Source}$`)
