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

package pki

import (
	"context"
	"crypto/ecdsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func newCA(t *testing.T, cn string) *CA {
	t.Helper()
	ca, err := NewCA(cn)
	if err != nil {
		t.Fatal(err)
	}
	return ca
}

func issue(t *testing.T, ca *CA, req Request) KeyPair {
	t.Helper()
	kp, err := ca.Issue(req)
	if err != nil {
		t.Fatal(err)
	}
	return kp
}

func parseCert(t *testing.T, certPEM []byte) *x509.Certificate {
	t.Helper()
	block, rest := pem.Decode(certPEM)
	if block == nil || block.Type != "CERTIFICATE" || len(strings.TrimSpace(string(rest))) != 0 {
		t.Fatalf("not a single PEM certificate:\n%s", certPEM)
	}
	c, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func parseECKey(t *testing.T, keyPEM []byte) *ecdsa.PrivateKey {
	t.Helper()
	block, _ := pem.Decode(keyPEM)
	if block == nil || block.Type != "EC PRIVATE KEY" {
		t.Fatalf("not a PEM EC private key:\n%s", keyPEM)
	}
	k, err := x509.ParseECPrivateKey(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func pool(ca *CA) *x509.CertPool {
	p := x509.NewCertPool()
	p.AppendCertsFromPEM(ca.CertPEM)
	return p
}

var (
	serving = Request{
		CommonName: "kube-apiserver",
		DNSNames:   []string{"localhost", "kubernetes.default.svc"},
		IPs:        []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("::1")},
	}
	client = Request{CommonName: "system:kube-controller-manager", Organization: []string{"system:masters", "ccm-harness"}}
)

func TestIssuedCertificatesChainToCA(t *testing.T) {
	ca := newCA(t, "test-ca")
	other := newCA(t, "other-ca")
	caCert := parseCert(t, ca.CertPEM)
	if !caCert.IsCA || caCert.Subject.CommonName != "test-ca" || caCert.KeyUsage&x509.KeyUsageCertSign == 0 {
		t.Fatalf("CA certificate: IsCA=%t CN=%q usage=%v; want a CA called test-ca that signs certificates", caCert.IsCA, caCert.Subject.CommonName, caCert.KeyUsage)
	}

	tests := []struct {
		name    string
		signer  *CA
		req     Request
		wantErr bool
	}{
		{name: "serving", signer: ca, req: serving},
		{name: "client", signer: ca, req: client},
		// Without this the checks below could pass for a Verify that
		// accepts anything.
		{name: "other CA", signer: other, req: client, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cert := parseCert(t, issue(t, tt.signer, tt.req).CertPEM)
			// etcd uses one certificate as both server and client, so each
			// usage must verify on its own.
			for _, usage := range []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth} {
				_, err := cert.Verify(x509.VerifyOptions{Roots: pool(ca), KeyUsages: []x509.ExtKeyUsage{usage}})
				if (err != nil) != tt.wantErr {
					t.Errorf("Verify for usage %v: err = %v, want error %t", usage, err, tt.wantErr)
				}
			}
			if remaining := time.Until(cert.NotAfter); remaining < 24*time.Hour {
				t.Errorf("certificate expires in %s, too soon for a long test run", remaining)
			}
			if time.Now().Before(cert.NotBefore) {
				t.Errorf("certificate is not valid yet (NotBefore %s)", cert.NotBefore)
			}
		})
	}
}

func TestServingCertificateNames(t *testing.T) {
	ca := newCA(t, "test-ca")
	cert := parseCert(t, issue(t, ca, serving).CertPEM)
	if !slices.Equal(cert.DNSNames, serving.DNSNames) {
		t.Errorf("DNS names %v, want %v", cert.DNSNames, serving.DNSNames)
	}
	if !slices.EqualFunc(cert.IPAddresses, serving.IPs, net.IP.Equal) {
		t.Errorf("IPs %v, want %v", cert.IPAddresses, serving.IPs)
	}
	for _, host := range []string{"localhost", "kubernetes.default.svc", "127.0.0.1", "::1"} {
		if _, err := cert.Verify(x509.VerifyOptions{Roots: pool(ca), DNSName: host}); err != nil {
			t.Errorf("certificate does not serve %s: %v", host, err)
		}
	}
	if _, err := cert.Verify(x509.VerifyOptions{Roots: pool(ca), DNSName: "example.com"}); err == nil {
		t.Error("certificate serves example.com, a name it was not issued for")
	}
}

