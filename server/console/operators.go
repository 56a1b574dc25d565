package console

import (
	"context"
	"errors"
	"fmt"
	"time"

	"sdkpp/server/snowflake"
	"sdkpp/server/store"
)

// CommandLine is the audit log's operator name of the changes made with the sdkpp-server
// operator command rather than in the console.
const CommandLine = "(sdkpp-server operator)"

// Operators manages the operator accounts from the command line (sdkpp-server operator): each
// change is written to the audit log, in the change's transaction, as made by CommandLine.
type Operators struct {
	Store store.Store
	IDs   *snowflake.Generator
	Now   func() time.Time
}

// record writes an audit log entry of a command-line change in st.
func (m *Operators) record(ctx context.Context, st store.Store, action, username, detail string) error {
	return st.AppendOperatorAction(ctx, &store.OperatorAction{ID: m.IDs.Next(), Operator: CommandLine, Action: action,
		Target: "operator " + username, Detail: detail, CreatedAt: m.Now()})
}

// Add creates an operator (AddOperator).
func (m *Operators) Add(ctx context.Context, username, role, password string) (*store.Operator, error) {
	var op *store.Operator
	err := m.Store.WithTx(ctx, func(st store.Store) error {
		var err error
		if op, err = AddOperator(ctx, st, m.IDs, m.Now(), username, role, password); err != nil {
			return err
		}
		return m.record(ctx, st, "add_operator", op.Username, "role "+role)
	})
	return op, err
}

// find returns the operator named username in st.
func find(ctx context.Context, st store.Store, username string) (*store.Operator, error) {
	op, err := st.GetOperatorByUsername(ctx, username)
	if errors.Is(err, store.ErrNotFound) {
		return nil, fmt.Errorf("console: there is no operator %q", username)
	}
	if err != nil {
		return nil, fmt.Errorf("console: find operator: %w", err)
	}
	return op, nil
}

// Remove deletes the operator named username with its sessions, which ends its sign-ins at
// once; its entries in the audit log stay.
func (m *Operators) Remove(ctx context.Context, username string) error {
	return m.Store.WithTx(ctx, func(st store.Store) error {
		op, err := find(ctx, st, username)
		if err != nil {
			return err
		}
		if err := st.DeleteOperator(ctx, op.ID); err != nil {
			return fmt.Errorf("console: remove operator: %w", err)
		}
		return m.record(ctx, st, "remove_operator", op.Username, "was "+op.Role)
	})
}

// SetRole gives the operator named username the role; it applies to its next request.
func (m *Operators) SetRole(ctx context.Context, username, role string) (*store.Operator, error) {
	if !ValidRole(role) {
		return nil, fmt.Errorf("console: role %q is not viewer, moderator or admin", role)
	}
	var op *store.Operator
	err := m.Store.WithTx(ctx, func(st store.Store) error {
		var err error
		if op, err = find(ctx, st, username); err != nil {
			return err
		}
		if err := st.SetOperatorRole(ctx, op.ID, role); err != nil {
			return fmt.Errorf("console: set role: %w", err)
		}
		detail := op.Role + " to " + role
		op.Role = role
		return m.record(ctx, st, "set_operator_role", op.Username, detail)
	})
	return op, err
}

// PruneSessions deletes the console sessions that have expired at now; the service runs it
// periodically (an expired session already signs nobody in: this only reclaims its row).
func PruneSessions(ctx context.Context, st store.Store, now time.Time) (int, error) {
	n, err := st.DeleteExpiredOperatorSessions(ctx, now)
	if err != nil {
		return 0, fmt.Errorf("console: prune sessions: %w", err)
	}
	return n, nil
}
