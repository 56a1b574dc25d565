// Package interactions serves application commands (global and per guild) for the bots of
// applications, and validates the modals of interaction responses.
package interactions

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"sdkpp/internal/clock"
	"sdkpp/server/httpx"
	"sdkpp/server/snowflake"
	"sdkpp/server/store"
	"sdkpp/server/token"
	"sdkpp/wire"
)

// Limits of application commands per scope (global, or one guild), by type (rule CMD-1).
var maxCommands = map[int]int{wire.CommandChatInput: 100, wire.CommandUser: 15, wire.CommandMessage: 15}

// MaxOptions is the number of options a CHAT_INPUT command may have.
const MaxOptions = 25

// chatName is the name of a CHAT_INPUT command or option: 1 to 32 lowercase letters, digits, -
// and _.
var chatName = regexp.MustCompile(`^[-_\p{Ll}\p{Lo}\p{N}]{1,32}$`)

// Service keeps the applications' commands (in the store, cached in memory) and serves their
// routes.
type Service struct {
	Store  store.Store
	Clock  clock.Clock
	IDs    *snowflake.Generator
	Logger *slog.Logger
	// Notifier delivers interactions and modals (set before serving); nil sends none.
	Notifier Notifier
	// Messages posts the messages of responses and reads target messages.
	Messages Messages

	mu       sync.Mutex
	commands map[scope][]wire.ApplicationCommand // the store's, by application and guild (0: global), as read
	swept    clock.Chore                         // the deletions of ended interactions (sweep)
}

// scope is where commands are registered: an application, globally (guild 0) or in a guild.
type scope struct{ app, guild uint64 }

// Register adds the command routes to mux (paths relative to the API base).
func (s *Service) Register(mux httpx.Router) {
	for _, base := range []string{"/applications/{app}/commands", "/applications/{app}/guilds/{guild}/commands"} {
		mux.HandleFunc("GET "+base, s.route(s.list))
		mux.HandleFunc("POST "+base, s.route(s.create))
		mux.HandleFunc("PUT "+base, s.route(s.overwrite))
		mux.HandleFunc("GET "+base+"/{id}", s.route(s.get))
		mux.HandleFunc("PATCH "+base+"/{id}", s.route(s.edit))
		mux.HandleFunc("DELETE "+base+"/{id}", s.route(s.remove))
	}
}

// route authenticates the application's bot (403 50001 for another app's) and resolves the
// scope of the path: 404 10004 for an unknown guild.
func (s *Service) route(h func(r *http.Request, sc scope) (any, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		out, err := func() (any, error) {
			app, err := token.Auth{Store: s.Store, Clock: s.Clock}.Bot(r)
			if err != nil {
				return nil, err
			}
			id, err := httpx.PathID(r, "app")
			if err != nil {
				return nil, err
			}
			if id != app.ID {
				return nil, wire.MissingAccess()
			}
			sc := scope{app: app.ID}
			if r.PathValue("guild") != "" {
				if sc.guild, err = httpx.PathID(r, "guild"); err != nil {
					return nil, err
				}
				if _, err := s.Store.GetGuild(r.Context(), sc.guild); errors.Is(err, store.ErrNotFound) {
					return nil, &wire.APIError{Status: http.StatusNotFound, Code: 10004, Message: "Unknown Guild"}
				} else if err != nil {
					return nil, err
				}
			}
			return h(r, sc)
		}()
		httpx.Answer(w, r, s.Logger, out, err)
	}
}

func unknownCommand() error {
	return &wire.APIError{Status: http.StatusNotFound, Code: wire.CodeUnknownApplicationCommand, Message: "Unknown application command"}
}

// Commands returns a copy of the scope's commands (for invocations).
func (s *Service) Commands(ctx context.Context, app, guild uint64) ([]wire.ApplicationCommand, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	list, err := s.scopeCommands(ctx, scope{app, guild})
	return append([]wire.ApplicationCommand{}, list...), err
}

