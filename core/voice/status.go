package voice

import "fmt"

// Status is a call's state; the values are those of Call::Status in the C API.
type Status int32

// The call states.
const (
	StatusDisconnected       Status = 0
	StatusJoining            Status = 1 // op 4 sent, waiting for the service to admit the call
	StatusConnecting         Status = 2 // admitted; binding the UDP flow to the relay
	StatusSignalingConnected Status = 3 // admitted, the flow not bound yet (not used: Connecting covers it)
	StatusConnected          Status = 4 // the flow is bound: media flows
	StatusReconnecting       Status = 5 // the relay stopped answering; binding again
	StatusDisconnecting      Status = 6 // End was called
)

// String names the status as Call::StatusToString does.
func (s Status) String() string {
	switch s {
	case StatusDisconnected:
		return "Disconnected"
	case StatusJoining:
		return "Joining"
	case StatusConnecting:
		return "Connecting"
	case StatusSignalingConnected:
		return "SignalingConnected"
	case StatusConnected:
		return "Connected"
	case StatusReconnecting:
		return "Reconnecting"
	case StatusDisconnecting:
		return "Disconnecting"
	}
	return fmt.Sprintf("Status(%d)", int32(s))
}

// Error is why a call failed; the values are those of Call::Error in the C API.
type Error int32

// The call errors.
const (
	ErrorNone                      Error = 0
	ErrorSignalingConnectionFailed Error = 1 // the gateway could not carry the join
	ErrorSignalingUnexpectedClose  Error = 2 // the gateway connection dropped during the call (ST-4)
	ErrorVoiceConnectionFailed     Error = 3 // the relay did not answer
	ErrorJoinTimeout               Error = 4 // the service did not admit the call in time
	ErrorForbidden                 Error = 5 // the service refused the call (detail: the wire/voice code)
)

// String names the error as Call::ErrorToString does.
func (e Error) String() string {
	switch e {
	case ErrorNone:
		return "None"
	case ErrorSignalingConnectionFailed:
		return "SignalingConnectionFailed"
	case ErrorSignalingUnexpectedClose:
		return "SignalingUnexpectedClose"
	case ErrorVoiceConnectionFailed:
		return "VoiceConnectionFailed"
	case ErrorJoinTimeout:
		return "JoinTimeout"
	case ErrorForbidden:
		return "Forbidden"
	}
	return fmt.Sprintf("Error(%d)", int32(e))
}
