package main

import (
	"context"
	"strconv"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// Outcomes, as the benchmark counts them.
const (
	answered = iota
	refused
	deadline
	other
)

// statusNames are gRPC's status codes by number, as the benchmark names them.
var statusNames = []string{
	"OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND", "ALREADY_EXISTS",
	"PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION", "ABORTED", "OUT_OF_RANGE",
	"UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS", "UNAUTHENTICATED",
}

// outcome is how one call ended.
type outcome struct {
	kind int
	// code is the gRPC status's name, or what an answer without content was.
	code string
	// pushbackMs is a refusal's grpc-retry-pushback-ms, or -1.
	pushbackMs float64
}

// rawCodec sends a request's message as the bytes it is given and counts an
// answer's bytes without joining or decoding them: decoding large answers
// would make the generator, not the server, what is measured.
type rawCodec struct{}

func (rawCodec) Marshal(v any) (mem.BufferSlice, error) {
	return mem.BufferSlice{mem.SliceBuffer(*v.(*[]byte))}, nil
}

func (rawCodec) Unmarshal(data mem.BufferSlice, v any) error {
	*v.(*int) = data.Len()
	return nil
}

// Name is the content subtype: "proto", as for the messages the bytes are.
func (rawCodec) Name() string { return "proto" }

// callers are a load's connections, each a client of its own so that calls
// spread over exactly that many. gRPC's own client: it waits for a stream
// when a connection is at the server's limit, sends the deadline as
// grpc-timeout and resets the stream when it passes, and batches frames into
// few writes. Retries are off: a refusal is an outcome to count.
type callers struct {
	conns    []*grpc.ClientConn
	path     string
	message  []byte
	headers  metadata.MD
	deadline time.Duration
}

func newCallers(l load) (*callers, error) {
	c := &callers{
		path:     l.Path,
		message:  l.Message,
		headers:  metadata.New(l.Headers),
		deadline: time.Duration(l.DeadlineMs) * time.Millisecond,
	}
	options := []grpc.DialOption{
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDisableRetry(),
		grpc.WithDefaultCallOptions(grpc.ForceCodecV2(rawCodec{}), grpc.MaxCallRecvMsgSize(1<<31-1)),
	}
	if l.WindowBytes > 0 {
		options = append(options, grpc.WithInitialWindowSize(int32(l.WindowBytes)), grpc.WithInitialConnWindowSize(int32(l.WindowBytes)))
	}
	for range l.Connections {
		conn, err := grpc.NewClient("passthrough:///"+l.Target, options...)
		if err != nil {
			c.close()
			return nil, err
		}
		conn.Connect()
		c.conns = append(c.conns, conn)
	}
	return c, nil
}

func (c *callers) close() {
	for _, conn := range c.conns {
		_ = conn.Close()
	}
}

// call makes one call on connection i mod the connections.
func (c *callers) call(i int) outcome {
	ctx, cancel := context.WithTimeout(metadata.NewOutgoingContext(context.Background(), c.headers), c.deadline)
	defer cancel()
	var answerBytes int
	var trailer metadata.MD
	err := c.conns[i%len(c.conns)].Invoke(ctx, c.path, &c.message, &answerBytes, grpc.Trailer(&trailer))
	pushback := ""
	if values := trailer.Get("grpc-retry-pushback-ms"); len(values) > 0 {
		pushback = values[0]
	}
	return classify(status.Code(err), pushback, answerBytes)
}

// classify is a call's outcome from its status, its pushback and the bytes
// of its answer.
func classify(code codes.Code, pushback string, answerBytes int) outcome {
	name := strconv.Itoa(int(code))
	if int(code) < len(statusNames) {
		name = statusNames[code]
	}
	switch code {
	case codes.OK:
		// No answer the benchmark asks for is empty: one that is answered nothing.
		if answerBytes > 0 {
			return outcome{kind: answered, code: name, pushbackMs: -1}
		}
		return outcome{kind: other, code: "EMPTY_ANSWER", pushbackMs: -1}
	case codes.ResourceExhausted:
		ms, err := strconv.ParseFloat(pushback, 64)
		if err != nil || ms < 0 {
			ms = -1
		}
		return outcome{kind: refused, code: name, pushbackMs: ms}
	case codes.DeadlineExceeded:
		return outcome{kind: deadline, code: name, pushbackMs: -1}
	default:
		return outcome{kind: other, code: name, pushbackMs: -1}
	}
}
