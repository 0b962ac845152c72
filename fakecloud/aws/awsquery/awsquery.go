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

// Package awsquery is the AWS query protocol as fakecloud speaks it, for
// every AWS service it emulates (EC2, Elastic Load Balancing v1 and v2):
// form POSTs naming an Action and a Version, signed with Signature Version
// 4, answered in XML, errors included, in the service's own shape and with
// AWS's error codes, which the SDKs and the AWS CLI turn into the errors
// their callers test for. It knows nothing of fakecloud's state: the
// services' actions are its callers'.
package awsquery

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
)

// Service is one AWS service's endpoint as the protocol sees it: its
// path, signing name, API version, XML namespace and error shape.
type Service struct {
	Path       string
	Signing    string
	Version    string
	XMLNS      string
	ErrorShape func(w http.ResponseWriter, status int, code, msg, requestID string)
}

// RequestTimeSkew is how far a signature's time may be from the server's,
// as AWS allows.
const RequestTimeSkew = 15 * time.Minute

// Error is an error answer: an HTTP status and an AWS error code.
type Error struct {
	Status int
	Code   string
	Msg    string
}

func (e *Error) Error() string { return e.Code + ": " + e.Msg }

// Errorf is an Error with a message.
func Errorf(status int, code, format string, args ...any) *Error {
	return &Error{Status: status, Code: code, Msg: fmt.Sprintf(format, args...)}
}

// Fail writes e in the service's shape.
func (svc *Service) Fail(w http.ResponseWriter, e *Error) {
	svc.ErrorShape(w, e.Status, e.Code, e.Msg, RequestID())
}

// EC2ErrorXML is EC2's error body.
func EC2ErrorXML(w http.ResponseWriter, status int, code, msg, requestID string) {
	type ec2Error struct {
		Code    string
		Message string
	}
	body := struct {
		XMLName   xml.Name   `xml:"Response"`
		Errors    []ec2Error `xml:"Errors>Error"`
		RequestID string     `xml:"RequestID"`
	}{Errors: []ec2Error{{code, msg}}, RequestID: requestID}
	WriteXML(w, status, body)
}

// ELBErrorXML is Elastic Load Balancing's error body (v1 and v2 alike).
func ELBErrorXML(w http.ResponseWriter, status int, code, msg, requestID string) {
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
	WriteXML(w, status, body)
}

// WriteXML writes v as an XML document with status.
func WriteXML(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "text/xml;charset=UTF-8")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, xml.Header)
	// The status is already sent; a failed write means the client left.
	_ = xml.NewEncoder(w).Encode(v)
}

