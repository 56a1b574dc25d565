package core

import (
	"context"

	"sdkpp/core/callbacks"
	"sdkpp/core/internal/sdkerr"
	"sdkpp/core/records"

	"sdkpp/core/rest"
)

// start runs fn on a goroutine owned by c (one of its workers, package workers): Close cancels
// fn's context and waits for it to return. It reports false, without running fn, once c is
// closed.
func (c *Client) start(fn func(ctx context.Context)) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return false
	}
	c.workers.Go(fn)
	return true
}

// The results of the Client's one-shots (core/records): resultOf turns an operation's error into
// a ClientResult, nil giving success.
var (
	resultOf = records.ResultOf
	success  = records.Success
	failure  = records.Failure
)

// resultCall runs one API request whose callback takes only a ClientResult; after, if set, runs
// when the request succeeded.
func (c *Client) resultCall(req rest.Request, what string, cb Callback[func(*ClientResult)], after func()) {
	once := resultOnce(c, cb)
	c.start(func(ctx context.Context) {
		err := c.api.Do(ctx, req, nil)
		if err != nil {
			c.logf(LoggingSeverityWarning, "%s failed: %v", what, err)
		} else if after != nil {
			after()
		}
		once.Fire(func() { cb.Fn(resultOf(err)) })
	})
}

// authCall answers a result-only cb, exactly once, with what do returns on a goroutine of c,
// given the player's authorization. Without authorization, or when check (a validation made
// before) is not nil, it answers at once with that error; a failure of do is logged.
func authCall[F ~func(*ClientResult)](c *Client, what string, check error, cb Callback[F], do func(ctx context.Context, auth string) error) {
	authCall1(c, what, check, Callback[func(*ClientResult, struct{})]{Fn: func(r *ClientResult, _ struct{}) { cb.Fn(r) }, Release: cb.Release},
		func(ctx context.Context, auth string) (struct{}, error) { return struct{}{}, do(ctx, auth) })
}

// authCall1 is authCall for a callback that takes a result and one value: the value do returns
// (zero when refused before).
func authCall1[T any, F ~func(*ClientResult, T)](c *Client, what string, check error, cb Callback[F], do func(ctx context.Context, auth string) (T, error)) {
	once := resultOnce1(c, cb)
	auth := c.authHeader()
	if auth == "" {
		check = sdkerr.ErrNotReady
	}
	if check != nil {
		var zero T
		once.Fire(func() { cb.Fn(resultOf(check), zero) })
		return
	}
	c.start(func(ctx context.Context) {
		v, err := do(ctx, auth)
		if err != nil {
			c.logf(LoggingSeverityWarning, "%s failed: %v", what, err)
		}
		once.Fire(func() { cb.Fn(resultOf(err), v) })
	})
}

// getList answers cb with the converted list a GET of path returns.
func getList[W, R any](c *Client, what, path string, cb Callback[func(*ClientResult, []R)], convert func([]W) []R) {
	authCall1(c, what, nil, cb, func(ctx context.Context, auth string) ([]R, error) {
		var list []W
		if err := c.api.Do(ctx, rest.Request{Path: path, Auth: auth}, &list); err != nil {
			return nil, err
		}
		return convert(list), nil
	})
}

// resultOnce is the one-shot of an operation whose callback takes only a result: if the Client is
// dropped first, the callback gets ErrorType ClientDestroyed; either way cb.Release runs after it.
func resultOnce[F ~func(*ClientResult)](c *Client, cb Callback[F]) *callbacks.Once {
	return c.scope.Once(func() { cb.Fn(destroyed()) }, cb.Release)
}

// resultOnce1 is resultOnce for a callback that takes a result and one value (zero when the
// Client is dropped first).
func resultOnce1[T any, F ~func(*ClientResult, T)](c *Client, cb Callback[F]) *callbacks.Once {
	return c.scope.Once(func() {
		var zero T
		cb.Fn(destroyed(), zero)
	}, cb.Release)
}
