package wire

import "encoding/json"

// Application command types (the platform's).
const (
	CommandChatInput = 1 // a slash command
	CommandUser      = 2 // a context-menu command on a user
	CommandMessage   = 3 // a context-menu command on a message
)

// Interaction types (the platform's).
const (
	InteractionApplicationCommand = 2
	InteractionAutocomplete       = 4 // APPLICATION_COMMAND_AUTOCOMPLETE: the user types a focused option
	InteractionModalSubmit        = 5
)

// Interaction callback types (the platform's).
const (
	CallbackChannelMessage         = 4 // CHANNEL_MESSAGE_WITH_SOURCE
	CallbackDeferredChannelMessage = 5 // DEFERRED_CHANNEL_MESSAGE_WITH_SOURCE
	CallbackDeferredUpdateMessage  = 6 // DEFERRED_UPDATE_MESSAGE: a modal submission acknowledged, nothing shown
	CallbackAutocompleteResult     = 8 // APPLICATION_COMMAND_AUTOCOMPLETE_RESULT
	CallbackModal                  = 9 // MODAL
)

// Option types of subcommands (the platform's); 3 STRING to 11 ATTACHMENT are values.
const (
	OptionSubCommand      = 1
	OptionSubCommandGroup = 2
	OptionString          = 3
	OptionInteger         = 4
	OptionNumber          = 10
)

// MaxChoices is how many choices an option, or an autocomplete result, has at most.
const MaxChoices = 25

// EventAutocompleteResponse is the dispatch that brings the invoking user's sessions an app's
// autocomplete choices (the platform's client event).
const EventAutocompleteResponse = "APPLICATION_COMMAND_AUTOCOMPLETE_RESPONSE"

// CodeUnknownWebhook is the error of an interaction webhook route whose token names no
// interaction (or one past its 15 minutes).
const CodeUnknownWebhook = 10015

// Component types of modals. 1 to 18 are the platform's documented numbers; Radio Group,
// Checkbox Group and Checkbox are its recent ones (21, 22, 23).
const (
	ComponentActionRow     = 1
	ComponentStringSelect  = 3
	ComponentTextInput     = 4
	ComponentUserSelect    = 5
	ComponentRoleSelect    = 6
	ComponentMention       = 7 // mentionable select
	ComponentChannelSelect = 8
	ComponentTextDisplay   = 10
	ComponentLabel         = 18
	ComponentFileUpload    = 19
	ComponentRadioGroup    = 21
	ComponentCheckboxGroup = 22
	ComponentCheckbox      = 23
)

// Error codes of application commands and interactions.
const (
	CodeUnknownInteraction        = 10062
	CodeUnknownApplicationCommand = 10063
	CodeMaxApplicationCommands    = 30032
	CodeInteractionAcknowledged   = 40060
)

// CommandOption is an option of a CHAT_INPUT command: a subcommand (1), a group of subcommands
// (2, whose Options are subcommands), or a value (3 STRING to 11 ATTACHMENT), which may offer
// Choices or Autocomplete (STRING, INTEGER and NUMBER only, not both).
type CommandOption struct {
	Type         int             `json:"type"`
	Name         string          `json:"name"`
	Description  string          `json:"description"`
	Required     bool            `json:"required,omitempty"`
	Choices      []CommandChoice `json:"choices,omitempty"`
	Options      []CommandOption `json:"options,omitempty"`
	Autocomplete bool            `json:"autocomplete,omitempty"`
}

// CommandChoice is a choice of an option, or of an autocomplete result: a name shown (1 to 100
// characters) and the value sent (a string of up to 100 characters, or a number).
type CommandChoice struct {
	Name  string          `json:"name"`
	Value json.RawMessage `json:"value"`
}

// AutocompleteResponse is the d of EventAutocompleteResponse: the choices the app gave for the
// interaction id.
type AutocompleteResponse struct {
	ID      Snowflake       `json:"id"`
	Choices []CommandChoice `json:"choices"`
}

// ApplicationCommand is an application command, global (no guild_id) or of a guild.
type ApplicationCommand struct {
	ID                       Snowflake       `json:"id"`
	Type                     int             `json:"type"`
	ApplicationID            Snowflake       `json:"application_id"`
	GuildID                  *Snowflake      `json:"guild_id,omitempty"`
	Name                     string          `json:"name"`
	Description              string          `json:"description"`
	Options                  []CommandOption `json:"options,omitempty"`
	DefaultMemberPermissions *string         `json:"default_member_permissions"`
	NSFW                     bool            `json:"nsfw"`
	Version                  Snowflake       `json:"version"`
}

