package core

import (
	"fmt"
	"strings"
)

// Records are value snapshots: getters return copies, setters copy what they are given.
// They are not safe for concurrent use; the C ABI serializes calls on one record. Each record's
// struct is written here (or beside the capability it carries) with one field per property of
// api/sdkpp.api, named after it; the getters and setters are generated into records_gen.go.

// AuthorizationCodeChallenge is a PKCE code challenge: the S256 hash of a verifier.
type AuthorizationCodeChallenge struct {
	method    AuthenticationCodeChallengeMethod
	challenge string
}

// NewAuthorizationCodeChallenge returns an empty S256 challenge.
func NewAuthorizationCodeChallenge() *AuthorizationCodeChallenge {
	return &AuthorizationCodeChallenge{method: AuthenticationCodeChallengeMethodS256}
}

// Clone returns a deep copy.
func (a *AuthorizationCodeChallenge) Clone() *AuthorizationCodeChallenge { v := *a; return &v }

// AuthorizationCodeVerifier is a PKCE pair made by Client.CreateAuthorizationCodeVerifier.
type AuthorizationCodeVerifier struct {
	challenge AuthorizationCodeChallenge
	verifier  string
}

// Clone returns a deep copy.
func (a *AuthorizationCodeVerifier) Clone() *AuthorizationCodeVerifier { v := *a; return &v }

// AuthorizationArgs are the arguments of Client.Authorize.
type AuthorizationArgs struct {
	clientId          uint64
	scopes            string
	state             *string
	nonce             *string
	codeChallenge     *AuthorizationCodeChallenge
	integrationType   *IntegrationType
	customSchemeParam *string
}

// NewAuthorizationArgs returns empty arguments.
func NewAuthorizationArgs() *AuthorizationArgs { return &AuthorizationArgs{} }

// Clone returns a deep copy.
func (a *AuthorizationArgs) Clone() *AuthorizationArgs {
	c := *a
	c.state = clonePtr(a.state)
	c.nonce = clonePtr(a.nonce)
	c.integrationType = clonePtr(a.integrationType)
	c.customSchemeParam = clonePtr(a.customSchemeParam)
	if a.codeChallenge != nil {
		c.codeChallenge = a.codeChallenge.Clone()
	}
	return &c
}

func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

// equalPtr reports whether a and b are both absent, or both present with equal values.
func equalPtr[T comparable](a, b *T) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// equalBy is equalPtr for values that eq compares.
func equalBy[T any](a, b *T, eq func(x, y *T) bool) bool {
	if a == nil || b == nil {
		return a == b
	}
	return eq(a, b)
}

func optOf[T any](p *T) (T, bool) {
	if p == nil {
		var zero T
		return zero, false
	}
	return *p, true
}

// DeviceAuthorizationArgs are the arguments of the device flow (consoles and TVs).
type DeviceAuthorizationArgs struct {
	clientId uint64
	scopes   string
}

// NewDeviceAuthorizationArgs returns empty arguments.
func NewDeviceAuthorizationArgs() *DeviceAuthorizationArgs { return &DeviceAuthorizationArgs{} }

// Clone returns a copy.
func (d *DeviceAuthorizationArgs) Clone() *DeviceAuthorizationArgs { v := *d; return &v }

// ClientCreateOptions configure a new Client.
type ClientCreateOptions struct {
	webBase                                     string
	apiBase                                     string
	experimentalAudioSystem                     AudioSystem
	experimentalAndroidPreventCommsForBluetooth bool
	cpuAffinityMask                             *uint64
}

// NewClientCreateOptions returns the default options.
func NewClientCreateOptions() *ClientCreateOptions {
	return &ClientCreateOptions{webBase: DefaultWebBase, apiBase: DefaultAPIBase}
}

// Clone returns a deep copy.
func (c *ClientCreateOptions) Clone() *ClientCreateOptions {
	v := *c
	v.cpuAffinityMask = clonePtr(c.cpuAffinityMask)
	return &v
}

// ClientResult is the outcome of an asynchronous operation.
type ClientResult struct {
	typ          ErrorType
	error        string
	errorCode    int32
	status       HttpStatusCode
	responseBody string
	successful   bool
	retryable    bool
	retryAfter   float32
}

// Success returns a successful result.
func Success() *ClientResult { return &ClientResult{successful: true} }

// Failure returns a failed result of type t.
func Failure(t ErrorType, format string, args ...any) *ClientResult {
	return &ClientResult{typ: t, error: fmt.Sprintf(format, args...)}
}

// Clone returns a deep copy.
func (c *ClientResult) Clone() *ClientResult { v := *c; return &v }

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
