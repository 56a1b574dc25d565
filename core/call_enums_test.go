package core

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"sdkpp/core/internal/sdkerr"
	"sdkpp/core/voice"
)

// The call layer reports voice.Status and voice.Error; the Call surface converts them by value
// into the generated CallStatus and CallError, so each value must mean the same in both.
func TestCallEnumsMatchTheCallLayer(t *testing.T) {
	for v := voice.StatusDisconnected; v <= voice.StatusDisconnecting; v++ {
		assert.Equal(t, v.String(), CallStatus(v).String(), "status %d", v)
		assert.True(t, CallStatus(v).Valid())
	}
	assert.False(t, CallStatus(voice.StatusDisconnecting+1).Valid(), "the call layer has no status the API lacks")
	for v := voice.ErrorNone; v <= voice.ErrorForbidden; v++ {
		assert.Equal(t, v.String(), CallError(v).String(), "error %d", v)
		assert.True(t, CallError(v).Valid())
	}
	assert.False(t, CallError(voice.ErrorForbidden+1).Valid())
}

// core/internal/sdkerr sorts failures into kinds that resultOf converts by value into ErrorType.
func TestErrorKindsMatchErrorType(t *testing.T) {
	for kind, want := range map[sdkerr.Kind]ErrorType{
		sdkerr.KindNone: ErrorTypeNone, sdkerr.KindNetworkError: ErrorTypeNetworkError, sdkerr.KindHTTPError: ErrorTypeHTTPError,
		sdkerr.KindClientNotReady: ErrorTypeClientNotReady, sdkerr.KindClientDestroyed: ErrorTypeClientDestroyed,
		sdkerr.KindValidationError: ErrorTypeValidationError, sdkerr.KindAborted: ErrorTypeAborted,
		sdkerr.KindAuthorizationFailed: ErrorTypeAuthorizationFailed,
	} {
		assert.Equal(t, want, ErrorType(kind))
	}
}