// RequestID is a new request ID, in AWS's form.
func RequestID() string {
	b := make([]byte, 16)
	rand.Read(b) // never fails, per crypto/rand
	h := hex.EncodeToString(b)
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

// StatusCode is the code AWS's services answer an HTTP status (an
// injected fault's) with; throttled is the service's for 429.
func StatusCode(throttled string) func(int) string {
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

// authorization is the SigV4 Authorization header's parts.
var authorization = regexp.MustCompile(`^AWS4-HMAC-SHA256 Credential=([^/]+)/(\d{8})/([^/]+)/([^/]+)/aws4_request, ?SignedHeaders=([a-z0-9;-]+), ?Signature=([0-9a-f]{64})$`)

// Verify checks the request's SigV4 signature by signing it again, with
// the SDK's signer, as the holder of the access key would have, and
// returns the access key's ID: the signature must be made with the key's
// secret (secretOf; false for a key it does not know), for this service
// and region, and be no older than AWS allows. The request signed again
// carries the headers the client signed and no other, as AWS takes the
// client's SignedHeaders: botocore (the AWS CLI) signs content-type, host
// and x-amz-date, the Go SDK content-length too.
func (svc *Service) Verify(r *http.Request, body []byte, region string, secretOf func(keyID string) ([]byte, bool)) (string, *Error) {
	authFailure := func(format string, args ...any) (string, *Error) {
		if svc.Signing == "ec2" {
			return "", Errorf(http.StatusUnauthorized, "AuthFailure", format, args...)
		}
		return "", Errorf(http.StatusForbidden, "SignatureDoesNotMatch", format, args...)
	}
	m := authorization.FindStringSubmatch(r.Header.Get("Authorization"))
	if m == nil {
		if svc.Signing == "ec2" {
			return "", Errorf(http.StatusUnauthorized, "AuthFailure", "AWS was not able to validate the provided access credentials (no Signature Version 4 Authorization header)")
		}
		return "", Errorf(http.StatusForbidden, "MissingAuthenticationToken", "Request is missing Authentication Token")
	}
	keyID, scope, service, signedHeaders, signature := m[1], m[3], m[4], strings.Split(m[5], ";"), m[6]
	secret, ok := secretOf(keyID)
	if !ok {
		if svc.Signing == "ec2" {
			return "", Errorf(http.StatusUnauthorized, "AuthFailure", "AWS was not able to validate the provided access credentials")
		}
		return "", Errorf(http.StatusForbidden, "InvalidClientTokenId", "The security token included in the request is invalid.")
	}
	if service != svc.Signing {
		return authFailure("Credential should be scoped to correct service: '%s'.", svc.Signing)
	}
	if scope != region {
		return authFailure("Credential should be scoped to a valid region, not '%s'.", scope)
	}
	when, err := time.Parse("20060102T150405Z", r.Header.Get("X-Amz-Date"))
	if err != nil {
		return authFailure("the request has no valid X-Amz-Date header")
	}
	if d := time.Since(when); d > RequestTimeSkew || d < -RequestTimeSkew {
		return "", Errorf(http.StatusBadRequest, "RequestExpired", "Request has expired. Timestamp date is %s", when.Format(time.RFC3339))
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
	want := authorization.FindStringSubmatch(again.Header.Get("Authorization"))
	if want == nil || subtle.ConstantTimeCompare([]byte(want[6]), []byte(signature)) != 1 {
		if svc.Signing == "ec2" {
			return authFailure("AWS was not able to validate the provided access credentials")
		}
		return authFailure("The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method.")
	}
	return keyID, nil
}

// Query reads a request's query parameters, keeping track of those read:
// parameters no action reads are refused (Done), as an ignored parameter
// would answer with more than the real service, silently.
type Query struct {
	form url.Values
	used map[string]bool
}

// NewQuery reads form, whose parameters named read are taken as read.
func NewQuery(form url.Values, read ...string) *Query {
	q := &Query{form: form, used: map[string]bool{}}
	for _, k := range read {
		q.used[k] = true
	}
	return q
}

// Has reports whether the parameter is given, without reading it.
func (q *Query) Has(name string) bool { return q.form.Has(name) }

// Get reads a parameter.
func (q *Query) Get(name string) string {
	q.used[name] = true
	return q.form.Get(name)
}

// List reads a query list: prefix.1, prefix.2, ...
func (q *Query) List(prefix string) []string {
	var out []string
	for i := 1; ; i++ {
		k := prefix + "." + strconv.Itoa(i)
		if !q.form.Has(k) {
			return out
		}
		out = append(out, q.Get(k))
	}
}

// Structs reads a list of structures: prefix.1.field, prefix.2.field, ...
// as long as any of the fields is given.
func (q *Query) Structs(prefix string, fields ...string) []map[string]string {
	var out []map[string]string
	for i := 1; ; i++ {
		k := prefix + "." + strconv.Itoa(i) + "."
		item := map[string]string{}
		for _, f := range fields {
			if q.form.Has(k + f) {
				item[f] = q.Get(k + f)
			}
		}
		if len(item) == 0 {
			return out
		}
		out = append(out, item)
	}
}

// Filters reads EC2's Filter.N.Name and Filter.N.Value.M.
func (q *Query) Filters() map[string][]string {
	out := map[string][]string{}
	for i := 1; ; i++ {
		k := "Filter." + strconv.Itoa(i)
		if !q.form.Has(k + ".Name") {
			return out
		}
		name := q.Get(k + ".Name")
		out[name] = append(out[name], q.List(k+".Value")...)
	}
}

// Done refuses the parameters no one read.
func (q *Query) Done() *Error {
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
	return Errorf(http.StatusBadRequest, "InvalidParameterValue", "fakecloud does not emulate the parameters %s of %s", strings.Join(unknown, ", "), q.form.Get("Action"))
}

// Answer writes an action's answer: EC2's shape (the body's fields in
// <ActionResponse> beside requestId) or Elastic Load Balancing's (the body
// in <ActionResult>, then ResponseMetadata). A nil body has no fields.
func (svc *Service) Answer(w http.ResponseWriter, action string, body any) {
	var inner bytes.Buffer
	if body != nil {
		// A body that does not encode is a bug in fakecloud, not the caller's.
		if err := xml.NewEncoder(&inner).EncodeElement(body, xml.StartElement{Name: xml.Name{Local: "x"}}); err != nil {
			svc.ErrorShape(w, http.StatusInternalServerError, "InternalError", err.Error(), RequestID())
			return
		}
	}
	fields := bytes.TrimSuffix(bytes.TrimPrefix(inner.Bytes(), []byte("<x>")), []byte("</x>"))
	w.Header().Set("Content-Type", "text/xml;charset=UTF-8")
	w.WriteHeader(http.StatusOK)
	id := RequestID()
	// action is one of the service's actions' names, which need no escaping.
	if svc.Signing == "ec2" {
		fmt.Fprintf(w, "%s<%sResponse xmlns=%q><requestId>%s</requestId>%s</%sResponse>", xml.Header, action, svc.XMLNS, id, fields, action)
		return
	}
	fmt.Fprintf(w, "%s<%sResponse xmlns=%q><%sResult>%s</%sResult><ResponseMetadata><RequestId>%s</RequestId></ResponseMetadata></%sResponse>",
		xml.Header, action, svc.XMLNS, action, fields, action, id, action)
}

// Hash is a stable hex string made of parts, for ids derived from
// fakecloud's own (network interfaces, attachments).
func Hash(n int, parts ...string) string {
	h := sha256.Sum256([]byte(strings.Join(parts, "/")))
	return fmt.Sprintf("%x", h[:])[:n]
}
