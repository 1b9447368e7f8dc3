package main

import (
	"context"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// server is a gRPC server on loopback whose methods each end a call one way.
type server struct {
	addr      string
	cancelled atomic.Int64
	// seen is the last call's metadata, whether it had a deadline, and its request's bytes.
	seen atomic.Pointer[seenCall]
}

type seenCall struct {
	md           metadata.MD
	hasDeadline  bool
	requestBytes int
}

func startServer(t *testing.T) *server {
	t.Helper()
	s := &server{}
	handler := func(_ any, stream grpc.ServerStream) error {
		method, _ := grpc.MethodFromServerStream(stream)
		var requestBytes int
		if err := stream.RecvMsg(&requestBytes); err != nil {
			return err
		}
		md, _ := metadata.FromIncomingContext(stream.Context())
		_, hasDeadline := stream.Context().Deadline()
		s.seen.Store(&seenCall{md: md, hasDeadline: hasDeadline, requestBytes: requestBytes})
		answer := func(b []byte) error { return stream.SendMsg(&b) }
		switch method {
		case "/t.S/Answer":
			return answer([]byte{1, 2, 3})
		case "/t.S/Empty":
			return answer(nil)
		case "/t.S/Refuse":
			stream.SetTrailer(metadata.Pairs("grpc-retry-pushback-ms", "250"))
			return status.Error(codes.ResourceExhausted, "busy")
		case "/t.S/RefuseWithoutPushback":
			return status.Error(codes.ResourceExhausted, "busy")
		case "/t.S/ServerDeadline":
			return status.Error(codes.DeadlineExceeded, "too late")
		case "/t.S/Unavailable":
			return status.Error(codes.Unavailable, "gone")
		case "/t.S/Hang":
			<-stream.Context().Done()
			s.cancelled.Add(1)
			return stream.Context().Err()
		default:
			return status.Error(codes.Unimplemented, method)
		}
	}
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	grpcServer := grpc.NewServer(grpc.UnknownServiceHandler(handler), grpc.ForceServerCodecV2(rawCodec{}))
	go func() { _ = grpcServer.Serve(listener) }()
	t.Cleanup(grpcServer.Stop)
	s.addr = listener.Addr().String()
	return s
}

func loadOf(addr, path string) load {
	return load{
		Loop: "closed", Callers: 1, Seconds: 0.2, Target: addr, Connections: 2, WindowBytes: 1 << 20, Path: path,
		Message: []byte{10, 1, 9}, Headers: map[string]string{"x-tenant-id": "tenant-a"}, DeadlineMs: 300,
	}
}

func callOnce(t *testing.T, l load) outcome {
	t.Helper()
	c, err := newCallers(l)
	if err != nil {
		t.Fatal(err)
	}
	defer c.close()
	return c.call(0)
}

func TestEachWayACallEndsIsClassifiedAgainstARealGRPCServer(t *testing.T) {
	s := startServer(t)
	cases := []struct {
		path string
		want outcome
	}{
		{"/t.S/Answer", outcome{answered, "OK", -1}},
		{"/t.S/Refuse", outcome{refused, "RESOURCE_EXHAUSTED", 250}},
		{"/t.S/RefuseWithoutPushback", outcome{refused, "RESOURCE_EXHAUSTED", -1}},
		{"/t.S/Empty", outcome{other, "EMPTY_ANSWER", -1}},
		{"/t.S/ServerDeadline", outcome{deadline, "DEADLINE_EXCEEDED", -1}},
		{"/t.S/Unavailable", outcome{other, "UNAVAILABLE", -1}},
		{"/t.S/NoSuchMethod", outcome{other, "UNIMPLEMENTED", -1}},
		{"/t.S/Hang", outcome{deadline, "DEADLINE_EXCEEDED", -1}},
	}
	for _, tc := range cases {
		t.Run(tc.path, func(t *testing.T) {
			if got := callOnce(t, loadOf(s.addr, tc.path)); got != tc.want {
				t.Fatalf("call to %s: got %+v, want %+v", tc.path, got, tc.want)
			}
		})
	}
}

func TestACallSendsItsMessageDeadlineAndTheLoadsHeaders(t *testing.T) {
	s := startServer(t)
	if got := callOnce(t, loadOf(s.addr, "/t.S/Answer")); got.kind != answered {
		t.Fatalf("call: %+v", got)
	}
	seen := s.seen.Load()
	if seen.requestBytes != 3 || !seen.hasDeadline {
		t.Errorf("the server got %d bytes (want 3), a deadline: %v (want true)", seen.requestBytes, seen.hasDeadline)
	}
	if got := seen.md.Get("x-tenant-id"); len(got) != 1 || got[0] != "tenant-a" {
		t.Errorf("x-tenant-id: got %q, want tenant-a", got)
	}
	if got := seen.md.Get("content-type"); len(got) != 1 || !strings.HasPrefix(got[0], "application/grpc") {
		t.Errorf("content-type: got %q", got)
	}
}

func TestACallPastItsDeadlineIsCancelledOnTheServer(t *testing.T) {
	s := startServer(t)
	l := loadOf(s.addr, "/t.S/Hang")
	l.DeadlineMs = 50
	started := time.Now()
	if got := callOnce(t, l); got.kind != deadline {
		t.Fatalf("call: %+v", got)
	}
	if elapsed := time.Since(started); elapsed > 5*time.Second {
		t.Fatalf("the call ended %v after it started, long past its 50 ms deadline", elapsed)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for s.cancelled.Load() == 0 {
		select {
		case <-ctx.Done():
			t.Fatal("the server never saw the call cancelled")
		case <-time.After(10 * time.Millisecond):
		}
	}
}

func TestNoServerIsUnavailable(t *testing.T) {
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := listener.Addr().String()
	_ = listener.Close()
	if got := callOnce(t, loadOf(addr, "/t.S/Answer")); got != (outcome{other, "UNAVAILABLE", -1}) {
		t.Fatalf("call: %+v", got)
	}
}

func TestAnOpenLoopSendsEveryCallDueWhateverComesBack(t *testing.T) {
	s := startServer(t)
	l := loadOf(s.addr, "/t.S/Answer")
	l.Loop, l.Rate, l.Seconds = "open", 400, 0.5
	r, err := run(l)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Ms) != 200 || len(r.Outcome) != 200 || len(r.Codes) != 200 || len(r.PushbackMs) != 200 || len(r.SentLateMs) != 200 {
		t.Fatalf("columns of %d, %d, %d, %d, %d calls, want 200 each", len(r.Ms), len(r.Outcome), len(r.Codes), len(r.PushbackMs), len(r.SentLateMs))
	}
	for i, kind := range r.Outcome {
		if kind != answered || r.Ms[i] < r.SentLateMs[i] {
			t.Fatalf("call %d: outcome %d (%s), %v ms from due, sent %v ms late", i, kind, r.Codes[i], r.Ms[i], r.SentLateMs[i])
		}
	}
	if r.Seconds < 0.49 {
		t.Fatalf("an open loop of 0.5 s took %v s", r.Seconds)
	}
}

func TestAClosedLoopCallsAgainOnceAnswered(t *testing.T) {
	s := startServer(t)
	l := loadOf(s.addr, "/t.S/Refuse")
	l.Callers = 3
	r, err := run(l)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Outcome) < 6 {
		t.Fatalf("%d calls from 3 callers in 0.2 s", len(r.Outcome))
	}
	for i, kind := range r.Outcome {
		if kind != refused || r.PushbackMs[i] != 250 || r.SentLateMs[i] != 0 {
			t.Fatalf("call %d: outcome %d, pushback %v, sent late %v", i, kind, r.PushbackMs[i], r.SentLateMs[i])
		}
	}
}