// scopeCommands returns the scope's commands, read from the store the first time; s.mu is held.
// The slice is shared: copy it to change it.
func (s *Service) scopeCommands(ctx context.Context, sc scope) ([]wire.ApplicationCommand, error) {
	// Where nodes share the store another node may have changed them: read them each time.
	if list, ok := s.commands[sc]; ok && !s.Store.Shared() {
		return list, nil
	}
	list, err := readCommands(ctx, s.Store, sc)
	if err != nil {
		return nil, err
	}
	if s.commands == nil {
		s.commands = map[scope][]wire.ApplicationCommand{}
	}
	s.commands[sc] = list
	return list, nil
}

// readCommands reads the scope's commands from st.
func readCommands(ctx context.Context, st store.Store, sc scope) ([]wire.ApplicationCommand, error) {
	doc, err := st.GetApplicationCommands(ctx, sc.app, sc.guild)
	if err != nil {
		return nil, fmt.Errorf("interactions: read commands: %w", err)
	}
	var list []wire.ApplicationCommand
	if doc != nil {
		if err := json.Unmarshal(doc, &list); err != nil {
			return nil, fmt.Errorf("interactions: stored commands of app %d, guild %d: %w", sc.app, sc.guild, err)
		}
	}
	return list, nil
}

// change runs fn on the scope's commands as the store has them, in a transaction that holds
// the scope's lock, so that nodes sharing the store change a scope one at a time; fn saves the
// new list with set. This node's copy is dropped when the change fails.
func (s *Service) change(ctx context.Context, sc scope, fn func(st store.Store, have []wire.ApplicationCommand) (any, error)) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out any
	err := s.Store.WithTx(ctx, func(tx store.Store) error {
		if err := tx.LockApplicationCommands(ctx, sc.app, sc.guild); err != nil {
			return err
		}
		have, err := readCommands(ctx, tx, sc)
		if err != nil {
			return err
		}
		out, err = fn(tx, have)
		return err
	})
	if err != nil {
		delete(s.commands, sc)
		return nil, err
	}
	return out, nil
}

func (s *Service) list(r *http.Request, sc scope) (any, error) {
	out, err := s.Commands(r.Context(), sc.app, sc.guild)
	return out, err
}

func commandID(r *http.Request) (uint64, error) { return httpx.PathID(r, "id") }

func (s *Service) get(r *http.Request, sc scope) (any, error) {
	id, err := commandID(r)
	if err != nil {
		return nil, err
	}
	list, err := s.Commands(r.Context(), sc.app, sc.guild)
	if err != nil {
		return nil, err
	}
	for _, c := range list {
		if uint64(c.ID) == id {
			return c, nil
		}
	}
	return nil, unknownCommand()
}

// build validates a spec at path (prefix of the field names) into a command of the scope.
func (s *Service) build(path string, spec *wire.CommandSpec, sc scope) (wire.ApplicationCommand, error) {
	c := wire.ApplicationCommand{ApplicationID: wire.Snowflake(sc.app), Type: wire.CommandChatInput}
	if sc.guild != 0 {
		g := wire.Snowflake(sc.guild)
		c.GuildID = &g
	}
	if spec.Type != nil {
		c.Type = *spec.Type
	}
	if _, ok := maxCommands[c.Type]; !ok {
		return c, wire.InvalidAt(path+"type", "BASE_TYPE_CHOICES", "Value must be one of (1, 2, 3).")
	}
	if spec.Name == nil {
		return c, wire.InvalidAt(path+"name", "BASE_TYPE_REQUIRED", "This field is required")
	}
	c.Name = *spec.Name
	if spec.Description != nil {
		c.Description = *spec.Description
	}
	if spec.Options != nil {
		c.Options = *spec.Options
	}
	if c.Type == wire.CommandChatInput {
		if !chatName.MatchString(c.Name) || strings.ToLower(c.Name) != c.Name {
			return c, wire.InvalidAt(path+"name", "APPLICATION_COMMAND_INVALID_NAME", "Command name is invalid")
		}
		if err := length(path+"description", c.Description, 1, 100); err != nil {
			return c, err
		}
		return c, checkOptionsOf(path+"options", c.Options)
	}
	if err := length(path+"name", c.Name, 1, 32); err != nil {
		return c, err
	}
	if c.Description != "" {
		return c, wire.InvalidAt(path+"description", "APPLICATION_COMMAND_CONTEXT_MENU_DESCRIPTION",
			"Context menu commands cannot have description")
	}
	if len(c.Options) > 0 {
		return c, wire.InvalidAt(path+"options", "APPLICATION_COMMAND_OPTIONS_NOT_ALLOWED",
			"Context menu commands cannot have options")
	}
	return c, nil
}