func TestClientCertificateIdentity(t *testing.T) {
	ca := newCA(t, "test-ca")
	cert := parseCert(t, issue(t, ca, client).CertPEM)
	// RBAC takes the user from CN and the groups from O.
	if cert.Subject.CommonName != client.CommonName {
		t.Errorf("CN %q, want %q", cert.Subject.CommonName, client.CommonName)
	}
	// DER sorts the members of a SET OF, and RBAC groups are a set anyway.
	if !slices.Equal(slices.Sorted(slices.Values(cert.Subject.Organization)), slices.Sorted(slices.Values(client.Organization))) {
		t.Errorf("O %v, want %v", cert.Subject.Organization, client.Organization)
	}
	if len(cert.DNSNames) != 0 || len(cert.IPAddresses) != 0 {
		t.Errorf("client certificate carries names %v %v it was not asked for", cert.DNSNames, cert.IPAddresses)
	}
}

func TestIssuedKeyMatchesCertificate(t *testing.T) {
	ca := newCA(t, "test-ca")
	kp := issue(t, ca, client)
	if _, err := tls.X509KeyPair(kp.CertPEM, kp.KeyPEM); err != nil {
		t.Fatalf("issued key does not match its certificate: %v", err)
	}
	if a, b := issue(t, ca, client), issue(t, ca, client); parseCert(t, a.CertPEM).SerialNumber.Cmp(parseCert(t, b.CertPEM).SerialNumber) == 0 {
		t.Fatal("two certificates from one CA share a serial number")
	}
}

func TestCAKeyPEM(t *testing.T) {
	ca := newCA(t, "test-ca")
	keyPEM, err := ca.KeyPEM()
	if err != nil {
		t.Fatal(err)
	}
	key := parseECKey(t, keyPEM)
	// kube-controller-manager signs with this key and the cluster trusts
	// the CA certificate, so they must be one pair.
	if _, err := tls.X509KeyPair(ca.CertPEM, keyPEM); err != nil {
		t.Fatalf("CA key does not match the CA certificate: %v", err)
	}
	if !key.PublicKey.Equal(parseCert(t, ca.CertPEM).PublicKey) {
		t.Fatal("CA key's public half is not the CA certificate's")
	}
}

func TestKeyPairWrite(t *testing.T) {
	dir := t.TempDir()
	kp := issue(t, newCA(t, "test-ca"), serving)
	certPath, keyPath, err := kp.Write(dir, "apiserver")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []struct {
		path, want string
		content    []byte
	}{
		{certPath, filepath.Join(dir, "apiserver.crt"), kp.CertPEM},
		{keyPath, filepath.Join(dir, "apiserver.key"), kp.KeyPEM},
	} {
		if f.path != f.want {
			t.Errorf("path %s, want %s", f.path, f.want)
		}
		got, err := os.ReadFile(f.path)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(f.content) {
			t.Errorf("%s does not hold what was written", f.path)
		}
	}
	if st, err := os.Stat(keyPath); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("private key mode: %v %v, want 0600", st.Mode().Perm(), err)
	}
	if _, err := tls.LoadX509KeyPair(certPath, keyPath); err != nil {
		t.Fatalf("written pair does not load: %v", err)
	}
}

