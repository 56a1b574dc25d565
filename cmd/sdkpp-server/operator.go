package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"sdkpp/internal/clock"
	"sdkpp/server/console"
	"sdkpp/server/snowflake"
	"sdkpp/server/store"
)

// operatorCommand runs "sdkpp-server operator add -username NAME -role ROLE": it creates an
// operator of the console in the configured store, the password read from the first line of
// stdin (never from the arguments, which other users of the machine can see).
func operatorCommand(ctx context.Context, args []string, stdin io.Reader, out io.Writer) error {
	if len(args) == 0 || args[0] != "add" {
		return errors.New(`usage: sdkpp-server operator add -username NAME -role viewer|moderator|admin (password on stdin)`)
	}
	fs := flag.NewFlagSet("sdkpp-server operator add", flag.ContinueOnError)
	fs.SetOutput(out)
	username := fs.String("username", "", "the operator's username")
	role := fs.String("role", store.RoleViewer, "viewer, moderator or admin")
	dataDir := fs.String("data-dir", env("SDKPP_DATA_DIR", ""), "SQLite data directory of the service")
	storeURL := fs.String("store", env("SDKPP_STORE", ""), "store URL: sqlite:[DIR] or postgres://...")
	// PostgreSQL leases node ids: the command takes one no serving node should use.
	nodeID := fs.Int("node-id", snowflake.MaxNode, "node id this command holds while it runs (PostgreSQL)")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if *storeURL == "" && *dataDir == "" {
		return errors.New("operator add: -data-dir or -store is required (an in-memory store would forget the operator)")
	}
	line, err := bufio.NewReader(stdin).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("operator add: read password: %w", err)
	}
	password := strings.TrimRight(line, "\r\n")
	st, err := store.Open(ctx, *storeURL, *dataDir, *nodeID)
	if err != nil {
		return err
	}
	defer st.Close()
	floor, err := st.MaxID(ctx)
	if err != nil {
		return err
	}
	clk := clock.Real{}
	op, err := console.AddOperator(ctx, st, snowflake.NewNode(clk, floor, *nodeID), clk.Now(), *username, *role, password)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "operator %s (%s) added; the console is at /console\n", op.Username, op.Role)
	return nil
}
