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
	"strings"

	"sigs.k8s.io/ccm-harness/fakecloud/api"
	"sigs.k8s.io/ccm-harness/fakecloud/aws/awsquery"
	"sigs.k8s.io/ccm-harness/fakecloud/aws/ec2"
	"sigs.k8s.io/ccm-harness/fakecloud/aws/elb"
	"sigs.k8s.io/ccm-harness/fakecloud/aws/elbv2"
	"sigs.k8s.io/ccm-harness/fakecloud/model"
)

// fakecloud speaks AWS too, over the same state: EC2 shows its instances
// in one VPC with a subnet per zone, its routes in one route table, and
// Elastic Load Balancing (classic and v2) its load balancers, each a front
// of its own under fakecloud/aws. Each service is a query-protocol
// endpoint under api.AWSPath (package awsquery: the protocol, its
// signatures, its errors and its routing); this file authenticates and
// routes their calls. Calls are audited and faulted
// under the operations of the native API they stand for, so one fault
// makes every dialect lie alike.

func (s *Server) awsRoutes() {
	for _, svc := range []*awsquery.Endpoint{ec2.New(s.Cloud).Endpoint(), elb.New(s.Cloud).Endpoint(), elbv2.New(s.Cloud).Endpoint()} {
		shape := awsquery.Shape{Svc: svc, Code: awsquery.StatusCode("RequestLimitExceeded")}
		if svc.Signing != "ec2" {
			shape.Code = awsquery.StatusCode("Throttling")
		}
		s.mux.HandleFunc(svc.Path, func(w http.ResponseWriter, r *http.Request) {
			s.awsServe(w, r, svc, shape)
		})
	}
}

// awsServe checks the signature, finds the action and runs it.
func (s *Server) awsServe(w http.ResponseWriter, r *http.Request, svc *awsquery.Endpoint, shape awsquery.Shape) {
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
	a, ok := svc.Actions[action]
	if !ok {
		fail(awsquery.Errorf(http.StatusBadRequest, "InvalidAction", "The action %s is not valid for this web service (fakecloud emulates %s).", action, strings.Join(awsquery.SortedKeys(svc.Actions), ", ")))
		return
	}
	if v := form.Get("Version"); v != svc.Version {
		fail(awsquery.Errorf(http.StatusBadRequest, "InvalidParameterValue", "Version %q is not %s's %s", v, svc.Signing, svc.Version))
		return
	}
	c.Op = a.Op
	a.H(w, r, c, awsquery.NewQuery(form, "Action", "Version"))
}