// CommandSpec is the body of creating, overwriting or editing a command; absent fields are nil.
type CommandSpec struct {
	Type        *int             `json:"type"`
	Name        *string          `json:"name"`
	Description *string          `json:"description"`
	Options     *[]CommandOption `json:"options"`
}

// InvokeInteraction is the body of POST /interactions: a user invokes an application command
// (type 2) or submits a modal (type 5).
type InvokeInteraction struct {
	Type          int             `json:"type"`
	ApplicationID Snowflake       `json:"application_id"`
	GuildID       Snowflake       `json:"guild_id"`
	ChannelID     Snowflake       `json:"channel_id"`
	Data          *InvocationData `json:"data"`
	Nonce         json.RawMessage `json:"nonce,omitempty"`
}

// InvocationData is the data of an invocation: a command's id, name, type, target and options,
// or a modal's id (the interaction that opened it), custom_id and components with values.
type InvocationData struct {
	ID         Snowflake          `json:"id"`
	Name       string             `json:"name"`
	Type       int                `json:"type"`
	TargetID   *Snowflake         `json:"target_id,omitempty"`
	Options    []InteractionValue `json:"options,omitempty"`
	CustomID   string             `json:"custom_id,omitempty"`
	Components []Component        `json:"components,omitempty"`
}

// InteractionValue is an option of an invoked command: with its value, or for a subcommand or
// group its own Options. Focused marks the option an autocomplete interaction is about.
type InteractionValue struct {
	Name    string             `json:"name"`
	Type    int                `json:"type"`
	Value   json.RawMessage    `json:"value,omitempty"`
	Options []InteractionValue `json:"options,omitempty"`
	Focused bool               `json:"focused,omitempty"`
}

// Resolved are the users, members, roles, channels and messages an interaction refers to, by id.
type Resolved struct {
	Users    map[string]User            `json:"users,omitempty"`
	Members  map[string]Member          `json:"members,omitempty"`
	Roles    map[string]Role            `json:"roles,omitempty"`
	Channels map[string]ResolvedChannel `json:"channels,omitempty"`
	Messages map[string]GuildMessage    `json:"messages,omitempty"`
	// Attachments are the files a modal submission uploaded for its File Upload components.
	Attachments map[string]Attachment `json:"attachments,omitempty"`
}

// ResolvedChannel is a channel of an interaction's resolved data. AppPermissions is the bot's
// permissions in it, present only when the app's bot user is in the guild (rule INT-1).
type ResolvedChannel struct {
	ID             Snowflake    `json:"id"`
	Type           int          `json:"type"`
	Name           string       `json:"name"`
	ParentID       *Snowflake   `json:"parent_id"`
	Permissions    Permissions  `json:"permissions"` // the invoking member's
	AppPermissions *Permissions `json:"app_permissions,omitempty"`
}

// InteractionData is the data of an INTERACTION_CREATE.
type InteractionData struct {
	ID         Snowflake          `json:"id,omitempty"`
	Name       string             `json:"name,omitempty"`
	Type       int                `json:"type,omitempty"`
	GuildID    *Snowflake         `json:"guild_id,omitempty"`
	TargetID   *Snowflake         `json:"target_id,omitempty"`
	Options    []InteractionValue `json:"options,omitempty"`
	Resolved   *Resolved          `json:"resolved,omitempty"`
	CustomID   string             `json:"custom_id,omitempty"`
	Components []Component        `json:"components,omitempty"`
}

// InteractionMember is the invoking member, with its user and its permissions in the channel.
type InteractionMember struct {
	Member
	Permissions Permissions `json:"permissions"`
}

