package invites

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"time"

	"sdkpp/internal/clock"
	"sdkpp/server/store"
	"sdkpp/wire"
)

// jobBatch is how many users a target-users job checks per step; its progress
// (processed_users) is stored after each step.
const jobBatch = 1000

// jobRetry is how long the job goroutine waits after a store failure before it tries again.
const jobRetry = time.Second

// jobRunner is the goroutine that processes target-users uploads (rule INVT-2). Jobs are kept in
// the store: one that a stopped service left processing is taken up again by the next start.
type jobRunner struct {
	wakeOnce sync.Once
	wake     chan struct{} // from wakeChan

	mu     sync.Mutex
	cancel context.CancelFunc // nil until started
	done   chan struct{}
}

// wakeChan returns the channel that tells the goroutine a job may be waiting.
func (r *jobRunner) wakeChan() chan struct{} {
	r.wakeOnce.Do(func() { r.wake = make(chan struct{}, 1) })
	return r.wake
}

// kick tells the goroutine that a job may be waiting (before StartJobs, once it starts).
func (r *jobRunner) kick() {
	select {
	case r.wakeChan() <- struct{}{}:
	default:
	}
}

// StartJobs starts the goroutine that processes the target-users jobs of Create Channel Invite
// and Update Target Users (rule INVT-2), beginning with those a previous run left processing.
// Close stops it. Without it, uploads stay processing. A second call does nothing.
func (s *Service) StartJobs() {
	r := &s.jobs
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cancel != nil {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel, r.done = cancel, make(chan struct{})
	go s.runJobs(ctx, r.wakeChan(), r.done)
}

// Close stops the goroutine StartJobs started and waits for it. A job it was processing stays
// processing, for the next start. Close does nothing when StartJobs was not called.
func (s *Service) Close() {
	r := &s.jobs
	r.mu.Lock()
	cancel, done := r.cancel, r.done
	r.mu.Unlock()
	if cancel == nil {
		return
	}
	cancel()
	<-done
}

func (s *Service) runJobs(ctx context.Context, wake <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	for {
		j, err := s.Store.NextInviteTargetJob(ctx)
		if err == nil {
			start := time.Now() // the job's real duration, for ObserveJob
			err = s.processJob(ctx, j)
			if ctx.Err() == nil && s.ObserveJob != nil {
				s.ObserveJob("invite_target_users", time.Since(start), err)
			}
		}
		var retry time.Time
		switch {
		case ctx.Err() != nil:
			return
		case err == nil:
			continue // the next job, if any
		case errors.Is(err, store.ErrNotFound):
			// none processing or free: wait for a kick, or the next poll
			if s.PollJobs > 0 {
				retry = s.Clock.Now().Add(s.PollJobs)
			}
		default:
			s.Logger.Error("target users job", "err", err)
			retry = s.Clock.Now().Add(jobRetry)
		}
		if !s.waitJobs(ctx, wake, retry) {
			return
		}
	}
}

// waitJobs waits for a kick, or until at when it is not zero; false when ctx is done.
func (s *Service) waitJobs(ctx context.Context, wake <-chan struct{}, at time.Time) bool {
	var due <-chan time.Time
	if !at.IsZero() {
		var stop func()
		due, stop = clock.At(s.Clock, at)
		defer stop()
	}
	select {
	case <-ctx.Done():
		return false
	case <-wake:
	case <-due:
	}
	return true
}

// jobHook calls OnTargetUsersJob when set.
func (s *Service) jobHook(ctx context.Context, code string, status int) {
	if s.OnTargetUsersJob != nil {
		s.OnTargetUsersJob(ctx, code, status)
	}
}

// processJob checks that every user of the job exists, jobBatch at a time, storing its
// progress; then it replaces the invite's target list and completes the job, or fails it (the
// list unchanged) naming unknown users. A job a later upload replaced meanwhile is dropped. An
// error is a store failure: the job stays processing.
func (s *Service) processJob(ctx context.Context, j *store.InviteTargetJob) error {
	s.jobHook(ctx, j.Code, wire.TargetUsersJobProcessing)
	processed := 0
	var missing []uint64
	for start := 0; start < len(j.UserIDs) && len(missing) == 0; start += jobBatch {
		if err := ctx.Err(); err != nil {
			return err
		}
		batch := j.UserIDs[start:min(start+jobBatch, len(j.UserIDs))]
		m, err := s.Store.MissingUsers(ctx, batch)
		if err != nil {
			return err
		}
		missing, processed = m, processed+len(batch)
		err = s.Store.ProgressInviteTargetJob(ctx, j.Code, j.Seq, processed)
		if errors.Is(err, store.ErrNotFound) {
			return nil // replaced by a later upload
		}
		if err != nil {
			return err
		}
	}
	msg := unknownUsers(missing)
	err := s.Store.WithTx(ctx, func(st store.Store) error {
		cur, err := st.GetInviteTargetJob(ctx, j.Code)
		if err != nil {
			return err
		}
		if cur.Seq != j.Seq || cur.Status != store.InviteJobProcessing {
			return store.ErrNotFound // replaced by a later upload
		}
		if msg == "" {
			err := st.ReplaceInviteTargets(ctx, j.Code, j.UserIDs)
			if errors.Is(err, store.ErrNotFound) {
				msg = "The invite no longer exists."
			} else if err != nil {
				return err
			}
		}
		return st.EndInviteTargetJob(ctx, j.Code, j.Seq, processed, msg, s.Clock.Now())
	})
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	status := wire.TargetUsersJobCompleted
	if msg != "" {
		status = wire.TargetUsersJobFailed
	}
	s.jobHook(ctx, j.Code, status)
	return nil
}

// maxNamedUsers bounds the unknown users a failed job's error message names.
const maxNamedUsers = 10

// unknownUsers is the error message of a job whose file names unknown users; "" for none.
func unknownUsers(ids []uint64) string {
	if len(ids) == 0 {
		return ""
	}
	names := make([]string, 0, min(len(ids), maxNamedUsers))
	for _, id := range ids[:min(len(ids), maxNamedUsers)] {
		names = append(names, strconv.FormatUint(id, 10))
	}
	msg := "The file names unknown users: " + strings.Join(names, ", ")
	if len(ids) > maxNamedUsers {
		msg += " and " + strconv.Itoa(len(ids)-maxNamedUsers) + " more"
	}
	return msg + "."
}
