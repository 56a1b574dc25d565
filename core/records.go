package core

import (
	"fmt"
	"strings"
)

// Records are value snapshots: getters return copies, setters copy what they are given.
// They are not safe for concurrent use; the C ABI serializes calls on one record.

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
func (c *AuthorizationCodeChallenge) Clone() *AuthorizationCodeChallenge { v := *c; return &v }

// Method returns the challenge method.
func (c *AuthorizationCodeChallenge) Method() AuthenticationCodeChallengeMethod { return c.method }

// SetMethod sets the challenge method.
func (c *AuthorizationCodeChallenge) SetMethod(m AuthenticationCodeChallengeMethod) { c.method = m }

// Challenge returns the base64url challenge.
func (c *AuthorizationCodeChallenge) Challenge() string { return c.challenge }

// SetChallenge sets the base64url challenge.
func (c *AuthorizationCodeChallenge) SetChallenge(s string) { c.challenge = s }

// AuthorizationCodeVerifier is a PKCE pair made by Client.CreateAuthorizationCodeVerifier.
type AuthorizationCodeVerifier struct {
	challenge AuthorizationCodeChallenge
	verifier  string
}

// Clone returns a deep copy.
func (v *AuthorizationCodeVerifier) Clone() *AuthorizationCodeVerifier { c := *v; return &c }

// Challenge returns a copy of the challenge, for AuthorizationArgs.SetCodeChallenge.
func (v *AuthorizationCodeVerifier) Challenge() *AuthorizationCodeChallenge {
	return v.challenge.Clone()
}

// SetChallenge replaces the challenge with a copy of c.
func (v *AuthorizationCodeVerifier) SetChallenge(c *AuthorizationCodeChallenge) { v.challenge = *c }

// Verifier returns the verifier, for Client.GetToken.
func (v *AuthorizationCodeVerifier) Verifier() string { return v.verifier }

// SetVerifier sets the verifier.
func (v *AuthorizationCodeVerifier) SetVerifier(s string) {
	Secrets.Add(s)
	v.verifier = s
}

