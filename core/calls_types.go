package core

import "sdkpp/core/voice"

// The types of the Call surface (API.md section 4 and Client 5.10). They are written by hand
// until api/sdkpp.api declares the Call class; build/gen then emits them into api_gen.go under
// the same names, and this file goes.

// CallStatus is a call's state (Call::Status).
type CallStatus = voice.Status

// Values of CallStatus.
const (
	CallStatusDisconnected       = voice.StatusDisconnected
	CallStatusJoining            = voice.StatusJoining
	CallStatusConnecting         = voice.StatusConnecting
	CallStatusSignalingConnected = voice.StatusSignalingConnected
	CallStatusConnected          = voice.StatusConnected
	CallStatusReconnecting       = voice.StatusReconnecting
	CallStatusDisconnecting      = voice.StatusDisconnecting
)

// CallError is why a call failed (Call::Error).
type CallError = voice.Error

// Values of CallError.
const (
	CallErrorNone                      = voice.ErrorNone
	CallErrorSignalingConnectionFailed = voice.ErrorSignalingConnectionFailed
	CallErrorSignalingUnexpectedClose  = voice.ErrorSignalingUnexpectedClose
	CallErrorVoiceConnectionFailed     = voice.ErrorVoiceConnectionFailed
	CallErrorJoinTimeout               = voice.ErrorJoinTimeout
	CallErrorForbidden                 = voice.ErrorForbidden
)

// AudioModeType is a call's input mode.
type AudioModeType int32

// Values of AudioModeType.
const (
	AudioModeTypeMODE_UNINIT AudioModeType = 0
	AudioModeTypeMODE_VAD    AudioModeType = 1
	AudioModeTypeMODE_PTT    AudioModeType = 2
)

// CallOnStatusChanged: the call's status changed; errorDetail is the service's refusal code.
type CallOnStatusChanged = func(status CallStatus, error CallError, errorDetail int32)

// CallOnParticipantChanged: a participant joined (added) or left the call.
type CallOnParticipantChanged = func(userId uint64, added bool)

// CallOnSpeakingStatusChanged: a participant started or stopped being heard.
type CallOnSpeakingStatusChanged = func(userId uint64, isPlayingSound bool)

// CallOnVoiceStateChanged: a participant's self mute or deafen changed.
type CallOnVoiceStateChanged = func(userId uint64)

// ClientVoiceParticipantChangedCallback: a participant joined or left one of the player's calls.
type ClientVoiceParticipantChangedCallback = func(lobbyId uint64, memberId uint64, added bool)

// ClientEndCallCallback: EndCall has finished.
type ClientEndCallCallback = func()

// ClientEndCallsCallback: EndCalls has finished.
type ClientEndCallsCallback = func()

// ClientUserAudioReceivedCallback runs on the audio thread (not queued) for each participant's
// decoded frame: data is valid only during the call and may be edited; set *outShouldMute to
// suppress playback. It must copy and return.
type ClientUserAudioReceivedCallback = func(userId uint64, data []int16, samplesPerChannel uint64, sampleRate int32, channels uint64, outShouldMute *bool)

// ClientUserAudioCapturedCallback runs on the audio thread (not queued) for each captured frame:
// data is valid only during the call and may be edited. It must copy and return.
type ClientUserAudioCapturedCallback = func(data []int16, samplesPerChannel uint64, sampleRate int32, channels uint64)

// ClientGetInputDevicesCallback: the input devices.
type ClientGetInputDevicesCallback = func(devices []*AudioDevice)

// ClientGetOutputDevicesCallback: the output devices.
type ClientGetOutputDevicesCallback = func(devices []*AudioDevice)

// ClientGetCurrentInputDeviceCallback: the selected input device.
type ClientGetCurrentInputDeviceCallback = func(device *AudioDevice)

// ClientGetCurrentOutputDeviceCallback: the selected output device.
type ClientGetCurrentOutputDeviceCallback = func(device *AudioDevice)

// ClientSetInputDeviceCallback: result of SetInputDevice.
type ClientSetInputDeviceCallback = func(result *ClientResult)

// ClientSetOutputDeviceCallback: result of SetOutputDevice.
type ClientSetOutputDeviceCallback = func(result *ClientResult)

// ClientDeviceChangeCallback: devices appeared or disappeared.
type ClientDeviceChangeCallback = func(inputDevices []*AudioDevice, outputDevices []*AudioDevice)

// ClientNoAudioInputCallback: the input fell below (false) or rose above the no-input threshold.
type ClientNoAudioInputCallback = func(inputDetected bool)
