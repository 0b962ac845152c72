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

package server

import (
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"sigs.k8s.io/ccm-harness/fakecloud/api"
	"sigs.k8s.io/ccm-harness/fakecloud/model"
	"sigs.k8s.io/ccm-harness/fakecloud/server/awsquery"
)

// fakecloud speaks AWS too, over the same state: EC2 shows its instances
// in one VPC with a subnet per zone, its routes in one route table, and
// (aws_elb.go) Elastic Load Balancing its load balancers. Each service is
// a query-protocol endpoint under api.AWSPath (package awsquery: the
// protocol, its signatures and its errors). Calls are audited and faulted
// under the operations of the native API they stand for, so one fault
// makes every dialect lie alike.

// awsService is one AWS service's endpoint and its actions.
type awsService struct {
	awsquery.Service
	actions map[string]awsAction
}

// awsAction answers one Action. It reads its parameters from q, which
// refuses any it was not told of (awsquery.Query.Done), and writes its
// answer with Answer.
type awsAction struct {
	// op is the native operation it stands for in faults and the audit log.
	op string
	h  awsHandler
}

// awsHandler answers one action's call: its parameters in q.
type awsHandler func(w http.ResponseWriter, r *http.Request, c *model.Call, q *awsquery.Query)

// awsShape writes an error answer in one service's shape; it is the
// call's dialect, so that faults answer in it too.
type awsShape struct {
	svc *awsService
	// code maps an HTTP status (an injected fault's) to the service's code.
	code func(status int) string
}

func (d awsShape) WriteError(w http.ResponseWriter, status int, msg string) {
	d.svc.ErrorShape(w, status, d.code(status), msg, awsquery.RequestID())
}

func (s *Server) awsRoutes() {
	for _, svc := range []*awsService{s.ec2Service(), s.elbService(), s.elbv2Service()} {
		shape := awsShape{svc: svc, code: awsquery.StatusCode("RequestLimitExceeded")}
		if svc.Signing != "ec2" {
			shape.code = awsquery.StatusCode("Throttling")
		}
		s.mux.HandleFunc(svc.Path, func(w http.ResponseWriter, r *http.Request) {
			s.awsServe(w, r, svc, shape)
		})
	}
}

// awsServe checks the signature, finds the action and runs it.
func (s *Server) awsServe(w http.ResponseWriter, r *http.Request, svc *awsService, shape awsShape) {
	c := callOf(r)
	c.Dialect = shape
	fail := func(e *awsquery.Error) { svc.Fail(w, e) }
	r.Body = http.MaxBytesReader(w, r.Body, model.MaxBodyBytes)
	body, err := io.ReadAll(r.Body)
	if err != nil {
		fail(awsquery.Errorf(http.StatusBadRequest, "InvalidRequest", "cannot read the request body: %v", err))
		return
	}
	if r.Method != http.MethodPost {
		fail(awsquery.Errorf(http.StatusBadRequest, "InvalidAction", "fakecloud answers the AWS query protocol as form POSTs only, not %s", r.Method))
		return
	}
	// The CCM's access key signs with the cloud token, the inspector's
	// with the inspector token.
	keyID, e := svc.Verify(r, body, s.Region(), func(keyID string) ([]byte, bool) {
		switch {
		case keyID == api.AWSInspectorAccessKeyID && len(s.inspToken) > 0:
			return s.inspToken, true
		case keyID == api.AWSAccessKeyID:
			return s.cloudToken, true
		}
		return nil, false
	})
	if e != nil {
		fail(e)
		return
	}
	c.Caller = model.CallerCloud
	if keyID == api.AWSInspectorAccessKeyID && len(s.inspToken) > 0 {
		c.Caller = model.CallerInspector
	}
	form, err := url.ParseQuery(string(body))
	if err != nil {
		fail(awsquery.Errorf(http.StatusBadRequest, "MalformedQueryString", "%v", err))
		return
	}
	action := form.Get("Action")
	c.Action = action
	a, ok := svc.actions[action]
	if !ok {
		fail(awsquery.Errorf(http.StatusBadRequest, "InvalidAction", "The action %s is not valid for this web service (fakecloud emulates %s).", action, strings.Join(sortedKeys(svc.actions), ", ")))
		return
	}
	if v := form.Get("Version"); v != svc.Version {
		fail(awsquery.Errorf(http.StatusBadRequest, "InvalidParameterValue", "Version %q is not %s's %s", v, svc.Signing, svc.Version))
		return
	}
	c.Op = a.op
	a.h(w, r, c, awsquery.NewQuery(form, "Action", "Version"))
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
