package records

import (
	"sdkpp/core/internal/opt"
	"sdkpp/core/rpc"
	"sdkpp/wire"
)

// The records the SDK fills from what the service, the desktop client or the audio engine report,
// and the wire names of the enums the service speaks.

// GuildMinimalOf is a guild of the player's guild list.
func GuildMinimalOf(w *wire.PartialGuild) *GuildMinimal {
	return &GuildMinimal{id: uint64(w.ID), name: w.Name}
}

// GuildChannelOf is a guild channel the service sent.
func GuildChannelOf(w *wire.GuildChannel) *GuildChannel {
	g := &GuildChannel{id: uint64(w.ID), name: w.Name, typ: ChannelType(w.Type), position: int32(w.Position), parentId: opt.Convert[uint64](w.ParentID),
		isLinkable: w.IsLinkable, isViewableAndWriteableByAllMembers: w.IsViewableAndWriteableByAllMembers}
	if l := w.LinkedLobby; l != nil {
		g.linkedLobby = &LinkedLobby{applicationId: uint64(l.ApplicationID), lobbyId: uint64(l.LobbyID)}
	}
	return g
}

// LinkedChannelOf is a lobby's linked channel, or nil when it has none.
func LinkedChannelOf(w *wire.LinkedChannel) *LinkedChannel {
	if w == nil {
		return nil
	}
	return &LinkedChannel{id: uint64(w.ID), guildId: uint64(w.GuildID), name: w.Name}
}

// UserMessageSummaryOf is one direct-message conversation: the other user and its last message.
func UserMessageSummaryOf(userID, lastMessageID uint64) *UserMessageSummary {
	return &UserMessageSummary{userId: userID, lastMessageId: lastMessageID}
}

// AudioDeviceOf is an audio device the engine reported.
func AudioDeviceOf(id, name string, isDefault bool) *AudioDevice {
	return &AudioDevice{id: id, name: name, isDefault: isDefault}
}

// Equals reports whether two devices are the same.
func (a *AudioDevice) Equals(rhs *AudioDevice) bool { return rhs != nil && *a == *rhs }

// VADThresholdOf is a call's voice activity threshold.
func VADThresholdOf(automatic bool, threshold float32) *VADThresholdSettings {
	return &VADThresholdSettings{automatic: automatic, vadThreshold: threshold}
}

// VoiceSettingsOf is the desktop client's voice settings.
func VoiceSettingsOf(w rpc.VoiceSettings) *VoiceSettings {
	mode := VoiceInputModeTypeVoiceActivity
	if w.Mode.Type == rpc.VoiceModePushToTalk {
		mode = VoiceInputModeTypePushToTalk
	}
	return &VoiceSettings{
		selfMute: w.Mute, selfDeaf: w.Deaf, inputMode: mode, pttKey: w.Mode.Shortcut,
		inputVolume: w.Input.Volume, outputVolume: w.Output.Volume,
		echoCancellation: w.EchoCancellation, noiseSuppression: w.NoiseSuppression,
		noiseCancellation: w.NoiseCancellation, automaticGainControl: w.AutomaticGainControl,
	}
}

// statuses are the wire names of the statuses a user may have.
var statuses = map[string]StatusType{"online": StatusTypeOnline, "idle": StatusTypeIdle, "dnd": StatusTypeDnd, "invisible": StatusTypeInvisible}

// StatusOf is the status of a wire name; Offline for an unknown one.
func StatusOf(name string) StatusType {
	if s, ok := statuses[name]; ok {
		return s
	}
	return StatusTypeOffline
}

// StatusName is the wire name of the status the player sets (Offline is sent as invisible).
func StatusName(s StatusType) string {
	switch s {
	case StatusTypeIdle:
		return "idle"
	case StatusTypeDnd:
		return "dnd"
	case StatusTypeInvisible, StatusTypeOffline:
		return "invisible"
	}
	return "online"
}

// providerTypes are the profiles' wire provider types (the two of Epic and of bots each).
var providerTypes = map[string]ExternalIdentityProviderType{
	"": ExternalIdentityProviderTypeNone, "OIDC": ExternalIdentityProviderTypeOIDC,
	"EPIC_ONLINE_SERVICES_ACCESS_TOKEN": ExternalIdentityProviderTypeEpicOnlineServices,
	"EPIC_ONLINE_SERVICES_ID_TOKEN":     ExternalIdentityProviderTypeEpicOnlineServices,
	"STEAM_SESSION_TICKET":              ExternalIdentityProviderTypeSteam, "UNITY_SERVICES_ID_TOKEN": ExternalIdentityProviderTypeUnity,
	"BOT": ExternalIdentityProviderTypeDiscordBot, "DISCORD_BOT_ISSUED_ACCESS_TOKEN": ExternalIdentityProviderTypeDiscordBot,
}

// ProviderTypeOf is the kind of identity provider of a wire provider type; Unknown for one sdkpp
// does not know.
func ProviderTypeOf(name string) ExternalIdentityProviderType {
	if t, ok := providerTypes[name]; ok {
		return t
	}
	return ExternalIdentityProviderTypeUnknown
}

// externalAuthNames are the wire names of AuthenticationExternalAuthType.
var externalAuthNames = map[AuthenticationExternalAuthType]string{
	AuthenticationExternalAuthTypeOIDC:                          "OIDC",
	AuthenticationExternalAuthTypeEpicOnlineServicesAccessToken: "EPIC_ONLINE_SERVICES_ACCESS_TOKEN",
	AuthenticationExternalAuthTypeEpicOnlineServicesIdToken:     "EPIC_ONLINE_SERVICES_ID_TOKEN",
	AuthenticationExternalAuthTypeSteamSessionTicket:            "STEAM_SESSION_TICKET",
	AuthenticationExternalAuthTypeUnityServicesIdToken:          "UNITY_SERVICES_ID_TOKEN",
	AuthenticationExternalAuthTypeDiscordBotIssuedAccessToken:   "DISCORD_BOT_ISSUED_ACCESS_TOKEN",
	AuthenticationExternalAuthTypeAppleIdToken:                  "APPLE_ID_TOKEN",
	AuthenticationExternalAuthTypePlayStationNetworkIdToken:     "PLAYSTATION_NETWORK_ID_TOKEN",
}

// ExternalAuthName is the wire name of an external credential's type; "" for an unknown one.
func ExternalAuthName(t AuthenticationExternalAuthType) string { return externalAuthNames[t] }