// AuthorizationArgs are the arguments of Client.Authorize.
type AuthorizationArgs struct {
	clientID          uint64
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

// ClientId returns the application id; 0 means the Client's application id (rule AA-1).
func (a *AuthorizationArgs) ClientId() uint64 { return a.clientID }

// SetClientId sets the application id.
func (a *AuthorizationArgs) SetClientId(id uint64) { a.clientID = id }

// Scopes returns the space-separated scopes.
func (a *AuthorizationArgs) Scopes() string { return a.scopes }

// SetScopes sets the space-separated scopes.
func (a *AuthorizationArgs) SetScopes(s string) { a.scopes = s }

// State returns the OAuth state, if set.
func (a *AuthorizationArgs) State() (string, bool) { return optOf(a.state) }

// SetState sets the OAuth state; nil clears it.
func (a *AuthorizationArgs) SetState(s *string) { a.state = clonePtr(s) }

// Nonce returns the OpenID Connect nonce, if set.
func (a *AuthorizationArgs) Nonce() (string, bool) { return optOf(a.nonce) }

// SetNonce sets the nonce; nil clears it.
func (a *AuthorizationArgs) SetNonce(s *string) { a.nonce = clonePtr(s) }

// CodeChallenge returns a copy of the PKCE challenge, or nil.
func (a *AuthorizationArgs) CodeChallenge() *AuthorizationCodeChallenge {
	if a.codeChallenge == nil {
		return nil
	}
	return a.codeChallenge.Clone()
}

// SetCodeChallenge sets a copy of c; nil clears it.
func (a *AuthorizationArgs) SetCodeChallenge(c *AuthorizationCodeChallenge) {
	if c == nil {
		a.codeChallenge = nil
		return
	}
	a.codeChallenge = c.Clone()
}

// IntegrationType returns the installation context, if set.
func (a *AuthorizationArgs) IntegrationType() (IntegrationType, bool) {
	return optOf(a.integrationType)
}

// SetIntegrationType sets the installation context; nil clears it.
func (a *AuthorizationArgs) SetIntegrationType(t *IntegrationType) { a.integrationType = clonePtr(t) }

// CustomSchemeParam returns the mobile redirect scheme, if set.
func (a *AuthorizationArgs) CustomSchemeParam() (string, bool) { return optOf(a.customSchemeParam) }

// SetCustomSchemeParam sets the mobile redirect scheme; nil clears it.
func (a *AuthorizationArgs) SetCustomSchemeParam(s *string) { a.customSchemeParam = clonePtr(s) }

// DeviceAuthorizationArgs are the arguments of the device flow (consoles and TVs).
type DeviceAuthorizationArgs struct {
	clientID uint64
	scopes   string
}

// NewDeviceAuthorizationArgs returns empty arguments.
func NewDeviceAuthorizationArgs() *DeviceAuthorizationArgs { return &DeviceAuthorizationArgs{} }

// Clone returns a copy.
func (a *DeviceAuthorizationArgs) Clone() *DeviceAuthorizationArgs { c := *a; return &c }

// ClientId returns the application id; 0 means the Client's.
func (a *DeviceAuthorizationArgs) ClientId() uint64 { return a.clientID }

// SetClientId sets the application id.
func (a *DeviceAuthorizationArgs) SetClientId(id uint64) { a.clientID = id }

// Scopes returns the space-separated scopes.
func (a *DeviceAuthorizationArgs) Scopes() string { return a.scopes }

// SetScopes sets the space-separated scopes.
func (a *DeviceAuthorizationArgs) SetScopes(s string) { a.scopes = s }

// ClientCreateOptions configure a new Client.
type ClientCreateOptions struct {
	webBase           string
	apiBase           string
	audioSystem       AudioSystem
	preventCommsForBT bool
	cpuAffinityMask   *uint64
}

// NewClientCreateOptions returns the default options.
func NewClientCreateOptions() *ClientCreateOptions {
	return &ClientCreateOptions{webBase: DefaultWebBase, apiBase: DefaultAPIBase}
}

// Clone returns a deep copy.
func (o *ClientCreateOptions) Clone() *ClientCreateOptions {
	c := *o
	c.cpuAffinityMask = clonePtr(o.cpuAffinityMask)
	return &c
}

// WebBase returns the web base URL.
func (o *ClientCreateOptions) WebBase() string { return o.webBase }

// SetWebBase sets the web base URL.
func (o *ClientCreateOptions) SetWebBase(s string) { o.webBase = s }

// ApiBase returns the HTTP API base URL.
func (o *ClientCreateOptions) ApiBase() string { return o.apiBase }

// SetApiBase sets the HTTP API base URL.
func (o *ClientCreateOptions) SetApiBase(s string) { o.apiBase = s }

// ExperimentalAudioSystem returns the audio system.
func (o *ClientCreateOptions) ExperimentalAudioSystem() AudioSystem { return o.audioSystem }

// SetExperimentalAudioSystem sets the audio system.
func (o *ClientCreateOptions) SetExperimentalAudioSystem(a AudioSystem) { o.audioSystem = a }

// ExperimentalAndroidPreventCommsForBluetooth returns the Android Bluetooth flag.
func (o *ClientCreateOptions) ExperimentalAndroidPreventCommsForBluetooth() bool {
	return o.preventCommsForBT
}

// SetExperimentalAndroidPreventCommsForBluetooth sets the Android Bluetooth flag.
func (o *ClientCreateOptions) SetExperimentalAndroidPreventCommsForBluetooth(b bool) {
	o.preventCommsForBT = b
}

// CpuAffinityMask returns the thread affinity hint, if set.
func (o *ClientCreateOptions) CpuAffinityMask() (uint64, bool) { return optOf(o.cpuAffinityMask) }

// SetCpuAffinityMask sets the thread affinity hint; nil clears it.
func (o *ClientCreateOptions) SetCpuAffinityMask(m *uint64) { o.cpuAffinityMask = clonePtr(m) }

// ClientResult is the outcome of an asynchronous operation.
type ClientResult struct {
	typ          ErrorType
	err          string
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
	return &ClientResult{typ: t, err: fmt.Sprintf(format, args...)}
}

// Clone returns a deep copy.
func (r *ClientResult) Clone() *ClientResult { c := *r; return &c }

// ToString returns a readable one-line summary.
func (r *ClientResult) ToString() string {
	if r.successful {
		return "ClientResult{Successful}"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "ClientResult{Type: %s", r.typ)
	if r.err != "" {
		fmt.Fprintf(&b, ", Error: %q", r.err)
	}
	if r.errorCode != 0 {
		fmt.Fprintf(&b, ", ErrorCode: %d", r.errorCode)
	}
	if r.status != HttpStatusCodeNone {
		fmt.Fprintf(&b, ", Status: %d", int32(r.status))
	}
	if r.retryable {
		fmt.Fprintf(&b, ", Retryable, RetryAfter: %gs", r.retryAfter)
	}
	b.WriteString("}")
	return Secrets.String(b.String())
}

// Type returns the failure category.
func (r *ClientResult) Type() ErrorType { return r.typ }

// SetType sets the failure category.
func (r *ClientResult) SetType(t ErrorType) { r.typ = t }

// Error returns the error message.
func (r *ClientResult) Error() string { return r.err }

// SetError sets the error message.
func (r *ClientResult) SetError(s string) { r.err = s }

// ErrorCode returns the backend error code.
func (r *ClientResult) ErrorCode() int32 { return r.errorCode }

// SetErrorCode sets the backend error code.
func (r *ClientResult) SetErrorCode(c int32) { r.errorCode = c }

// Status returns the HTTP status.
func (r *ClientResult) Status() HttpStatusCode { return r.status }

// SetStatus sets the HTTP status.
func (r *ClientResult) SetStatus(s HttpStatusCode) { r.status = s }

// ResponseBody returns the raw HTTP body.
func (r *ClientResult) ResponseBody() string { return r.responseBody }

// SetResponseBody sets the raw HTTP body.
func (r *ClientResult) SetResponseBody(s string) { r.responseBody = s }

// Successful reports success.
func (r *ClientResult) Successful() bool { return r.successful }

// SetSuccessful sets success.
func (r *ClientResult) SetSuccessful(b bool) { r.successful = b }

// Retryable reports whether trying again may succeed.
func (r *ClientResult) Retryable() bool { return r.retryable }

// SetRetryable sets Retryable.
func (r *ClientResult) SetRetryable(b bool) { r.retryable = b }

// RetryAfter returns the seconds to wait before trying again.
func (r *ClientResult) RetryAfter() float32 { return r.retryAfter }

// SetRetryAfter sets RetryAfter.
func (r *ClientResult) SetRetryAfter(s float32) { r.retryAfter = s }
