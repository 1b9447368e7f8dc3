package main

import (
	"errors"
	"fmt"
	"net"
	"strings"
)

// load is one run of calls, as the benchmark asks for it.
type load struct {
	// Loop is "open" (Rate calls a second for Seconds, whatever comes back)
	// or "closed" (Callers callers for Seconds, each calling again once
	// answered).
	Loop    string  `json:"loop"`
	Rate    float64 `json:"rate"`
	Callers int     `json:"callers"`
	Seconds float64 `json:"seconds"`
	// Target is host:port; the host must be a loopback address.
	Target string `json:"target"`
	// Connections is how many HTTP/2 connections the calls are spread over
	// (call i on connection i mod Connections).
	Connections int `json:"connections"`
	// WindowBytes is each connection's and each stream's flow-control window
	// for answers (0: gRPC's, which grows it as answers come).
	WindowBytes int `json:"windowBytes"`
	// Path is the method's, as "/package.Service/Method".
	Path string `json:"path"`
	// Message is the request's encoded message; base64 in JSON.
	Message []byte `json:"message"`
	// Headers are sent with every call beside gRPC's own.
	Headers map[string]string `json:"headers"`
	// DeadlineMs is each call's deadline: sent as grpc-timeout, and the call
	// is cancelled (its stream reset) when it passes.
	DeadlineMs int `json:"deadlineMs"`
}

// validate names every problem of a load at once.
func (l load) validate() error {
	var problems []string
	switch l.Loop {
	case "open":
		if !(l.Rate > 0) {
			problems = append(problems, fmt.Sprintf("rate must be above 0 for an open loop, got %v", l.Rate))
		}
	case "closed":
		if l.Callers < 1 {
			problems = append(problems, fmt.Sprintf("callers must be at least 1 for a closed loop, got %d", l.Callers))
		}
	default:
		problems = append(problems, fmt.Sprintf(`loop must be "open" or "closed", got %q`, l.Loop))
	}
	if !(l.Seconds > 0) {
		problems = append(problems, fmt.Sprintf("seconds must be above 0, got %v", l.Seconds))
	}
	if err := loopbackTarget(l.Target); err != nil {
		problems = append(problems, err.Error())
	}
	if l.Connections < 1 {
		problems = append(problems, fmt.Sprintf("connections must be at least 1, got %d", l.Connections))
	}
	if l.WindowBytes != 0 && (l.WindowBytes < 65535 || l.WindowBytes > 1<<31-1) {
		problems = append(problems, fmt.Sprintf("windowBytes must be 0 or from 65535 to 2^31-1 (HTTP/2's window), got %d", l.WindowBytes))
	}
	if !strings.HasPrefix(l.Path, "/") {
		problems = append(problems, fmt.Sprintf(`path must start with "/", got %q`, l.Path))
	}
	if l.DeadlineMs < 1 {
		problems = append(problems, fmt.Sprintf("deadlineMs must be at least 1, got %d", l.DeadlineMs))
	}
	if len(problems) > 0 {
		return errors.New("load: " + strings.Join(problems, "; "))
	}
	return nil
}

// loopbackTarget refuses any target but a loopback address: a load generator
// pointed elsewhere is a denial of service.
func loopbackTarget(target string) error {
	host, port, err := net.SplitHostPort(target)
	if err != nil || port == "" {
		return fmt.Errorf("target must be host:port, got %q", target)
	}
	ip := net.ParseIP(host)
	if ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("target must be a loopback address (127.0.0.0/8 or ::1), got %q", host)
	}
	return nil
}
