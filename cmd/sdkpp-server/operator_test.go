package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"sdkpp/server/secret"
	"sdkpp/server/store"
)

// operator add stores an operator with the password from stdin, hashed as players' are; a bad
// role, a short password or a taken username is refused.
func TestOperatorAdd(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	const password = "correct horse battery"
	var out bytes.Buffer
	require.NoError(t, operatorCommand(ctx, []string{"add", "-username", "Root", "-role", "admin", "-data-dir", dir},
		strings.NewReader(password+"\n"), &out))
	require.Contains(t, out.String(), "operator Root (admin) added")
	require.NotContains(t, out.String(), password)

	for name, tc := range map[string]struct {
		args  []string
		stdin string
		want  string
	}{
		"taken":      {[]string{"add", "-username", "root", "-role", "viewer", "-data-dir", dir}, password, "exists already"},
		"role":       {[]string{"add", "-username", "x", "-role", "god", "-data-dir", dir}, password, "is not viewer"},
		"short":      {[]string{"add", "-username", "x", "-role", "viewer", "-data-dir", dir}, "short", "at least"},
		"no store":   {[]string{"add", "-username", "x", "-role", "viewer"}, password, "-data-dir or -store"},
		"subcommand": {[]string{"remove"}, password, "usage"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Setenv("SDKPP_DATA_DIR", "")
			t.Setenv("SDKPP_STORE", "")
			err := operatorCommand(ctx, tc.args, strings.NewReader(tc.stdin+"\n"), &bytes.Buffer{})
			require.ErrorContains(t, err, tc.want)
		})
	}

	st, err := store.OpenSQLite(ctx, dir)
	require.NoError(t, err)
	defer st.Close()
	op, err := st.GetOperatorByUsername(ctx, "root")
	require.NoError(t, err)
	require.Equal(t, store.RoleAdmin, op.Role)
	require.True(t, secret.CheckPassword(op.PasswordHash, password), "the password is hashed as players' are")
	require.False(t, bytes.Contains(op.PasswordHash, []byte(password)))
}
