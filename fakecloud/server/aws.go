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
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"

	"sigs.k8s.io/ccm-harness/fakecloud/api"
)

// fakecloud speaks AWS too, over the same state: EC2 shows its instances
// in one VPC with a subnet per zone, its routes in one route table, and
// (aws_elb.go) Elastic Load Balancing its load balancers. Each service is
// a query-protocol endpoint under api.AWSPath: form POSTs naming an Action
// and a Version, signed with Signature Version 4, answered in XML, errors
// included, in the service's own shape and with AWS's error codes, which
// the SDK turns into the errors a CCM tests for. Calls are audited and
// faulted under the operations of the native API they stand for, so one
// fault makes every dialect lie alike.

// awsService is one AWS service's endpoint: its signing name, API version,
// XML namespace, error shape and actions.
type awsService struct {
	path       string
	signing    string
	version    string
	xmlns      string
	errorShape func(w http.ResponseWriter, status int, code, msg, requestID string)
	actions    map[string]awsAction
}

// awsAction answers one Action. It reads its parameters from q, which
// refuses any it was not told of (awsQuery.done), and writes its answer
// with awsAnswer.
type awsAction struct {
	// op is the native operation it stands for in faults and the audit log.
	op string
	h  awsHandler
}

// awsHandler answers one action's call: its parameters in q.
type awsHandler func(w http.ResponseWriter, r *http.Request, c *call, q *awsQuery)

// awsRequestTimeSkew is how far a signature's time may be from the
// server's, as AWS allows.
const awsRequestTimeSkew = 15 * time.Minute

// awsErr is an error answer: an HTTP status and an AWS error code.
type awsErr struct {
	status int
	code   string
	msg    string
}

func (e *awsErr) Error() string { return e.code + ": " + e.msg }

func awsError(status int, code, format string, args ...any) *awsErr {
	return &awsErr{status: status, code: code, msg: fmt.Sprintf(format, args...)}
}

// awsShape writes an error answer in one service's shape; it is the
// call's dialect, so that faults answer in it too.
type awsShape struct {
	svc *awsService
	// code maps an HTTP status (an injected fault's) to the service's code.
	code func(status int) string
}

func (d awsShape) write(w http.ResponseWriter, status int, msg string) {
	d.svc.errorShape(w, status, d.code(status), msg, awsRequestID())
}

// ec2ErrorXML is EC2's error body.
func ec2ErrorXML(w http.ResponseWriter, status int, code, msg, requestID string) {
	type ec2Error struct {
		Code    string
		Message string
	}
	body := struct {
		XMLName   xml.Name   `xml:"Response"`
		Errors    []ec2Error `xml:"Errors>Error"`
		RequestID string     `xml:"RequestID"`
	}{Errors: []ec2Error{{code, msg}}, RequestID: requestID}
	writeXML(w, status, body)
}

// elbErrorXML is Elastic Load Balancing's error body (v1 and v2 alike).
func elbErrorXML(w http.ResponseWriter, status int, code, msg, requestID string) {
	typ := "Sender"
	if status >= 500 {
		typ = "Receiver"
	}
	body := struct {
		XMLName xml.Name `xml:"ErrorResponse"`
		Error   struct {
			Type    string
			Code    string
			Message string
		}
		RequestID string `xml:"RequestId"`
	}{RequestID: requestID}
	body.Error.Type, body.Error.Code, body.Error.Message = typ, code, msg
	writeXML(w, status, body)
}

func writeXML(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "text/xml;charset=UTF-8")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, xml.Header)
	// The status is already sent; a failed write means the client left.
	_ = xml.NewEncoder(w).Encode(v)
}

