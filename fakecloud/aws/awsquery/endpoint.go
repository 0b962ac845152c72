/*
Copyright 2026 The Kubernetes Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package awsquery

import (
	"net/http"
	"slices"

	"sigs.k8s.io/ccm-harness/fakecloud/model"
)

// The routing every AWS front shares: a service's endpoint maps each
// Action to its handler and to the native operation it stands for, which
// package server's router audits and faults it under.

// Endpoint is one AWS service's endpoint and its actions.
type Endpoint struct {
	Service
	Actions map[string]Action
}

// Action answers one Action. It reads its parameters from q, which
// refuses any it was not told of (Query.Done), and writes its answer
// with Answer.
type Action struct {
	// Op is the native operation it stands for in faults and the audit log.
	Op string
	H  Handler
}

// Handler answers one action's call: its parameters in q.
type Handler func(w http.ResponseWriter, r *http.Request, c *model.Call, q *Query)

// Shape writes an error answer in one service's shape; it is the call's
// dialect (a model.ErrorShape), so that faults answer in it too.
type Shape struct {
	Svc *Endpoint
	// Code maps an HTTP status (an injected fault's) to the service's code.
	Code func(status int) string
}

// WriteError writes an error in the service's shape.
func (d Shape) WriteError(w http.ResponseWriter, status int, msg string) {
	d.Svc.ErrorShape(w, status, d.Code(status), msg, RequestID())
}

// SortedKeys are m's keys in order: an answer that lists them (the
// actions a service emulates, a load balancer's attributes) is stable.
func SortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
