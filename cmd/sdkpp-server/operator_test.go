package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

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
		"subcommand": {[]string{"promote"}, password, "usage"},
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

// operator list shows every operator with its role; role changes one; remove deletes one and
// signs it out; each change is in the audit log; unknown operators and roles are refused.
func TestOperatorManage(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	run := func(stdin string, args ...string) (string, error) {
		var out bytes.Buffer
		err := operatorCommand(ctx, append(args, "-data-dir", dir), strings.NewReader(stdin), &out)
		return out.String(), err
	}
	for _, a := range [][]string{{"ann", "viewer"}, {"bob", "admin"}} {
		_, err := run("correct horse battery\n", "add", "-username", a[0], "-role", a[1])
		require.NoError(t, err)
	}
	out, err := run("", "list")
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 3)
	require.Regexp(t, `^USERNAME\s+ROLE\s+CREATED$`, lines[0])
	require.Regexp(t, `^ann\s+viewer\s+\d{4}-`, lines[1])
	require.Regexp(t, `^bob\s+admin\s+\d{4}-`, lines[2])

	out, err = run("", "role", "-username", "ANN", "-role", "moderator")
	require.NoError(t, err)
	require.Equal(t, "operator ann is now moderator\n", out)
	_, err = run("", "role", "-username", "ann", "-role", "god")
	require.ErrorContains(t, err, "is not viewer")
	_, err = run("", "role", "-username", "nobody", "-role", "admin")
	require.ErrorContains(t, err, `no operator "nobody"`)

	st, err := store.OpenSQLite(ctx, dir)
	require.NoError(t, err)
	bob, err := st.GetOperatorByUsername(ctx, "bob")
	require.NoError(t, err)
	require.NoError(t, st.InsertOperatorSession(ctx, &store.OperatorSession{Hash: []byte("bob"), OperatorID: bob.ID,
		ExpiresAt: bob.CreatedAt.Add(time.Hour)}))
	require.NoError(t, st.Close())

	out, err = run("", "remove", "-username", "bob")
	require.NoError(t, err)
	require.Contains(t, out, "operator bob removed")
	_, err = run("", "remove", "-username", "bob")
	require.ErrorContains(t, err, `no operator "bob"`)
	out, err = run("", "list")
	require.NoError(t, err)
	require.NotContains(t, out, "bob")
	require.Contains(t, out, "moderator")

	st, err = store.OpenSQLite(ctx, dir)
	require.NoError(t, err)
	defer st.Close()
	_, err = st.GetOperatorSession(ctx, []byte("bob"))
	require.ErrorIs(t, err, store.ErrNotFound, "a removed operator is signed out")
	acts, err := st.ListOperatorActions(ctx, 10)
	require.NoError(t, err)
	var got []string
	for _, a := range acts {
		require.Equal(t, "(sdkpp-server operator)", a.Operator)
		got = append(got, a.Action+" "+a.Target+": "+a.Detail)
	}
	require.ElementsMatch(t, []string{"add_operator operator ann: role viewer", "add_operator operator bob: role admin",
		"set_operator_role operator ann: viewer to moderator", "remove_operator operator bob: was admin"}, got)
}