func awsRequestID() string {
	b := make([]byte, 16)
	rand.Read(b) // never fails, per crypto/rand
	h := hex.EncodeToString(b)
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

// statusCode is the code AWS's services answer an HTTP status (an
// injected fault's) with.
func statusCode(throttled string) func(int) string {
	return func(status int) string {
		switch {
		case status == http.StatusTooManyRequests:
			return throttled
		case status == http.StatusServiceUnavailable:
			return "ServiceUnavailable"
		case status == http.StatusNotFound:
			return "NotFound"
		case status == http.StatusUnauthorized, status == http.StatusForbidden:
			return "UnauthorizedOperation"
		case status >= 500:
			return "InternalError"
		default:
			return "InvalidParameterValue"
		}
	}
}

func (s *Server) awsRoutes() {
	for _, svc := range []*awsService{s.ec2Service(), s.elbService(), s.elbv2Service()} {
		shape := awsShape{svc: svc, code: statusCode("RequestLimitExceeded")}
		if svc.signing != "ec2" {
			shape.code = statusCode("Throttling")
		}
		s.mux.HandleFunc(svc.path, func(w http.ResponseWriter, r *http.Request) {
			s.awsServe(w, r, svc, shape)
		})
	}
}

// awsServe checks the signature, finds the action and runs it.
func (s *Server) awsServe(w http.ResponseWriter, r *http.Request, svc *awsService, shape awsShape) {
	c := callOf(r)
	c.dialect = shape
	fail := func(e *awsErr) { svc.errorShape(w, e.status, e.code, e.msg, awsRequestID()) }
	r.Body = http.MaxBytesReader(w, r.Body, maxBodyBytes)
	body, err := io.ReadAll(r.Body)
	if err != nil {
		fail(awsError(http.StatusBadRequest, "InvalidRequest", "cannot read the request body: %v", err))
		return
	}
	if r.Method != http.MethodPost {
		fail(awsError(http.StatusBadRequest, "InvalidAction", "fakecloud answers the AWS query protocol as form POSTs only, not %s", r.Method))
		return
	}
	who, e := s.awsVerify(r, body, svc)
	if e != nil {
		fail(e)
		return
	}
	c.caller = who
	form, err := url.ParseQuery(string(body))
	if err != nil {
		fail(awsError(http.StatusBadRequest, "MalformedQueryString", "%v", err))
		return
	}
	action := form.Get("Action")
	c.action = action
	a, ok := svc.actions[action]
	if !ok {
		fail(awsError(http.StatusBadRequest, "InvalidAction", "The action %s is not valid for this web service (fakecloud emulates %s).", action, strings.Join(sortedKeys(svc.actions), ", ")))
		return
	}
	if v := form.Get("Version"); v != svc.version {
		fail(awsError(http.StatusBadRequest, "InvalidParameterValue", "Version %q is not %s's %s", v, svc.signing, svc.version))
		return
	}
	c.op = a.op
	q := &awsQuery{form: form, used: map[string]bool{"Action": true, "Version": true}}
	a.h(w, r, c, q)
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// awsAuthorization is the SigV4 Authorization header's parts.
var awsAuthorization = regexp.MustCompile(`^AWS4-HMAC-SHA256 Credential=([^/]+)/(\d{8})/([^/]+)/([^/]+)/aws4_request, ?SignedHeaders=([a-z0-9;-]+), ?Signature=([0-9a-f]{64})$`)

// awsVerify checks the request's SigV4 signature by signing it again, with
// the SDK's signer, as the holder of the access key would have, and says
// whose key it is: the signature must be made with the key's secret (the
// cloud token for the CCM's key, the inspector token for the inspector's)
// and be no older than AWS allows. The request signed again carries the
// headers the client signed and no other, as AWS takes the client's
// SignedHeaders: botocore (the AWS CLI) signs content-type, host and
// x-amz-date, the Go SDK content-length too.
func (s *Server) awsVerify(r *http.Request, body []byte, svc *awsService) (caller, *awsErr) {
	authFailure := func(format string, args ...any) (caller, *awsErr) {
		if svc.signing == "ec2" {
			return "", awsError(http.StatusUnauthorized, "AuthFailure", format, args...)
		}
		return "", awsError(http.StatusForbidden, "SignatureDoesNotMatch", format, args...)
	}
	m := awsAuthorization.FindStringSubmatch(r.Header.Get("Authorization"))
	if m == nil {
		if svc.signing == "ec2" {
			return "", awsError(http.StatusUnauthorized, "AuthFailure", "AWS was not able to validate the provided access credentials (no Signature Version 4 Authorization header)")
		}
		return "", awsError(http.StatusForbidden, "MissingAuthenticationToken", "Request is missing Authentication Token")
	}
	keyID, region, service, signedHeaders, signature := m[1], m[3], m[4], strings.Split(m[5], ";"), m[6]
	who, secret := callerCloud, s.cloudToken
	if keyID == api.AWSInspectorAccessKeyID && len(s.inspToken) > 0 {
		who, secret = callerInspector, s.inspToken
	} else if keyID != api.AWSAccessKeyID {
		if svc.signing == "ec2" {
			return "", awsError(http.StatusUnauthorized, "AuthFailure", "AWS was not able to validate the provided access credentials")
		}
		return "", awsError(http.StatusForbidden, "InvalidClientTokenId", "The security token included in the request is invalid.")
	}
	if service != svc.signing {
		return authFailure("Credential should be scoped to correct service: '%s'.", svc.signing)
	}
	if region != s.region {
		return authFailure("Credential should be scoped to a valid region, not '%s'.", region)
	}
	when, err := time.Parse("20060102T150405Z", r.Header.Get("X-Amz-Date"))
	if err != nil {
		return authFailure("the request has no valid X-Amz-Date header")
	}
	if d := time.Since(when); d > awsRequestTimeSkew || d < -awsRequestTimeSkew {
		return "", awsError(http.StatusBadRequest, "RequestExpired", "Request has expired. Timestamp date is %s", when.Format(time.RFC3339))
	}
	again, err := http.NewRequest(r.Method, "http://"+r.Host+r.URL.RequestURI(), bytes.NewReader(body))
	if err != nil {
		return authFailure("%v", err)
	}
	// The SDK's signer signs content-length whenever it is not zero.
	again.ContentLength = 0
	if slices.Contains(signedHeaders, "content-length") {
		again.ContentLength = int64(len(body))
	}
	for _, h := range signedHeaders {
		if h == "host" || h == "content-length" {
			continue
		}
		for _, v := range r.Header.Values(h) {
			again.Header.Add(h, v)
		}
	}
	sum := sha256.Sum256(body)
	creds := aws.Credentials{AccessKeyID: keyID, SecretAccessKey: string(secret)}
	if err := v4.NewSigner().SignHTTP(context.Background(), creds, again, hex.EncodeToString(sum[:]), service, region, when); err != nil {
		return authFailure("%v", err)
	}
	want := awsAuthorization.FindStringSubmatch(again.Header.Get("Authorization"))
	if want == nil || subtle.ConstantTimeCompare([]byte(want[6]), []byte(signature)) != 1 {
		if svc.signing == "ec2" {
			return authFailure("AWS was not able to validate the provided access credentials")
		}
		return authFailure("The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method.")
	}
	return who, nil
}

// awsQuery reads a request's query parameters, keeping track of those
// read: parameters no action reads are refused (done), as an ignored
// parameter would answer with more than the real service, silently.
type awsQuery struct {
	form url.Values
	used map[string]bool
}

func (q *awsQuery) get(name string) string {
	q.used[name] = true
	return q.form.Get(name)
}

// list reads a query list: prefix.1, prefix.2, ...
func (q *awsQuery) list(prefix string) []string {
	var out []string
	for i := 1; ; i++ {
		k := prefix + "." + strconv.Itoa(i)
		if !q.form.Has(k) {
			return out
		}
		out = append(out, q.get(k))
	}
}

// filters reads EC2's Filter.N.Name and Filter.N.Value.M.
func (q *awsQuery) filters() map[string][]string {
	out := map[string][]string{}
	for i := 1; ; i++ {
		k := "Filter." + strconv.Itoa(i)
		if !q.form.Has(k + ".Name") {
			return out
		}
		name := q.get(k + ".Name")
		out[name] = append(out[name], q.list(k+".Value")...)
	}
}

// done refuses the parameters no one read.
func (q *awsQuery) done() *awsErr {
	var unknown []string
	for k := range q.form {
		if !q.used[k] {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	slices.Sort(unknown)
	return awsError(http.StatusBadRequest, "InvalidParameterValue", "fakecloud does not emulate the parameters %s of %s", strings.Join(unknown, ", "), q.form.Get("Action"))
}

// answer writes an action's answer: EC2's shape (the body's fields in
// <ActionResponse> beside requestId) or Elastic Load Balancing's (the body
// in <ActionResult>, then ResponseMetadata). A nil body has no fields.
func (svc *awsService) answer(w http.ResponseWriter, action string, body any) {
	var inner bytes.Buffer
	if body != nil {
		// A body that does not encode is a bug in fakecloud, not the caller's.
		if err := xml.NewEncoder(&inner).EncodeElement(body, xml.StartElement{Name: xml.Name{Local: "x"}}); err != nil {
			svc.errorShape(w, http.StatusInternalServerError, "InternalError", err.Error(), awsRequestID())
			return
		}
	}
	fields := bytes.TrimSuffix(bytes.TrimPrefix(inner.Bytes(), []byte("<x>")), []byte("</x>"))
	w.Header().Set("Content-Type", "text/xml;charset=UTF-8")
	w.WriteHeader(http.StatusOK)
	id := awsRequestID()
	// action is one of svc.actions' names, which need no escaping.
	if svc.signing == "ec2" {
		fmt.Fprintf(w, "%s<%sResponse xmlns=%q><requestId>%s</requestId>%s</%sResponse>", xml.Header, action, svc.xmlns, id, fields, action)
		return
	}
	fmt.Fprintf(w, "%s<%sResponse xmlns=%q><%sResult>%s</%sResult><ResponseMetadata><RequestId>%s</RequestId></ResponseMetadata></%sResponse>",
		xml.Header, action, svc.xmlns, action, fields, action, id, action)
}