func TestServiceAccountKeys(t *testing.T) {
	dir := t.TempDir()
	privPath, pubPath, err := ServiceAccountKeys(dir)
	if err != nil {
		t.Fatal(err)
	}
	if privPath != filepath.Join(dir, "sa.key") || pubPath != filepath.Join(dir, "sa.pub") {
		t.Fatalf("paths %s %s, want sa.key and sa.pub in %s", privPath, pubPath, dir)
	}
	st, err := os.Stat(privPath)
	if err != nil {
		t.Fatal(err)
	}
	// The key signs every service account token of the cluster.
	if st.Mode().Perm() != 0o600 {
		t.Errorf("private key mode %v, want 0600", st.Mode().Perm())
	}
	privPEM, err := os.ReadFile(privPath)
	if err != nil {
		t.Fatal(err)
	}
	priv := parseECKey(t, privPEM)
	pubPEM, err := os.ReadFile(pubPath)
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(pubPEM)
	if block == nil || block.Type != "PUBLIC KEY" {
		t.Fatalf("%s is not a PEM public key:\n%s", pubPath, pubPEM)
	}
	pub, err := x509.ParsePKIXPublicKey(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	if !priv.PublicKey.Equal(pub) {
		t.Fatal("sa.pub is not the public half of sa.key: tokens would not verify")
	}
}

// handshake runs a mutual-TLS exchange over loopback TCP (not net.Pipe: with
// TLS 1.3 the server rejects a client certificate after the client's
// handshake returned, and its alert must not block on an unread pipe).
// It returns the server's and the client's errors.
func handshake(t *testing.T, serverCA, clientCA *CA, serverPair, clientPair KeyPair, serverName string) (serverErr, clientErr error) {
	t.Helper()
	srvCert, err := tls.X509KeyPair(serverPair.CertPEM, serverPair.KeyPEM)
	if err != nil {
		t.Fatal(err)
	}
	cliCert, err := tls.X509KeyPair(clientPair.CertPEM, clientPair.KeyPEM)
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	done := make(chan error, 1)
	go func() {
		conn, err := l.Accept()
		if err != nil {
			done <- err
			return
		}
		defer conn.Close()
		srv := tls.Server(conn, &tls.Config{
			Certificates: []tls.Certificate{srvCert},
			ClientCAs:    pool(clientCA),
			ClientAuth:   tls.RequireAndVerifyClientCert,
			MinVersion:   tls.VersionTLS12,
		})
		if err := srv.HandshakeContext(ctx); err != nil {
			done <- err
			return
		}
		_, err = srv.Write([]byte("ok"))
		done <- err
	}()

	conn, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	cli := tls.Client(conn, &tls.Config{
		Certificates: []tls.Certificate{cliCert},
		RootCAs:      pool(serverCA),
		ServerName:   serverName,
		MinVersion:   tls.VersionTLS12,
	})
	clientErr = cli.HandshakeContext(ctx)
	if clientErr == nil {
		// Only a read sees the server's verdict on the client certificate.
		buf := make([]byte, 2)
		if _, err := io.ReadFull(cli, buf); err != nil {
			clientErr = err
		} else if string(buf) != "ok" {
			clientErr = io.ErrUnexpectedEOF
		}
	}
	return <-done, clientErr
}

func TestMutualTLS(t *testing.T) {
	ca := newCA(t, "test-ca")
	other := newCA(t, "other-ca")
	srv := issue(t, ca, serving)
	cli := issue(t, ca, client)
	foreignSrv := issue(t, other, serving)
	foreignCli := issue(t, other, client)

	tests := []struct {
		name       string
		server     KeyPair
		client     KeyPair
		serverName string
		// rejectedBy is "" for a handshake that must succeed, else the
		// side that must refuse it.
		rejectedBy string
	}{
		{name: "same CA", server: srv, client: cli, serverName: "localhost"},
		{name: "same CA by IP", server: srv, client: cli, serverName: "127.0.0.1"},
		{name: "client cert from another CA", server: srv, client: foreignCli, serverName: "localhost", rejectedBy: "server"},
		{name: "server cert from another CA", server: foreignSrv, client: cli, serverName: "localhost", rejectedBy: "client"},
		{name: "name not in serving cert", server: srv, client: cli, serverName: "etcd.example", rejectedBy: "client"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			serverErr, clientErr := handshake(t, ca, ca, tt.server, tt.client, tt.serverName)
			switch tt.rejectedBy {
			case "":
				if serverErr != nil || clientErr != nil {
					t.Fatalf("handshake failed: server: %v; client: %v", serverErr, clientErr)
				}
			case "server":
				if serverErr == nil {
					t.Fatalf("server accepted the client certificate (client: %v)", clientErr)
				}
				if !strings.Contains(serverErr.Error(), "certificate") {
					t.Errorf("server failed for another reason: %v", serverErr)
				}
			case "client":
				if clientErr == nil {
					t.Fatalf("client accepted the server certificate (server: %v)", serverErr)
				}
				if !strings.Contains(clientErr.Error(), "certificate") {
					t.Errorf("client failed for another reason: %v", clientErr)
				}
			}
		})
	}
}