func TestClassifyTable(t *testing.T) {
	cases := []struct {
		code     codes.Code
		pushback string
		bytes    int
		want     outcome
	}{
		{codes.OK, "", 1, outcome{answered, "OK", -1}},
		{codes.OK, "", 0, outcome{other, "EMPTY_ANSWER", -1}},
		{codes.ResourceExhausted, "120", 0, outcome{refused, "RESOURCE_EXHAUSTED", 120}},
		{codes.ResourceExhausted, "soon", 0, outcome{refused, "RESOURCE_EXHAUSTED", -1}},
		{codes.ResourceExhausted, "-5", 0, outcome{refused, "RESOURCE_EXHAUSTED", -1}},
		{codes.DeadlineExceeded, "", 0, outcome{deadline, "DEADLINE_EXCEEDED", -1}},
		{codes.Canceled, "", 0, outcome{other, "CANCELLED", -1}},
		{codes.Unauthenticated, "", 0, outcome{other, "UNAUTHENTICATED", -1}},
		{codes.Code(42), "", 0, outcome{other, "42", -1}},
	}
	for _, tc := range cases {
		if got := classify(tc.code, tc.pushback, tc.bytes); got != tc.want {
			t.Errorf("classify(%v, %q, %d) = %+v, want %+v", tc.code, tc.pushback, tc.bytes, got, tc.want)
		}
	}
}

func TestALoadNamesEveryProblemAtOnce(t *testing.T) {
	err := load{Loop: "sideways", Target: "10.0.0.1:80", Path: "nope", WindowBytes: 10}.validate()
	if err == nil {
		t.Fatal("a load with every field wrong was accepted")
	}
	for _, part := range []string{`loop must be "open" or "closed"`, "seconds must be above 0", "loopback",
		"connections must be at least 1", "windowBytes", `path must start with "/"`, "deadlineMs must be at least 1"} {
		if !strings.Contains(err.Error(), part) {
			t.Errorf("the error does not say %q: %v", part, err)
		}
	}
}

func TestOnlyLoopbackTargetsAreAccepted(t *testing.T) {
	for target, ok := range map[string]bool{
		"127.0.0.1:50051": true, "127.0.0.9:1": true, "[::1]:50051": true,
		"localhost:50051": false, "10.0.0.1:50051": false, "[2001:db8::1]:443": false, "0.0.0.0:50051": false, "127.0.0.1": false,
	} {
		if err := loopbackTarget(target); (err == nil) != ok {
			t.Errorf("loopbackTarget(%q): %v, want accepted %v", target, err, ok)
		}
	}
}

func TestPercentile(t *testing.T) {
	values := []float64{5, 1, 4, 2, 3}
	for p, want := range map[float64]float64{50: 3, 99: 5, 0: 1, 100: 5} {
		if got := percentile(values, p); got != want {
			t.Errorf("percentile(%v, %v) = %v, want %v", values, p, got, want)
		}
	}
	if got := percentile(nil, 99); got != 0 {
		t.Errorf("percentile of nothing = %v, want 0", got)
	}
}
