package sdkerr

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"sdkpp/core/loopback"
	"sdkpp/core/rest"
)

func TestClassify(t *testing.T) {
	for name, tc := range map[string]struct {
		err  error
		want Failure
	}{
		"validation":    {Invalid("no"), Failure{Kind: KindValidationError}},
		"network":       {&rest.Error{Network: true}, Failure{Kind: KindNetworkError, Retryable: true}},
		"http":          {&rest.Error{Status: 404, Code: 10004, Body: "{}"}, Failure{Kind: KindHTTPError, Status: 404, Code: 10004, Body: "{}"}},
		"invalid grant": {fmt.Errorf("refresh: %w", &rest.Error{Status: 400, OAuthError: "invalid_grant"}), Failure{Kind: KindAuthorizationFailed, Status: 400}},
		"denied":        {&loopback.DeniedError{Code: "access_denied"}, Failure{Kind: KindAuthorizationFailed}},
		"state":         {loopback.ErrStateMismatch, Failure{Kind: KindAuthorizationFailed}},
		"aborted":       {ErrAborted, Failure{Kind: KindAborted}},
		"cancelled":     {context.Canceled, Failure{Kind: KindAborted}},
		"not ready":     {ErrNotReady, Failure{Kind: KindClientNotReady}},
		"closed":        {ErrClosed, Failure{Kind: KindClientDestroyed}},
		"other":         {errors.New("boom"), Failure{Kind: KindNetworkError}},
	} {
		assert.Equal(t, tc.want, Classify(tc.err), name)
	}
}

func TestNotReadyKeepsOnlyNotReady(t *testing.T) {
	wrapped := fmt.Errorf("send: %w", ErrNotReady)
	assert.Same(t, wrapped, NotReady(wrapped))
	assert.Equal(t, ErrNotReady, NotReady(errors.New("write: broken pipe")))
}
