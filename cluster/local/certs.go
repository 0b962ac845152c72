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

package local

import (
	"net"
	"os"
	"path/filepath"

	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"sigs.k8s.io/ccm-harness/cluster/audit"
	"sigs.k8s.io/ccm-harness/internal/pki"
)

type keyPair struct{ cert, key string }

// certs are the files of a cluster's PKI.
type certs struct {
	ca     *pki.CA
	caFile string
	caKey  string

	etcd, apiserverEtcd, apiserver keyPair
	kcmServing, ccmServing         keyPair
	// Client identities: RBAC sees one user per component.
	admin, kcm, ccm, kwok keyPair
	// frontProxy is how kube-apiserver authenticates to aggregated servers;
	// the managers' delegated authentication expects its CA published. Its
	// CA is its own, as kubeadm's: with the client CA in its place, every
	// client certificate would verify as a would-be front proxy too, on
	// every request, before failing on the allowed names.
	frontProxy       keyPair
	frontProxyCAFile string

	saKey, saPub string
}

// CCMUser is the user the CCM authenticates as; the runtime grants it the
// cloud-controller-manager role.
const CCMUser = audit.CCMUser

func newCerts(dir string) (*certs, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	ca, err := pki.NewCA("ccm-harness-ca")
	if err != nil {
		return nil, err
	}
	c := &certs{ca: ca, caFile: filepath.Join(dir, "ca.crt")}
	if err := os.WriteFile(c.caFile, ca.CertPEM, 0o644); err != nil {
		return nil, err
	}
	loopback := []net.IP{net.ParseIP("127.0.0.1")}
	serving := pki.Request{DNSNames: []string{"localhost"}, IPs: loopback}
	issue := []struct {
		out  *keyPair
		name string
		req  pki.Request
	}{
		{&c.etcd, "etcd", pki.Request{CommonName: "etcd", DNSNames: serving.DNSNames, IPs: loopback}},
		{&c.apiserverEtcd, "apiserver-etcd-client", pki.Request{CommonName: "kube-apiserver-etcd-client"}},
		{&c.apiserver, "apiserver", pki.Request{
			CommonName: "kube-apiserver",
			DNSNames:   []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"},
			IPs:        append(loopback, net.ParseIP("10.96.0.1")),
		}},
		{&c.kcmServing, "kube-controller-manager-serving", pki.Request{CommonName: "kube-controller-manager", DNSNames: serving.DNSNames, IPs: loopback}},
		{&c.ccmServing, "cloud-controller-manager-serving", pki.Request{CommonName: "cloud-controller-manager", DNSNames: serving.DNSNames, IPs: loopback}},
		{&c.admin, "admin", pki.Request{CommonName: "ccm-harness-admin", Organization: []string{"system:masters"}}},
		{&c.kcm, "kube-controller-manager", pki.Request{CommonName: "system:kube-controller-manager"}},
		{&c.ccm, "cloud-controller-manager", pki.Request{CommonName: CCMUser}},
		// kwok stands in for every node's kubelet (and, in a real
		// cluster, the Node authorizer would give each its own scope).
		{&c.kwok, "kwok", pki.Request{CommonName: "ccm-harness-kwok", Organization: []string{"system:masters"}}},
	}
	for _, i := range issue {
		kp, err := ca.Issue(i.req)
		if err != nil {
			return nil, err
		}
		if i.out.cert, i.out.key, err = kp.Write(dir, i.name); err != nil {
			return nil, err
		}
	}
	frontProxyCA, err := pki.NewCA("ccm-harness-front-proxy-ca")
	if err != nil {
		return nil, err
	}
	c.frontProxyCAFile = filepath.Join(dir, "front-proxy-ca.crt")
	if err := os.WriteFile(c.frontProxyCAFile, frontProxyCA.CertPEM, 0o644); err != nil {
		return nil, err
	}
	kp, err := frontProxyCA.Issue(pki.Request{CommonName: "front-proxy-client"})
	if err != nil {
		return nil, err
	}
	if c.frontProxy.cert, c.frontProxy.key, err = kp.Write(dir, "front-proxy-client"); err != nil {
		return nil, err
	}
	// The CA key signs CSRs in kube-controller-manager.
	caKP, err := ca.KeyPEM()
	if err != nil {
		return nil, err
	}
	c.caKey = filepath.Join(dir, "ca.key")
	if err := os.WriteFile(c.caKey, caKP, 0o600); err != nil {
		return nil, err
	}
	if c.saKey, c.saPub, err = pki.ServiceAccountKeys(dir); err != nil {
		return nil, err
	}
	return c, nil
}

func clientcmdConfig(name, server, caFile string, identity keyPair) *clientcmdapi.Config {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[name] = &clientcmdapi.Cluster{Server: server, CertificateAuthority: caFile}
	cfg.AuthInfos[name] = &clientcmdapi.AuthInfo{ClientCertificate: identity.cert, ClientKey: identity.key}
	cfg.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name}
	cfg.CurrentContext = name
	return cfg
}
