package wire

import (
	"bytes"
	"encoding/json"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// FuzzAppendString: appendString writes exactly encoding/json's bytes for any string.
func FuzzAppendString(f *testing.F) {
	for _, s := range tricky {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, err := json.Marshal(s)
		require.NoError(t, err)
		assert.Equal(t, string(want), string(appendString(nil, s)))
	})
}

// FuzzLobbyMessageFields: AppendJSON agrees with encoding/json on every field, numbers and
// flags included, and DecodeLobbyMessage reads the result back as encoding/json does.
func FuzzLobbyMessageFields(f *testing.F) {
	f.Add(uint64(1477636521984000011), uint64(1<<62), int64(-3), int64(1<<40), true, false, "content", "k", "v", uint8(0))
	f.Add(uint64(0), ^uint64(0), int64(0), int64(-1<<63), false, true, "\u2028<&>", "\xff", "", uint8(255))
	f.Fuzz(func(t *testing.T, id, app uint64, typ, flags int64, bot, prov bool, content, key, value string, shape uint8) {
		m := LobbyMessage{ID: Snowflake(id), Type: int(typ), Content: content, LobbyID: Snowflake(app), ChannelID: Snowflake(id ^ app),
			Author: User{ID: Snowflake(app), Username: key, Bot: bot, IsProvisional: prov, PremiumType: int(flags), Flags: int(typ), PublicFlags: int(flags >> 7)},
			Flags:  int(flags), ApplicationID: Snowflake(app), Timestamp: value}
		if shape&1 != 0 {
			m.Metadata = map[string]string{key: value, value: content}
		}
		if shape&2 != 0 {
			m.ModerationMetadata = map[string]string{}
		}
		if shape&4 != 0 {
			m.EditedTimestamp, m.LobbyMember.AdditionalName, m.Author.GlobalName = &value, &key, &content
		}
		if shape&8 != 0 {
			m.Author.ApplicationProfiles = []ApplicationProfile{{ApplicationID: Snowflake(id), Username: content, ProviderID: &key, ProviderType: value}, {}}
		}
		agreeEncoding(t, m)
		agreeDecoding(t, m.AppendJSON(nil))
	})
}

// FuzzSnowflake: an id reads back as written; from any JSON value it reads null, "" and "null"
// as 0, a decimal string or integer of at most MaxSnowflake as itself, and refuses the rest
// (an id spelled with escapes may be refused, never misread). ParseSnowflake reads the same
// decimal text, refusing zero.
func FuzzSnowflake(f *testing.F) {
	for _, in := range []string{`"1"`, `1`, `null`, `""`, `"null"`, `"9223372036854775807"`, `"9223372036854775808"`,
		`"18446744073709551615"`, `18446744073709551616`, `-1`, `1.0`, `1e3`, `"\u0031"`, `" 1"`, `"+1"`, `true`, `{}`, `"0"`} {
		f.Add([]byte(in))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		if !json.Valid(in) {
			return // encoding/json never hands an invalid value to UnmarshalJSON
		}
		var s Snowflake
		err := json.Unmarshal(in, &s)

		want, valid := snowflakeContract(t, in)
		if !valid {
			assert.Error(t, err, "%q read as %d", in, s)
			return
		}
		if err == nil {
			assert.Equal(t, want, s, "%q", in)
		} else {
			assert.Contains(t, string(in), `\`, "%q refused: %v", in, err)
		}
		if want != 0 {
			out, err := json.Marshal(s)
			require.NoError(t, err)
			var back Snowflake
			require.NoError(t, json.Unmarshal(out, &back))
			assert.Equal(t, s, back)
			p, ok := ParseSnowflake(strconv.FormatUint(uint64(want), 10))
			assert.True(t, ok)
			assert.Equal(t, want, p)
		}
	})
}

// snowflakeContract says what the JSON value in reads as, by the rules FuzzSnowflake states.
func snowflakeContract(t *testing.T, in []byte) (Snowflake, bool) {
	d := json.NewDecoder(bytes.NewReader(in))
	d.UseNumber()
	var v any
	require.NoError(t, d.Decode(&v))
	var text string
	switch x := v.(type) {
	case nil:
		return 0, true
	case string:
		if x == "" || x == "null" {
			return 0, true
		}
		text = x
	case json.Number:
		text = string(x)
	default:
		return 0, false
	}
	n, err := strconv.ParseUint(text, 10, 64)
	if err != nil || n > MaxSnowflake {
		return 0, false
	}
	return Snowflake(n), true
}

// FuzzDecimal: decimal reads exactly what strconv.ParseUint reads in base 10.
func FuzzDecimal(f *testing.F) {
	for _, in := range []string{"", "0", "1477636521984000011", "9223372036854775807", "9999999999999999999", "18446744073709551615",
		"18446744073709551616", "00000000000000000001", "+1", "-1", "1_000", "12a", " 1", "\xff"} {
		f.Add([]byte(in))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		want, err := strconv.ParseUint(string(in), 10, 64)
		got, ok := decimal(in)
		require.Equal(t, err == nil, ok, "%q: ParseUint error %v", in, err)
		if ok {
			assert.Equal(t, want, got, "%q", in)
		}
	})
}
