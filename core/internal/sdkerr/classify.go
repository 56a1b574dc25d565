package sdkerr

import (
	"context"
	"errors"

	"sdkpp/core/loopback"
	"sdkpp/core/rest"
)

// Kind is the category of a failure; its values are those of the public ErrorType.
type Kind int32

// The kinds of failure.
const (
	KindNone                Kind = 0
	KindNetworkError        Kind = 1
	KindHTTPError           Kind = 2
	KindClientNotReady      Kind = 3
	KindClientDestroyed     Kind = 5
	KindValidationError     Kind = 6
	KindAborted             Kind = 7
	KindAuthorizationFailed Kind = 8
)

// Failure is what a ClientResult says of a failed operation, besides its message.
type Failure struct {
	Kind       Kind
	Status     int    // HTTP status, 0 without a response
	Code       int    // the platform's JSON error code
	Body       string // the response body, not yet redacted
	Retryable  bool
	RetryAfter float64 // seconds
}

// Classify sorts err, which is not nil: the SDK's own failures, the service's answers (an
// OAuth invalid_grant means the grant is gone, as if the app was deauthorized: rule AU-6),
// the loopback redirect's refusals, and anything else as a network failure.
func Classify(err error) Failure {
	var re *rest.Error
	var denied *loopback.DeniedError
	var ve *ValidationError
	switch {
	case errors.As(err, &ve):
		return Failure{Kind: KindValidationError}
	case errors.As(err, &re) && re.Network:
		return Failure{Kind: KindNetworkError, Retryable: true}
	case errors.As(err, &re):
		f := Failure{Kind: KindHTTPError, Status: re.Status, Code: re.Code, Body: re.Body, Retryable: re.Retryable(), RetryAfter: re.RetryAfter}
		if re.OAuthError == "invalid_grant" {
			f.Kind = KindAuthorizationFailed
		}
		return f
	case errors.As(err, &denied), errors.Is(err, loopback.ErrStateMismatch), errors.Is(err, loopback.ErrNoCode):
		return Failure{Kind: KindAuthorizationFailed}
	case errors.Is(err, ErrAborted), errors.Is(err, context.Canceled):
		return Failure{Kind: KindAborted}
	case errors.Is(err, ErrNotReady):
		return Failure{Kind: KindClientNotReady}
	case errors.Is(err, ErrClosed):
		return Failure{Kind: KindClientDestroyed}
	}
	return Failure{Kind: KindNetworkError}
}
