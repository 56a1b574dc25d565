package wire

import (
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TU-1: a target-users file is the single header user_id, then one user ID per line. Line ends,
// a byte order mark, blank lines, quoting and repeated ids are tolerated; anything else is a
// 400 50035 naming target_users_file with a code that says what is wrong.
func TestParseTargetUsersCSV(t *testing.T) {
	many := func(n int) string {
		var b strings.Builder
		b.WriteString("user_id\n")
		for i := 1; i <= n; i++ {
			b.WriteString(strconv.Itoa(1000+i) + "\n")
		}
		return b.String()
	}
	good := []struct {
		name, file string
		want       []Snowflake
	}{
		{"LF", "user_id\n1\n2\n", []Snowflake{1, 2}},
		{"CRLF, no final line end", "user_id\r\n1\r\n2", []Snowflake{1, 2}},
		{"byte order mark", "\xef\xbb\xbfuser_id\n3\n", []Snowflake{3}},
		{"blank lines", "user_id\n\n4\n\n5\n\n", []Snowflake{4, 5}},
		{"quoted and spaced", "\"user_id\"\n\" 6 \"\n7\n", []Snowflake{6, 7}},
		{"repeated ids once, in file order", "user_id\n9\n8\n9\n", []Snowflake{9, 8}},
		{"the largest id", "user_id\n9223372036854775807\n", []Snowflake{MaxSnowflake}},
		{"the most users", many(MaxTargetUsers), nil},
	}
	for _, tc := range good {
		t.Run(tc.name, func(t *testing.T) {
			ids, err := ParseTargetUsersCSV([]byte(tc.file))
			require.NoError(t, err, "rule TU-1")
			if tc.want != nil {
				assert.Equal(t, tc.want, ids, "rule TU-1")
			} else {
				assert.Len(t, ids, MaxTargetUsers, "rule TU-1")
			}
		})
	}
	bad := []struct {
		name, file, code string
	}{
		{"empty", "", "CSV_EMPTY"},
		{"header only", "user_id\n", "CSV_EMPTY"},
		{"no header", "1\n2\n", "CSV_HEADER_INVALID"},
		{"another header", "id\n1\n", "CSV_HEADER_INVALID"},
		{"header of another case", "USER_ID\n1\n", "CSV_HEADER_INVALID"},
		{"two columns in the header", "user_id,name\n1,a\n", "CSV_HEADER_INVALID"},
		{"two columns in a row", "user_id\n1,2\n", "CSV_ROW_INVALID"},
		{"not an id", "user_id\nabc\n", "CSV_ROW_INVALID"},
		{"zero", "user_id\n0\n", "CSV_ROW_INVALID"},
		{"negative", "user_id\n-5\n", "CSV_ROW_INVALID"},
		{"above the largest id", "user_id\n9223372036854775808\n", "CSV_ROW_INVALID"},
		{"a mention", "user_id\n<@123>\n", "CSV_ROW_INVALID"},
		{"invalid UTF-8", "user_id\n1\xff\n", "CSV_INVALID_UTF8"},
		{"a bare quote", "user_id\n1\"2\n", "CSV_INVALID"},
		{"too many users", many(MaxTargetUsers + 1), "CSV_TOO_MANY_ROWS"},
		{"too large", "user_id\n" + strings.Repeat(" ", MaxTargetUsersFileBytes), "BINARY_TYPE_MAX_SIZE"},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseTargetUsersCSV([]byte(tc.file))
			require.Error(t, err, "rule TU-1")
			api, ok := err.(*APIError)
			require.True(t, ok, "%T", err)
			assert.Equal(t, 400, api.Status)
			assert.Equal(t, CodeInvalidFormBody, api.Code)
			field, ok := api.Errors[TargetUsersFilePart].(map[string]any)
			require.True(t, ok, "the error names target_users_file: %+v", api.Errors)
			errs := field["_errors"].([]FieldError)
			assert.Equal(t, tc.code, errs[0].Code, "rule TU-1: %s", errs[0].Message)
			assert.NotEmpty(t, errs[0].Message)
		})
	}
}

// TU-1, INVT-3: the file Get Target Users answers reads back as the same ids.
func TestTargetUsersCSVRoundTrip(t *testing.T) {
	ids := []Snowflake{1, 42, MaxSnowflake}
	file := AppendTargetUsersCSV(nil, ids)
	assert.Equal(t, "user_id\n1\n42\n9223372036854775807\n", string(file))
	back, err := ParseTargetUsersCSV(file)
	require.NoError(t, err)
	assert.Equal(t, ids, back)
	assert.Equal(t, "user_id\n", string(AppendTargetUsersCSV(nil, nil)), "no users: just the header")
}
