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

package serviceaccount

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

func TestProjectRefreshesBeforeExpiry(t *testing.T) {
	client := fake.NewClientset()
	var issued atomic.Int32
	// Tokens of two seconds' life: refreshed at 1.6 s.
	client.PrependReactor("create", "serviceaccounts", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if a.GetSubresource() != "token" {
			return false, nil, nil
		}
		n := issued.Add(1)
		return true, &authenticationv1.TokenRequest{Status: authenticationv1.TokenRequestStatus{
			Token: "token-" + strconv.Itoa(int(n)), ExpirationTimestamp: metav1.NewTime(time.Now().Add(2 * time.Second)),
		}}, nil
	})
	dir := t.TempDir()
	p, err := Project(context.Background(), client, "kube-system", "ccm", []byte("CA"), dir, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop()
	read := func(n string) string { b, _ := os.ReadFile(filepath.Join(dir, n)); return string(b) }
	if read("token") != "token-1" || read("ca.crt") != "CA" || read("namespace") != "kube-system" {
		t.Fatalf("folder: token %q ca %q namespace %q", read("token"), read("ca.crt"), read("namespace"))
	}
	if _, err := client.CoreV1().ServiceAccounts("kube-system").Get(context.Background(), "ccm", metav1.GetOptions{}); err != nil {
		t.Errorf("the service account was not made: %v", err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for read("token") == "token-1" && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	if got := read("token"); got == "token-1" {
		t.Errorf("token not refreshed before it expired: %q", got)
	}
}
