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

// InvalidIf is Invalid(format, args...) when cond holds, else nil.
func InvalidIf(cond bool, format string, args ...any) error {
	if !cond {
		return nil
	}
	return Invalid(format, args...)
}

// First is the first of errs that is not nil: the first check that failed.
func First(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

var (
	// ErrAborted is an operation the game or a newer operation of the same kind ended.
	ErrAborted = errors.New("aborted")
	// ErrNotReady is an operation that needs a token or a connection the Client does not have.
	ErrNotReady = errors.New("the client is not ready")
	// ErrClosed is an operation of a Client that is closed.
	ErrClosed = errors.New("the client is closed")
)

// NotReady is err when it is ErrNotReady (wrapped or not), else ErrNotReady: an operation that
// could not reach the service over its connection failed because the Client is not ready.
func NotReady(err error) error {
	if errors.Is(err, ErrNotReady) {
		return err
	}
	return ErrNotReady
}
