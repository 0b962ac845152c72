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

// Command vcsim serves govmomi's vCenter simulator, with its tagging REST
// API (vapi), over HTTPS with credentials, for the vSphere provider. The
// inventory is a bare datacenter DC0 with one cluster per zone and a
// datastore; the harness shapes the rest (VMs, tag categories, tags) over
// the vSphere API, as an administrator would.
//
// It serves the same inventory on two ports: --listen for the CCM, where
// --rename-tag faults make the tagging API lie, and --admin-listen for the
// harness's inspector, which always tells the truth (like fakecloud's cloud
// and admin APIs).
package main

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/vmware/govmomi/simulator"
	_ "github.com/vmware/govmomi/vapi/simulator" // registers the tagging REST API
	"github.com/vmware/govmomi/vim25/types"
)

// renames maps a tag's true name to the one the CCM's endpoint reports;
// a flag.Value for repeated --rename-tag FROM=TO.
type renames map[string]string

func (r renames) String() string { return fmt.Sprint(map[string]string(r)) }

func (r renames) Set(v string) error {
	from, to, ok := strings.Cut(v, "=")
	if !ok || from == "" || to == "" {
		return fmt.Errorf("want FROM=TO, got %q", v)
	}
	r[from] = to
	return nil
}

type options struct {
	listen, adminListen string
	certFile, keyFile   string
	credentialsFile     string
	adminCredentials    string
	clusters, hosts     int
	rename              renames
}

func main() {
	o := options{rename: renames{}}
	flag.StringVar(&o.listen, "listen", "127.0.0.1:0", "address of the CCM's endpoint")
	flag.StringVar(&o.adminListen, "admin-listen", "127.0.0.1:0", "address of the harness's endpoint, which no fault touches")
	flag.StringVar(&o.certFile, "tls-cert", "", "serving certificate (PEM)")
	flag.StringVar(&o.keyFile, "tls-key", "", "serving key (PEM)")
	flag.StringVar(&o.credentialsFile, "credentials-file", "", "file holding the CCM's user name and password, one a line")
	flag.StringVar(&o.adminCredentials, "admin-credentials-file", "", "file holding the harness's user name and password, the only ones --admin-listen takes")
	flag.IntVar(&o.clusters, "clusters", 1, "clusters in DC0 (DC0_C0, DC0_C1, ...)")
	flag.IntVar(&o.hosts, "cluster-hosts", 2, "hosts per cluster")
	flag.Var(o.rename, "rename-tag", "FROM=TO: on the CCM's endpoint, the tag called FROM reads as TO (repeatable)")
	flag.Parse()
	log.SetFlags(log.LstdFlags | log.Lmicroseconds)
	if err := run(o); err != nil {
		log.Fatalf("vcsim: %v", err)
	}
}

func run(o options) error {
	cert, err := tls.LoadX509KeyPair(o.certFile, o.keyFile)
	if err != nil {
		return fmt.Errorf("--tls-cert/--tls-key: %w", err)
	}
	user, err := readCredentials("--credentials-file", o.credentialsFile)
	if err != nil {
		return err
	}
	adminUser, err := readCredentials("--admin-credentials-file", o.adminCredentials)
	if err != nil {
		return err
	}
	if adminUser.Username() == user.Username() {
		return fmt.Errorf("--admin-credentials-file names the CCM's user %s: the admin endpoint needs a user of its own", user.Username())
	}
	model := simulator.VPX()
	model.Host = 0 // no standalone hosts: every host belongs to a zone's cluster
	model.Cluster = o.clusters
	model.ClusterHost = o.hosts
	model.Machine = 0 // the harness makes one VM per node
	model.Portgroup = 0
	if err := model.Create(); err != nil {
		return fmt.Errorf("create the inventory: %w", err)
	}
	// The datastore's files live in a temporary folder.
	defer model.Remove()
	model.Map().SessionManager().ValidLogin = func(l *types.Login) bool {
		for _, u := range []*url.Userinfo{user, adminUser} {
			if p, _ := u.Password(); l.UserName == u.Username() && l.Password == p {
				return true
			}
		}
		return false
	}
	// A user in the URL makes the simulator ask ValidLogin; without
	// one it takes any.
	model.Service.Listen = &url.URL{Host: "127.0.0.1:0", User: user}
	model.Service.TLS = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	model.Service.RegisterEndpoints = true // the tagging API
	sim := model.Service.NewServer()
	// Its own listener takes any user: closed, and its handler served at
	// the two endpoints below, each to one user.
	_ = sim.Listener.Close()

	serve := func(flagName, addr string, h http.Handler) (net.Addr, error) {
		l, err := net.Listen("tcp", addr)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", flagName, err)
		}
		srv := &http.Server{Handler: h, ErrorLog: log.Default()}
		go func() { _ = srv.Serve(tls.NewListener(l, sim.TLS)) }()
		return l.Addr(), nil
	}
	ccmAddr, err := serve("--listen", o.listen, newEndpoint("CCM's", user.Username(), renameTags(sim.Config.Handler, o.rename)))
	if err != nil {
		return err
	}
	adminAddr, err := serve("--admin-listen", o.adminListen, newEndpoint("admin", adminUser.Username(), sim.Config.Handler))
	if err != nil {
		return err
	}
	log.Printf("serving the CCM (%s) at https://%s/sdk (tag renames: %v) and the harness (%s) at https://%s/sdk", user.Username(), ccmAddr, o.rename, adminUser.Username(), adminAddr)
	// Stop at once when asked: vcsim keeps nothing worth a graceful close.
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	log.Printf("stopping on %v", <-sig)
	return nil
}

func readCredentials(flagName, path string) (*url.Userinfo, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", flagName, err)
	}
	defer f.Close()
	var lines []string
	s := bufio.NewScanner(f)
	for s.Scan() {
		lines = append(lines, s.Text())
	}
	if len(lines) < 2 || lines[0] == "" || lines[1] == "" {
		return nil, fmt.Errorf("%s %s: want the user name and the password, one a line", flagName, path)
	}
	return url.UserPassword(lines[0], lines[1]), nil
}

// tagPath is where the tagging API answers "get tag" (GET .../tag/id:<id>).
const tagPath = "/rest/com/vmware/cis/tagging/tag/id:"

// renameTags makes "get tag" report a renamed tag: to the CCM, a host or
// cluster tagged FROM then seems tagged TO, while the admin endpoint and
// the inventory keep the truth.
func renameTags(next http.Handler, rename renames) http.Handler {
	if len(rename) == 0 {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet || !strings.HasPrefix(r.URL.Path, tagPath) {
			next.ServeHTTP(w, r)
			return
		}
		rec := httptest.NewRecorder()
		next.ServeHTTP(rec, r)
		body := rec.Body.Bytes()
		var tag struct {
			Value map[string]any `json:"value"`
		}
		if rec.Code == http.StatusOK && json.Unmarshal(body, &tag) == nil {
			if name, _ := tag.Value["name"].(string); rename[name] != "" {
				log.Printf("fault: tag %s reads as %s to the CCM", name, rename[name])
				tag.Value["name"] = rename[name]
				body, _ = json.Marshal(tag)
			}
		}
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.Header().Del("Content-Length")
		w.WriteHeader(rec.Code)
		_, _ = bytes.NewReader(body).WriteTo(w)
	})
}
