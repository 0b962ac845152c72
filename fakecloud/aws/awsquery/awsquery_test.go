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
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

var ec2 = &Service{Path: "/ec2/", Signing: "ec2", Version: "2016-11-15", XMLNS: "x", ErrorShape: EC2ErrorXML}

// signed is a form POST signed as the Go SDK signs one, with secret, for
// service and region, at when.
func signed(t *testing.T, body, keyID, secret, service, region string, when time.Time) *http.Request {
	t.Helper()
	r := httptest.NewRequest(http.MethodPost, "http://fakecloud.test/ec2/", strings.NewReader(body))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded; charset=utf-8")
	sum := sha256.Sum256([]byte(body))
	if err := v4.NewSigner().SignHTTP(context.Background(), aws.Credentials{AccessKeyID: keyID, SecretAccessKey: secret}, r, hex.EncodeToString(sum[:]), service, region, when); err != nil {
		t.Fatal(err)
	}
	return r
}

func TestVerify(t *testing.T) {
	body := "Action=DescribeInstances&Version=2016-11-15"
	secrets := func(keyID string) ([]byte, bool) { return []byte("s3cret"), keyID == "AKID" }
	now := time.Now().UTC()
	if id, e := ec2.Verify(signed(t, body, "AKID", "s3cret", "ec2", "r1", now), []byte(body), "r1", secrets); e != nil || id != "AKID" {
		t.Fatalf("a well signed request: %q, %v", id, e)
	}
	for _, tt := range []struct {
		name string
		r    *http.Request
		code string
	}{
		{"wrong secret", signed(t, body, "AKID", "other", "ec2", "r1", now), "AuthFailure"},
		{"unknown key", signed(t, body, "NOPE", "s3cret", "ec2", "r1", now), "AuthFailure"},
		{"another region", signed(t, body, "AKID", "s3cret", "ec2", "r2", now), "AuthFailure"},
		{"another service", signed(t, body, "AKID", "s3cret", "elasticloadbalancing", "r1", now), "AuthFailure"},
		{"too old", signed(t, body, "AKID", "s3cret", "ec2", "r1", now.Add(-RequestTimeSkew-time.Minute)), "RequestExpired"},
		{"unsigned", httptest.NewRequest(http.MethodPost, "http://fakecloud.test/ec2/", strings.NewReader(body)), "AuthFailure"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if _, e := ec2.Verify(tt.r, []byte(body), "r1", secrets); e == nil || e.Code != tt.code {
				t.Errorf("Verify = %v, want code %s", e, tt.code)
			}
		})
	}
	// A body changed after signing does not verify.
	r := signed(t, body, "AKID", "s3cret", "ec2", "r1", now)
	if _, e := ec2.Verify(r, []byte(body+"&DryRun=true"), "r1", secrets); e == nil {
		t.Errorf("a body changed after signing verified")
	}
}

func TestQuery(t *testing.T) {
	form, _ := url.ParseQuery("Action=A&Version=V&InstanceId.1=i-1&InstanceId.2=i-2&Filter.1.Name=zone&Filter.1.Value.1=a&Tag.1.Key=k&Tag.1.Value=v&Extra=x")
	q := NewQuery(form, "Action", "Version")
	if got := q.List("InstanceId"); strings.Join(got, ",") != "i-1,i-2" {
		t.Errorf("List = %v", got)
	}
	if got := q.Filters(); strings.Join(got["zone"], ",") != "a" {
		t.Errorf("Filters = %v", got)
	}
	if got := q.Structs("Tag", "Key", "Value"); len(got) != 1 || got[0]["Key"] != "k" || got[0]["Value"] != "v" {
		t.Errorf("Structs = %v", got)
	}
	if e := q.Done(); e == nil || !strings.Contains(e.Msg, "Extra") || e.Code != "InvalidParameterValue" {
		t.Errorf("Done = %v, want the unread parameter Extra refused", e)
	}
	_ = q.Get("Extra")
	if e := q.Done(); e != nil {
		t.Errorf("Done after reading every parameter = %v", e)
	}
}

func TestAnswerShapes(t *testing.T) {
	w := httptest.NewRecorder()
	ec2.Answer(w, "DescribeInstances", struct{ ReservationSet string }{"r"})
	if b := w.Body.String(); !strings.Contains(b, `<DescribeInstancesResponse xmlns="x"><requestId>`) || !strings.Contains(b, "<ReservationSet>r</ReservationSet>") {
		t.Errorf("EC2 answer: %s", b)
	}
	elb := &Service{Signing: "elasticloadbalancing", XMLNS: "y", ErrorShape: ELBErrorXML}
	w = httptest.NewRecorder()
	elb.Answer(w, "DescribeLoadBalancers", nil)
	if b := w.Body.String(); !strings.Contains(b, "<DescribeLoadBalancersResult></DescribeLoadBalancersResult><ResponseMetadata><RequestId>") {
		t.Errorf("ELB answer: %s", b)
	}
	w = httptest.NewRecorder()
	elb.Fail(w, Errorf(http.StatusServiceUnavailable, "ServiceUnavailable", "down"))
	if b := w.Body.String(); w.Code != 503 || !strings.Contains(b, "<Type>Receiver</Type><Code>ServiceUnavailable</Code><Message>down</Message>") {
		t.Errorf("ELB error: %d %s", w.Code, b)
	}
}
