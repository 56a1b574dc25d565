package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"sdkpp/internal/clock"
	"sdkpp/server/console"
	"sdkpp/server/snowflake"
	"sdkpp/server/store"
)

// operatorUsage lists the operator subcommands.
const operatorUsage = `usage: sdkpp-server operator add -username NAME -role viewer|moderator|admin (password on stdin)
       sdkpp-server operator list
       sdkpp-server operator remove -username NAME
       sdkpp-server operator role -username NAME -role viewer|moderator|admin
each with -data-dir DIR or -store URL`

// operatorCommand runs "sdkpp-server operator add|list|remove|role": it manages the operators
// of the console in the configured store. add reads the password from the first line of stdin
// (never from the arguments, which other users of the machine can see); add, remove and role
// are written to the console's audit log.
func operatorCommand(ctx context.Context, args []string, stdin io.Reader, out io.Writer) error {
	if len(args) == 0 {
		return errors.New(operatorUsage)
	}
	sub := args[0]
	switch sub {
	case "add", "list", "remove", "role":
	default:
		return errors.New(operatorUsage)
	}
	fs := flag.NewFlagSet("sdkpp-server operator "+sub, flag.ContinueOnError)
	fs.SetOutput(out)
	var username, role *string
	if sub != "list" {
		username = fs.String("username", "", "the operator's username")
	}
	if sub == "add" || sub == "role" {
		def := ""
		if sub == "add" {
			def = store.RoleViewer
		}
		role = fs.String("role", def, "viewer, moderator or admin")
	}
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
		return fmt.Errorf("operator %s: -data-dir or -store is required (an in-memory store would forget the operator)", sub)
	}
	var password string
	if sub == "add" {
		line, err := bufio.NewReader(stdin).ReadString('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return fmt.Errorf("operator add: read password: %w", err)
		}
		password = strings.TrimRight(line, "\r\n")
	}
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
	m := console.Operators{Store: st, IDs: snowflake.NewNode(clk, floor, *nodeID), Now: clk.Now}
	switch sub {
	case "add":
		op, err := m.Add(ctx, *username, *role, password)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "operator %s (%s) added; the console is at /console\n", op.Username, op.Role)
	case "list":
		ops, err := st.ListOperators(ctx)
		if err != nil {
			return fmt.Errorf("operator list: %w", err)
		}
		tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "USERNAME\tROLE\tCREATED")
		for _, op := range ops {
			fmt.Fprintf(tw, "%s\t%s\t%s\n", op.Username, op.Role, op.CreatedAt.UTC().Format(time.RFC3339))
		}
		return tw.Flush()
	case "remove":
		if err := m.Remove(ctx, *username); err != nil {
			return err
		}
		fmt.Fprintf(out, "operator %s removed, signed out everywhere\n", *username)
	case "role":
		op, err := m.SetRole(ctx, *username, *role)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "operator %s is now %s\n", op.Username, op.Role)
	}
	return nil
}
