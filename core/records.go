package core

import (
	"fmt"
	"strings"
)

// Records are value snapshots: getters return copies, setters copy what they are given.
// They are not safe for concurrent use; the C ABI serializes calls on one record. Each record's
// struct (one field per property of api/sdkpp.api, named after it), constructor, Clone, getters
// and setters are generated into records_gen.go; this file holds what api/sdkpp.api marks as
// written by hand: the constructors that set defaults and the results' helpers. Activity and
// ActivityInvite (custom: they hold more than their properties) are in activity.go.

// NewAuthorizationCodeChallenge returns an empty S256 challenge.
func NewAuthorizationCodeChallenge() *AuthorizationCodeChallenge {
	return &AuthorizationCodeChallenge{method: AuthenticationCodeChallengeMethodS256}
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
	return Secrets.String(b.String())
}