// Interaction is the d of INTERACTION_CREATE, which the app's bot sessions get.
type Interaction struct {
	ID             Snowflake         `json:"id"`
	ApplicationID  Snowflake         `json:"application_id"`
	Type           int               `json:"type"`
	Data           InteractionData   `json:"data"`
	GuildID        Snowflake         `json:"guild_id"`
	ChannelID      Snowflake         `json:"channel_id"`
	Channel        ResolvedChannel   `json:"channel"`
	Member         InteractionMember `json:"member"`
	Token          string            `json:"token"`
	Version        int               `json:"version"`
	AppPermissions Permissions       `json:"app_permissions"`
	Locale         string            `json:"locale"`
	GuildLocale    string            `json:"guild_locale"`
	Entitlements   []struct{}        `json:"entitlements"`
	Context        int               `json:"context"`
	// AttachmentSizeLimit is the largest attachment, in bytes, the interaction's responses take.
	AttachmentSizeLimit int `json:"attachment_size_limit"`
	// AuthorizingIntegrationOwners maps installation context "0" (guild) to the guild's id.
	AuthorizingIntegrationOwners map[string]Snowflake `json:"authorizing_integration_owners"`
}

// InteractionCallback is the body of POST /interactions/{id}/{token}/callback.
type InteractionCallback struct {
	Type int             `json:"type"`
	Data json.RawMessage `json:"data"`
}

// CallbackMessage is the data of a CHANNEL_MESSAGE_WITH_SOURCE response.
type CallbackMessage struct {
	Content *string `json:"content"`
	Flags   int     `json:"flags"`
}

// InteractionMetadata is the interaction a message answers.
type InteractionMetadata struct {
	ID                           Snowflake            `json:"id"`
	Type                         int                  `json:"type"`
	User                         User                 `json:"user"`
	AuthorizingIntegrationOwners map[string]Snowflake `json:"authorizing_integration_owners"`
	TargetUser                   *User                `json:"target_user,omitempty"`
	TargetMessageID              *Snowflake           `json:"target_message_id,omitempty"`
}

// InteractionMessage is a guild message that answers an interaction (its InteractionMetadata
// set).
type InteractionMessage = GuildMessage

// Message types of interaction responses and follow-ups.
const (
	MessageTypeChatInputCommand   = 20
	MessageTypeContextMenuCommand = 23
)

// MessageFlagEphemeral marks an interaction's response or follow-up that only the invoking user
// sees.
const MessageFlagEphemeral = 1 << 6

// SelectOption is an option of a String Select, Radio Group or Checkbox Group.
type SelectOption struct {
	Label       string  `json:"label"`
	Value       string  `json:"value"`
	Description *string `json:"description,omitempty"`
	Default     bool    `json:"default,omitempty"`
}

// Component is a modal component (every type's fields; see the Component* types), in a MODAL
// response and, with its values (Value, Values), in a modal submission.
type Component struct {
	Type        int             `json:"type"`
	ID          *int            `json:"id,omitempty"`
	CustomID    string          `json:"custom_id,omitempty"`
	Label       *string         `json:"label,omitempty"`
	Description *string         `json:"description,omitempty"`
	Component   *Component      `json:"component,omitempty"`  // a Label's child
	Components  []Component     `json:"components,omitempty"` // an ActionRow's children
	Content     *string         `json:"content,omitempty"`    // a Text Display's markdown
	Style       int             `json:"style,omitempty"`
	MinLength   *int            `json:"min_length,omitempty"`
	MaxLength   *int            `json:"max_length,omitempty"`
	Placeholder *string         `json:"placeholder,omitempty"`
	Required    *bool           `json:"required,omitempty"`
	Disabled    *bool           `json:"disabled,omitempty"`
	Options     []SelectOption  `json:"options,omitempty"`
	MinValues   *int            `json:"min_values,omitempty"`
	MaxValues   *int            `json:"max_values,omitempty"`
	Value       json.RawMessage `json:"value,omitempty"`
	Values      []string        `json:"values,omitempty"`
}

// ModalData is the data of a MODAL response.
type ModalData struct {
	CustomID   string      `json:"custom_id"`
	Title      string      `json:"title"`
	Components []Component `json:"components"`
}

// ModalCreate is the d of INTERACTION_MODAL_CREATE, which the invoking user's sessions get: the
// modal to show; ID identifies it in the submission (data.id of POST /interactions type 5).
type ModalCreate struct {
	ID            Snowflake       `json:"id"`
	ApplicationID Snowflake       `json:"application_id"`
	GuildID       Snowflake       `json:"guild_id"`
	ChannelID     Snowflake       `json:"channel_id"`
	CustomID      string          `json:"custom_id"`
	Title         string          `json:"title"`
	Components    []Component     `json:"components"`
	Nonce         json.RawMessage `json:"nonce,omitempty"`
}
