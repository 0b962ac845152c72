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

// Package serviceaccount gives a process run outside the cluster what a
// kubelet gives a pod of a ServiceAccount: a projected folder holding a
// bound token from the TokenRequest API, the cluster's CA and the
// namespace, the token refreshed before it expires. A CCM that builds
// its clients with rest.InClusterConfig reads exactly these files.
package serviceaccount

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// MountPath is where a pod's containers find the folder.
const MountPath = "/var/run/secrets/kubernetes.io/serviceaccount"

// TokenSeconds is the life a kubelet asks of a projected token (an hour
// and seven seconds); it refreshes at 80 % of it.
const TokenSeconds = 3607

// Projection is a folder kept up to date for one ServiceAccount.
type Projection struct {
	// Dir is the folder to mount at MountPath.
	Dir string

	client          kubernetes.Interface
	namespace, name string
	logf            func(string, ...any)
	now             func() time.Time

	stop chan struct{}
	done chan struct{}
	once sync.Once
}

// Project makes the ServiceAccount if it does not exist, writes its
// folder at dir and keeps the token fresh until Stop.
func Project(ctx context.Context, client kubernetes.Interface, namespace, name string, caPEM []byte, dir string, logf func(string, ...any)) (*Projection, error) {
	sas := client.CoreV1().ServiceAccounts(namespace)
	if _, err := sas.Get(ctx, name, metav1.GetOptions{}); apierrors.IsNotFound(err) {
		if _, err := sas.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return nil, fmt.Errorf("service account %s/%s: %w", namespace, name, err)
		}
	} else if err != nil {
		return nil, fmt.Errorf("service account %s/%s: %w", namespace, name, err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	p := &Projection{Dir: dir, client: client, namespace: namespace, name: name, logf: logf, now: time.Now, stop: make(chan struct{}), done: make(chan struct{})}
	if err := p.write("ca.crt", caPEM); err != nil {
		return nil, err
	}
	if err := p.write("namespace", []byte(namespace)); err != nil {
		return nil, err
	}
	expiry, err := p.token(ctx)
	if err != nil {
		return nil, err
	}
	go p.run(expiry)
	return p, nil
}

// token asks for a new token, writes it and returns when it expires.
func (p *Projection) token(ctx context.Context) (time.Time, error) {
	seconds := int64(TokenSeconds)
	tr, err := p.client.CoreV1().ServiceAccounts(p.namespace).CreateToken(ctx, p.name, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &seconds},
	}, metav1.CreateOptions{})
	if err != nil {
		return time.Time{}, fmt.Errorf("token for service account %s/%s: %w", p.namespace, p.name, err)
	}
	if tr.Status.Token == "" {
		return time.Time{}, fmt.Errorf("token for service account %s/%s: the API returned an empty token", p.namespace, p.name)
	}
	return tr.Status.ExpirationTimestamp.Time, p.write("token", []byte(tr.Status.Token))
}

// refreshAt is when a token issued at issued and expiring at expiry is
// replaced: at 80 % of its life, as a kubelet does.
func refreshAt(issued, expiry time.Time) time.Time {
	return issued.Add(expiry.Sub(issued) * 8 / 10)
}

func (p *Projection) run(expiry time.Time) {
	defer close(p.done)
	issued := p.now()
	for {
		wait := refreshAt(issued, expiry).Sub(p.now())
		if wait < time.Second {
			wait = time.Second
		}
		select {
		case <-p.stop:
			return
		case <-time.After(wait):
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		next, err := p.token(ctx)
		cancel()
		if err != nil {
			// The old token holds until it expires; try again soon.
			p.logf("refreshing the projected token: %v", err)
			issued, expiry = p.now(), p.now().Add(12*time.Second)
			continue
		}
		issued, expiry = p.now(), next
	}
}

// write replaces a file whole, so a reader never sees half a token.
func (p *Projection) write(name string, data []byte) error {
	tmp := filepath.Join(p.Dir, "."+name+".tmp")
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(p.Dir, name))
}

// Stop ends the refreshing.
func (p *Projection) Stop() {
	p.once.Do(func() { close(p.stop) })
	<-p.done
}
