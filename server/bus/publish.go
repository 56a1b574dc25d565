package bus

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
)

// A publish waits for the stream's ack on an inbox of its own (an acker), read by the
// publishing goroutine itself: the client library's request path hands each reply from the
// connection's reader to a goroutine of its own and then to the requester, one more wake-up on
// the way of every publish, which waits under an order lock (package gateway's PublishStaged).

// acker is an inbox of the bus's connection where the acks of one publish at a time arrive:
// each publish's reply subject ends with its own number, so that the late ack of a publish that
// gave up is not taken for the next one's.
type acker struct {
	sub   *nats.Subscription
	acks  chan *nats.Msg
	inbox string
	n     uint64 // publishes made through it
}

// idleAckers bounds the ackers a bus keeps between publishes (one per publish under way).
const idleAckers = 8

// ackerRoom is the room of an acker's channel: its publish's ack, and the late acks of the
// publishes before it that gave up (each next publish drops them). The client drops what finds
// it full: a publish whose ack is dropped gives up at its deadline, as when the ack is lost.
const ackerRoom = 8

// The retries of a publish the stream did not answer (no responders: the stream is not there
// for a moment, as when its server restarts), as the client library's own publish makes them.
const (
	publishRetries   = 2
	publishRetryWait = 250 * time.Millisecond
)

// defaultPublishTimeout bounds a publish whose context has no deadline.
const defaultPublishTimeout = 5 * time.Second

// pubAck is the stream's answer to a publish.
type pubAck struct {
	Error *struct {
		Code        int    `json:"code"`
		ErrCode     int    `json:"err_code"`
		Description string `json:"description"`
	} `json:"error"`
	Stream string `json:"stream"`
	Seq    uint64 `json:"seq"`
}

// publish appends data to the stream with the message id id and returns its sequence number
// once the stream stored it.
func (b *Bus) publish(ctx context.Context, data []byte, id string) (uint64, error) {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, defaultPublishTimeout)
		defer cancel()
	}
	a, err := b.takeAcker()
	if err != nil {
		return 0, err
	}
	defer b.putAcker(a)
	a.n++
	m := &nats.Msg{Subject: Subject, Reply: a.inbox + "." + strconv.FormatUint(a.n, 36), Data: data,
		Header: nats.Header{"Nats-Msg-Id": []string{id}}}
	for try := 0; ; try++ {
		if err := b.nc.PublishMsg(m); err != nil {
			return 0, err
		}
		r, err := a.next(ctx, m.Reply)
		if err == nil && len(r.Data) == 0 && r.Header.Get("Status") == "503" {
			err = nats.ErrNoResponders
		}
		if errors.Is(err, nats.ErrNoResponders) && try < publishRetries {
			select {
			case <-ctx.Done():
				return 0, ctx.Err()
			case <-time.After(publishRetryWait):
			}
			continue
		}
		if err != nil {
			return 0, err
		}
		var ack pubAck
		if err := json.Unmarshal(r.Data, &ack); err != nil {
			return 0, fmt.Errorf("invalid ack: %w", err)
		}
		if ack.Error != nil {
			return 0, fmt.Errorf("%s (%d)", ack.Error.Description, ack.Error.ErrCode)
		}
		if ack.Stream != Stream || ack.Seq == 0 {
			return 0, fmt.Errorf("invalid ack %q", r.Data)
		}
		return ack.Seq, nil
	}
}

// next returns the reply to subject reply, dropping those to the acker's earlier publishes.
func (a *acker) next(ctx context.Context, reply string) (*nats.Msg, error) {
	for {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case r := <-a.acks:
			if r.Subject == reply {
				return r, nil
			}
		}
	}
}

// takeAcker returns an idle acker, or a new one.
func (b *Bus) takeAcker() (*acker, error) {
	select {
	case a := <-b.ackers:
		return a, nil
	default:
	}
	inbox := b.nc.NewInbox()
	acks := make(chan *nats.Msg, ackerRoom)
	sub, err := b.nc.ChanSubscribe(inbox+".*", acks)
	if err != nil {
		return nil, fmt.Errorf("ack inbox: %w", err)
	}
	return &acker{sub: sub, acks: acks, inbox: inbox}, nil
}

// putAcker keeps a for the next publish, unless enough are kept. The ack of a publish that
// gave up may still arrive: the next publish through a drops it.
func (b *Bus) putAcker(a *acker) {
	select {
	case b.ackers <- a:
	default:
		_ = a.sub.Unsubscribe()
	}
}