// checkOptionsOf validates a CHAT_INPUT command's options: types 3 STRING to 11 ATTACHMENT,
// names as the command's and unique, descriptions 1 to 100, required ones first.
func checkOptionsOf(path string, opts []wire.CommandOption) error {
	if len(opts) > MaxOptions {
		return wire.InvalidAt(path, "BASE_TYPE_MAX_LENGTH", "Must be 25 or fewer in length.")
	}
	names := map[string]bool{}
	optional := false
	for i, o := range opts {
		p := path + "." + strconv.Itoa(i) + "."
		if o.Type < 3 || o.Type > 11 {
			return wire.InvalidAt(p+"type", "BASE_TYPE_CHOICES", "Value must be one of (3, 4, 5, 6, 7, 8, 9, 10, 11).")
		}
		if !chatName.MatchString(o.Name) || strings.ToLower(o.Name) != o.Name {
			return wire.InvalidAt(p+"name", "APPLICATION_COMMAND_INVALID_NAME", "Command name is invalid")
		}
		if names[o.Name] {
			return wire.InvalidAt(p+"name", "APPLICATION_COMMAND_OPTIONS_NAME_ALREADY_EXISTS", "Option names must be unique")
		}
		names[o.Name] = true
		if err := length(p+"description", o.Description, 1, 100); err != nil {
			return err
		}
		if o.Required && optional {
			return wire.InvalidAt(p+"required", "APPLICATION_COMMAND_OPTIONS_REQUIRED_INVALID",
				"Required options must be placed before non-required options")
		}
		optional = optional || !o.Required
	}
	return nil
}

// place puts c into list: in place of the command of its name and type (keeping that one's id),
// or appended with a new id. It fails with 30032 when the scope's limit of c's type is reached
// (rule CMD-1). replaced tells whether it took an existing command's place.
func (s *Service) place(list []wire.ApplicationCommand, c wire.ApplicationCommand) ([]wire.ApplicationCommand, bool, error) {
	c.Version = wire.Snowflake(s.IDs.Next())
	n := 0
	for i := range list {
		if list[i].Type == c.Type && list[i].Name == c.Name {
			c.ID = list[i].ID
			list[i] = c
			return list, true, nil
		}
		if list[i].Type == c.Type {
			n++
		}
	}
	if n >= maxCommands[c.Type] {
		return nil, false, wire.Coded(wire.CodeMaxApplicationCommands, "Maximum number of application commands reached ("+
			strconv.Itoa(maxCommands[c.Type])+")")
	}
	c.ID = wire.Snowflake(s.IDs.Next())
	return append(list, c), false, nil
}

// create serves POST: a command of an existing name and type replaces it (200), a new one is
// 201.
func (s *Service) create(r *http.Request, sc scope) (any, error) {
	var spec wire.CommandSpec
	if err := httpx.DecodeJSON(r, &spec); err != nil {
		return nil, err
	}
	c, err := s.build("", &spec, sc)
	if err != nil {
		return nil, err
	}
	return s.change(r.Context(), sc, func(st store.Store, have []wire.ApplicationCommand) (any, error) {
		list, replaced, err := s.place(append([]wire.ApplicationCommand(nil), have...), c)
		if err != nil {
			return nil, err
		}
		if err := s.set(r.Context(), st, sc, list); err != nil {
			return nil, err
		}
		for _, x := range list {
			if x.Type == c.Type && x.Name == c.Name {
				c = x
			}
		}
		if replaced {
			return c, nil
		}
		return httpx.Reply{Status: http.StatusCreated, Body: c}, nil
	})
}

