// Package sdkerr holds the kinds of failure the SDK reports that are not the service's answers:
// a request refused before anything was sent, an operation aborted, a client not ready or closed.
// Classify sorts any failure, these and the service's answers, into the kind of failure that
// becomes the ErrorType of a ClientResult.
package sdkerr

import (
	"errors"
	"fmt"
)

// ValidationError is a request the SDK refused before sending anything.
type ValidationError struct{ Msg string }

// Error returns the reason.
func (e *ValidationError) Error() string { return e.Msg }

// Invalid returns a ValidationError with a formatted reason.
func Invalid(format string, args ...any) error {
	return &ValidationError{Msg: fmt.Sprintf(format, args...)}
}

var (
	// ErrAborted is an operation the game or a newer operation of the same kind ended.
	ErrAborted = errors.New("aborted")
	// ErrNotReady is an operation that needs a token or a connection the Client does not have.
	ErrNotReady = errors.New("the client is not ready")
	// ErrClosed is an operation of a Client that is closed.
	ErrClosed = errors.New("the client is closed")
)
