package users

import (
	"context"
	"errors"
	"strconv"
	"unicode"
	"unicode/utf8"

	"sdkpp/server/store"
	"sdkpp/wire"
)

// PrimaryGuildObject is the wire form of a user's primary guild (rule USR-2); nil for none.
func PrimaryGuildObject(pg *store.PrimaryGuild) *wire.PrimaryGuild {
	if pg == nil {
		return nil
	}
	id := wire.Snowflake(pg.GuildID)
	return &wire.PrimaryGuild{IdentityGuildID: &id, IdentityEnabled: pg.Enabled, Tag: pg.Tag, Badge: pg.Badge}
}

// ValidGuildTag checks a guild tag (rule LIM-5): 1 to 4 characters of valid UTF-8, letters,
// digits, marks, symbols or punctuation only (no spaces or control characters).
func ValidGuildTag(field, tag string) error {
	n := utf8.RuneCountInString(tag)
	if !utf8.ValidString(tag) || n < wire.MinGuildTagChars || n > wire.MaxGuildTagChars {
		return wire.Invalid(field, "BASE_TYPE_BAD_LENGTH", "Must be between "+strconv.Itoa(wire.MinGuildTagChars)+
			" and "+strconv.Itoa(wire.MaxGuildTagChars)+" in length.")
	}
	for _, r := range tag {
		if !(unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r) || unicode.IsSymbol(r) || unicode.IsPunct(r)) {
			return wire.Invalid(field, "GUILD_TAG_INVALID_CHARACTERS", "A guild tag may hold only letters, digits and symbols.")
		}
	}
	return nil
}

// SetGuildTag sets the guild's tag (rule LIM-5), or removes it when req.Tag is null, and with it
// the tag its members show as their primary guild. 404 10004 for an unknown guild.
func SetGuildTag(ctx context.Context, st store.Store, guildID uint64, req wire.GuildTagRequest) error {
	if _, err := st.GetGuild(ctx, guildID); errors.Is(err, store.ErrNotFound) {
		return wire.UnknownGuild()
	} else if err != nil {
		return err
	}
	if req.Tag == nil {
		return st.PutGuildTag(ctx, guildID, nil)
	}
	if err := ValidGuildTag("tag", *req.Tag); err != nil {
		return err
	}
	t := &store.GuildTag{GuildID: guildID, Tag: *req.Tag}
	if req.Badge != nil {
		if n := len(*req.Badge); n > 64 || !utf8.ValidString(*req.Badge) {
			return wire.Invalid("badge", "BASE_TYPE_MAX_LENGTH", "Must be 64 or fewer in length.")
		}
		t.Badge = *req.Badge
	}
	return st.PutGuildTag(ctx, guildID, t)
}

// SetPrimaryGuild makes the guild of req the user's primary guild (rule USR-2), or clears it
// when req.IdentityGuildID is null. The user must be a member of a guild that has a tag;
// identity_enabled defaults to true. Errors: 404 10013 for an unknown user, 404 10004 for an
// unknown guild, 400 50035 for a guild the user is not in or without a tag.
func SetPrimaryGuild(ctx context.Context, st store.Store, userID uint64, req wire.PrimaryGuildRequest) (*wire.PrimaryGuild, error) {
	var out *wire.PrimaryGuild
	err := st.WithTx(ctx, func(st store.Store) error {
		if _, err := st.GetUser(ctx, userID); errors.Is(err, store.ErrNotFound) {
			return wire.UnknownUser()
		} else if err != nil {
			return err
		}
		if req.IdentityGuildID == nil || *req.IdentityGuildID == 0 {
			return st.SetPrimaryGuild(ctx, userID, nil)
		}
		guildID := uint64(*req.IdentityGuildID)
		g, err := st.GetGuild(ctx, guildID)
		if errors.Is(err, store.ErrNotFound) {
			return wire.UnknownGuild()
		} else if err != nil {
			return err
		}
		if g.OwnerID != userID {
			if _, err := st.GetGuildMember(ctx, guildID, userID); errors.Is(err, store.ErrNotFound) {
				return wire.Invalid("identity_guild_id", "GUILD_IDENTITY_NOT_MEMBER", "The user is not a member of this guild.")
			} else if err != nil {
				return err
			}
		}
		tag, err := st.GetGuildTag(ctx, guildID)
		if errors.Is(err, store.ErrNotFound) {
			return wire.Invalid("identity_guild_id", "GUILD_IDENTITY_NO_TAG", "This guild has no tag.")
		} else if err != nil {
			return err
		}
		enabled := req.IdentityEnabled == nil || *req.IdentityEnabled
		pg := &store.PrimaryGuild{GuildID: guildID, Enabled: &enabled, Tag: &tag.Tag}
		if tag.Badge != "" {
			pg.Badge = &tag.Badge
		}
		out = PrimaryGuildObject(pg)
		return st.SetPrimaryGuild(ctx, userID, pg)
	})
	return out, err
}
