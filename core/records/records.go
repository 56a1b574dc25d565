package records

import (
	"fmt"
	"strings"

	"sdkpp/core/internal/sdkerr"
	"sdkpp/core/redact"
	"sdkpp/wire"
)

// Default service addresses: the sdkpp service on its default local port.
const (
	DefaultAPIBase = DefaultWebBase + wire.APIPrefix
	DefaultWebBase = "http://" + wire.DefaultAddr
)

// NewAuthorizationCodeChallenge returns an empty S256 challenge.
func NewAuthorizationCodeChallenge() *AuthorizationCodeChallenge {
	return &AuthorizationCodeChallenge{method: AuthenticationCodeChallengeMethodS256}
}

// NewAuthorizationCodeVerifier returns the PKCE pair of verifier and its S256 challenge.
func NewAuthorizationCodeVerifier(verifier, challenge string) *AuthorizationCodeVerifier {
	redact.Secrets.Add(verifier)
	return &AuthorizationCodeVerifier{
		challenge: AuthorizationCodeChallenge{method: AuthenticationCodeChallengeMethodS256, challenge: challenge},
		verifier:  verifier,
	}
}

// NewClientCreateOptions returns the default options.
func NewClientCreateOptions() *ClientCreateOptions {
	return &ClientCreateOptions{webBase: DefaultWebBase, apiBase: DefaultAPIBase}
}

// Success returns a successful result.
func Success() *ClientResult { return &ClientResult{successful: true} }

// Failure returns a failed result of type t.
func Failure(t ErrorType, format string, args ...any) *ClientResult {
	return &ClientResult{typ: t, error: fmt.Sprintf(format, args...)}
}

// ResultOf turns an operation's error into a ClientResult (core/internal/sdkerr sorts it); nil is
// success. The message and the response body are redacted.
func ResultOf(err error) *ClientResult {
	if err == nil {
		return Success()
	}
	f := sdkerr.Classify(err)
	return &ClientResult{typ: ErrorType(f.Kind), error: redact.Secrets.String(err.Error()), status: HttpStatusCode(f.Status),
		errorCode: int32(f.Code), responseBody: redact.Secrets.String(f.Body), retryable: f.Retryable, retryAfter: float32(f.RetryAfter)}
}

// ToString returns a readable one-line summary.
func (c *ClientResult) ToString() string {
	if c.successful {
		return "ClientResult{Successful}"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "ClientResult{Type: %s", c.typ)
	if c.error != "" {
		fmt.Fprintf(&b, ", Error: %q", c.error)
	}
	if c.errorCode != 0 {
		fmt.Fprintf(&b, ", ErrorCode: %d", c.errorCode)
	}
	if c.status != HttpStatusCodeNone {
		fmt.Fprintf(&b, ", Status: %d", int32(c.status))
	}
	if c.retryable {
		fmt.Fprintf(&b, ", Retryable, RetryAfter: %gs", c.retryAfter)
	}
	b.WriteString("}")
	return redact.Secrets.String(b.String())
}
