// Command floodgen is the overload benchmark's load generator: gRPC unary
// calls (grpc-go's client) to a server on loopback, in an open loop (calls go
// out at a rate whatever comes back) or a closed loop (each caller calls
// again once answered), each outcome classified by its gRPC status.
//
// On a machine the generator shares with the server it floods, every CPU
// second it spends is one the server does not get. A Node.js generator spends
// about as much a call as the service it measures; this one less. It never
// decodes an answer: the request comes encoded, the answer is counted as
// bytes.
//
// It reads loads from stdin, one JSON object a line (see load), and answers
// each with one line of results (see results), so one process serves a whole
// benchmark and its CPU can be counted by its pid.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
)

func main() {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 64<<20)
	out := json.NewEncoder(os.Stdout)
	for in.Scan() {
		var l load
		var answer any
		if err := json.Unmarshal(in.Bytes(), &l); err != nil {
			answer = failure{Error: fmt.Sprintf("a load line that is not JSON: %v", err)}
		} else if err := l.validate(); err != nil {
			answer = failure{Error: err.Error()}
		} else if r, err := run(l); err != nil {
			answer = failure{Error: err.Error()}
		} else {
			answer = r
		}
		if err := out.Encode(answer); err != nil {
			fmt.Fprintf(os.Stderr, "floodgen: writing results: %v\n", err)
			os.Exit(1)
		}
	}
	if err := in.Err(); err != nil {
		fmt.Fprintf(os.Stderr, "floodgen: reading loads: %v\n", err)
		os.Exit(1)
	}
}

type failure struct {
	Error string `json:"error"`
}