// set makes list the scope's commands, in st and then in memory; s.mu is held.
func (s *Service) set(ctx context.Context, st store.Store, sc scope, list []wire.ApplicationCommand) error {
	var doc []byte
	if len(list) > 0 {
		var err error
		if doc, err = json.Marshal(list); err != nil {
			return fmt.Errorf("interactions: encode commands: %w", err)
		}
	}
	if err := st.PutApplicationCommands(ctx, sc.app, sc.guild, doc); err != nil {
		return fmt.Errorf("interactions: write commands: %w", err)
	}
	if s.commands == nil {
		s.commands = map[scope][]wire.ApplicationCommand{}
	}
	s.commands[sc] = list
	return nil
}

// overwrite serves PUT: the scope's commands become the body's; those of a name and type that
// already exist keep their ids.
func (s *Service) overwrite(r *http.Request, sc scope) (any, error) {
	var specs []wire.CommandSpec
	if err := httpx.DecodeJSON(r, &specs); err != nil {
		return nil, err
	}
	return s.change(r.Context(), sc, func(st store.Store, old []wire.ApplicationCommand) (any, error) {
		var list []wire.ApplicationCommand
		for i := range specs {
			path := strconv.Itoa(i) + "."
			c, err := s.build(path, &specs[i], sc)
			if err != nil {
				return nil, err
			}
			for _, x := range list {
				if x.Type == c.Type && x.Name == c.Name {
					return nil, wire.InvalidAt(path+"name", "APPLICATION_COMMANDS_DUPLICATE_NAME", "Application command names must be unique")
				}
			}
			for _, x := range old {
				if x.Type == c.Type && x.Name == c.Name {
					c.ID = x.ID
				}
			}
			id := c.ID
			var err2 error
			if list, _, err2 = s.place(list, c); err2 != nil {
				return nil, err2
			}
			if id != 0 {
				list[len(list)-1].ID = id
			}
		}
		if err := s.set(r.Context(), st, sc, list); err != nil {
			return nil, err
		}
		if list == nil {
			list = []wire.ApplicationCommand{}
		}
		return list, nil
	})
}

// edit serves PATCH: the fields given change; the name may not clash with another command.
func (s *Service) edit(r *http.Request, sc scope) (any, error) {
	id, err := commandID(r)
	if err != nil {
		return nil, err
	}
	var spec wire.CommandSpec
	if err := httpx.DecodeJSON(r, &spec); err != nil {
		return nil, err
	}
	if spec.Type != nil {
		return nil, wire.InvalidAt("type", "APPLICATION_COMMAND_TYPE_IMMUTABLE", "A command's type cannot change.")
	}
	return s.change(r.Context(), sc, func(st store.Store, have []wire.ApplicationCommand) (any, error) {
		list := append([]wire.ApplicationCommand(nil), have...)
		for i, c := range list {
			if uint64(c.ID) != id {
				continue
			}
			full := wire.CommandSpec{Type: &c.Type, Name: &c.Name, Description: &c.Description, Options: &c.Options}
			if spec.Name != nil {
				full.Name = spec.Name
			}
			if spec.Description != nil {
				full.Description = spec.Description
			}
			if spec.Options != nil {
				full.Options = spec.Options
			}
			n, err := s.build("", &full, sc)
			if err != nil {
				return nil, err
			}
			for _, x := range list {
				if x.ID != c.ID && x.Type == n.Type && x.Name == n.Name {
					return nil, wire.InvalidAt("name", "APPLICATION_COMMANDS_DUPLICATE_NAME", "Application command names must be unique")
				}
			}
			n.ID, n.Version = c.ID, wire.Snowflake(s.IDs.Next())
			list[i] = n
			if err := s.set(r.Context(), st, sc, list); err != nil {
				return nil, err
			}
			return n, nil
		}
		return nil, unknownCommand()
	})
}

// remove serves DELETE (204).
func (s *Service) remove(r *http.Request, sc scope) (any, error) {
	id, err := commandID(r)
	if err != nil {
		return nil, err
	}
	return s.change(r.Context(), sc, func(st store.Store, list []wire.ApplicationCommand) (any, error) {
		for i, c := range list {
			if uint64(c.ID) == id {
				return nil, s.set(r.Context(), st, sc, append(append([]wire.ApplicationCommand(nil), list[:i]...), list[i+1:]...))
			}
		}
		return nil, unknownCommand()
	})
}
